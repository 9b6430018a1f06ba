//! Standard output and standard error as writes that can fail.
//!
//! `println!` panics when stdout cannot be written (`lab explain > /dev/full`
//! exited 101); here a failed write is an error the command returns, with
//! a message and exit code 3 (`crate::exit_code`), after the files it writes are complete.
//!
//! - [`out`] writes and flushes stdout; an error says "cannot write to
//!   standard output". A closed pipe (`lab run ... | head`) is not an
//!   error: the rest of the output is dropped and the command finishes its
//!   work and exits as it would have.
//! - [`err`] writes to stderr, best effort: warnings and progress must not
//!   stop a run. A failed write is remembered ([`stderr_failed`]) so that
//!   `lab` still exits non-zero.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// stdout was closed by its reader: nothing more is written to it.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// A write to stderr failed.
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// A failed write to standard output.
#[derive(Debug)]
pub struct OutputError(pub std::io::Error);

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

/// Writes `text` to stdout and flushes it.
pub fn out(text: &str) -> Result<(), OutputError> {
    write_to(&mut std::io::stdout().lock(), text)
}

/// [`out`] on any writer (tests inject failing ones).
pub fn write_to(w: &mut impl Write, text: &str) -> Result<(), OutputError> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    match w.write_all(text.as_bytes()).and_then(|_| w.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(OutputError(e)),
    }
}

/// Writes `text` to stderr, remembering a failure instead of panicking.
pub fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    if e.write_all(text.as_bytes())
        .and_then(|_| e.flush())
        .is_err()
    {
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
}

/// Whether a write to stderr failed.
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::Relaxed)
}

/// `outln!("...", args)`: one line to stdout, `?`-able.
#[doc(hidden)]
#[macro_export]
macro_rules! __outln {
    ($($arg:tt)*) => {
        $crate::output::out(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `errln!("...", args)`: one line to stderr, best effort.
#[doc(hidden)]
#[macro_export]
macro_rules! __errln {
    ($($arg:tt)*) => {
        $crate::output::err(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub use crate::__errln as errln;
pub use crate::__outln as outln;

#[cfg(test)]
mod tests {
    use super::*;

    /// A device with no room left.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(28))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_device_is_an_error_that_says_so() {
        let e = write_to(&mut Full, "hello\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot write to standard output: No space left on device"),
            "{e}"
        );
    }
}
