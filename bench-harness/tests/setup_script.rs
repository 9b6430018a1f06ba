//! `scripts/setup.sh --check` finds libclang as the RocksDB bindings'
//! generator does, and never mistakes Clang's C++ library for it: a fresh
//! Debian machine has `libclang-cpp.so.14` and no libclang, and a check that
//! matched `libclang*.so*` skipped the install there.

use std::path::Path;
use std::process::Command;

fn setup_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/setup.sh")
}

/// Runs the check against a fake root holding `files`; true when found.
fn finds_libclang(files: &[&str]) -> bool {
    let root = tempfile::tempdir().unwrap();
    for f in files {
        let p = root.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"").unwrap();
    }
    let out = Command::new("bash")
        .arg(setup_script())
        .arg("--check")
        .env("SETUP_ROOT", root.path())
        .env_remove("LIBCLANG_PATH")
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "check exits 0 or 1, got {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    code == Some(0)
}

#[test]
fn only_clangs_cpp_library_counts_as_missing() {
    assert!(!finds_libclang(&["usr/lib/llvm-14/lib/libclang-cpp.so.14"]));
    assert!(!finds_libclang(&[
        "usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
        "usr/lib/x86_64-linux-gnu/libclang-cpp.so",
    ]));
}

#[test]
fn an_empty_tree_has_no_libclang() {
    assert!(!finds_libclang(&[]));
    assert!(!finds_libclang(&["usr/lib/llvm-14/lib/libLLVM-14.so"]));
}

#[test]
fn each_name_the_bindings_load_is_found() {
    for f in [
        "usr/lib/llvm-14/lib/libclang.so",
        "usr/lib/llvm-14/lib/libclang-14.so.1",
        "usr/lib/llvm-16/lib/libclang.so.1",
        "usr/lib/x86_64-linux-gnu/libclang-14.so",
        "usr/local/lib/libclang.so.16",
    ] {
        assert!(finds_libclang(&[f]), "{f} is a libclang");
    }
    // Beside the C++ library, as libclang-dev installs it.
    assert!(finds_libclang(&[
        "usr/lib/llvm-14/lib/libclang-cpp.so.14",
        "usr/lib/llvm-14/lib/libclang-14.so.14",
    ]));
}

#[test]
fn libclang_path_is_searched_first() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("libclang.so"), b"").unwrap();
    let empty_root = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(setup_script())
        .arg("--check")
        .env("SETUP_ROOT", empty_root.path())
        .env("LIBCLANG_PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}
