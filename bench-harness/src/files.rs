//! Files written whole or not at all: into a temporary file beside the
//! target, renamed over it once complete. A failed write removes the
//! temporary file, so neither a half-written file nor debris is left; the
//! temporary file of a killed writer is removed by the next process that
//! locks the directory ([`sweep_temporaries`]).

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

/// Whether `name` is one of [`temporary`]'s names.
fn is_temporary(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    // `<stem>.<pid>-tmp` or `<stem>.<pid>-tmp.<ext>`.
    let before_ext = match rest.rsplit_once("-tmp") {
        Some((head, tail)) if tail.is_empty() || tail.starts_with('.') => head,
        _ => return false,
    };
    before_ext.rsplit_once('.').is_some_and(|(stem, pid)| {
        !stem.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Removes the temporary files a killed writer left in `dir` and returns
/// how many. Only for a directory this process has locked: then no other
/// writer is at work there.
pub fn sweep_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(is_temporary))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
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
    fn debris_of_a_killed_writer_is_swept_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let keep = [
            "results.csv",
            ".lock",
            ".hidden",
            ".a.12-tmpx",
            "a.12-tmp.png",
            ".x.-tmp",
        ];
        let debris = [
            temporary(&dir.path().join("results.csv.partial")),
            temporary(&dir.path().join("index.md")),
            temporary(&dir.path().join("throughput.png")),
            temporary(&dir.path().join("noext")),
        ];
        for f in keep {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        for f in &debris {
            std::fs::write(f, "x").unwrap();
        }
        assert_eq!(sweep_temporaries(dir.path()), debris.len());
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut kept = keep.map(str::to_string).to_vec();
        kept.sort();
        assert_eq!(left, kept);
    }

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
