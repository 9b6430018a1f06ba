//! `scripts/cxx`, the build's C++ compiler (`.cargo/config.toml` sets
//! `CXX`): through ccache when the machine has it, straight to `c++` when it
//! has not, so a fresh machine without ccache still builds. Fake `c++` and
//! `ccache` on an otherwise empty `PATH` say which one ran.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Runs `scripts/cxx -c x.cc` with only `tools` (fakes that print their
/// name and arguments) on `PATH`; returns what was printed.
fn wrapper_runs(tools: &[&str]) -> String {
    let bin = tempfile::tempdir().unwrap();
    for tool in tools {
        let p = bin.path().join(tool);
        std::fs::write(&p, format!("#!/bin/sh\necho {tool} \"$@\"\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cxx = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cxx");
    let o = Command::new(cxx)
        .args(["-c", "x.cc"])
        .env("PATH", bin.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn without_ccache_it_runs_the_compiler_itself() {
    assert_eq!(wrapper_runs(&["c++"]), "c++ -c x.cc");
}

#[test]
fn with_ccache_it_compiles_through_it() {
    assert_eq!(wrapper_runs(&["c++", "ccache"]), "ccache c++ -c x.cc");
}
