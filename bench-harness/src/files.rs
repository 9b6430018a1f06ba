//! Files written whole or not at all: into a temporary file beside the
//! target, renamed over it once complete. A failed write removes the
//! temporary file, so neither a half-written file nor debris is left.

use std::path::{Path, PathBuf};

/// The temporary name `path` is written under, beside it: hidden, marked
/// with the writing process, and with the same extension (the chart
/// backends choose the image format by it): `.<stem>.<pid>-tmp.<ext>`.
pub fn temporary(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = std::process::id();
    path.with_file_name(match path.extension() {
        Some(ext) => format!(".{stem}.{pid}-tmp.{}", ext.to_string_lossy()),
        None => format!(".{stem}.{pid}-tmp"),
    })
}

/// Writes `bytes` to `path` through a temporary file; the error names
/// `path` and what failed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = temporary(path);
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// Writes `path` through a temporary file with `write`, which gets the
/// temporary path (for writers that open files themselves, such as the
/// chart backends).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let tmp = temporary(path);
    let result = write(&tmp).and_then(|_| {
        std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        write_atomic(&target, b"one").unwrap();
        let e = write_atomic_with(&target, |tmp| {
            std::fs::write(tmp, b"half").unwrap();
            Err("the device is full".to_string())
        })
        .unwrap_err();
        assert_eq!(e, "the device is full");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }
}
