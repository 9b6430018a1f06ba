//! The lab's global allocator: mimalloc, asked for plain blocks.
//!
//! Rows are many small `Vec`s. The `mimalloc` crate sends every Rust
//! allocation to mimalloc's aligned entry point, which in mimalloc 3 falls
//! back to over-allocation (a larger block, the slow path) whenever a size
//! that is not a power of two, such as a 72-byte row, finds its free list
//! empty. Every mimalloc block is aligned to a machine word, so requests
//! that need no more than that take the plain entry points; larger
//! alignments keep the aligned ones. Binaries and benches that time
//! operators install it:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;
//! ```

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Alignment of every block mimalloc hands out.
const WORD: usize = std::mem::size_of::<usize>();

pub struct LabAllocator;

// SAFETY: mimalloc returns blocks of at least the requested size, aligned
// to a word by the plain entry points and to `align` by the aligned ones;
// `mi_free`/`mi_realloc` accept blocks from either.
unsafe impl GlobalAlloc for LabAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr.cast::<c_void>());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
        }
    }
}
