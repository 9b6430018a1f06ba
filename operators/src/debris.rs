//! What a killed run leaves behind, and how the next run removes it.
//!
//! A run's RocksDB directories and the temporary files it writes outputs
//! through carry its process id in their names
//! (`joinlab-rocksdb-<pid>-<random>`, `.<name>.<pid>-<n>.tmp`). A run
//! that ends normally, or fails, removes its own; one killed with SIGKILL
//! cannot. So whoever creates such a directory or file next removes, in
//! the same parent directory, every one whose process is gone. One of a
//! live process is never touched: runs may share a directory. A process
//! id reused by a live process keeps its debris until that process ends
//! too (never removing another run's files matters more).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether process `pid` is certainly gone. Where that cannot be told
/// (no `/proc`), nothing is ever swept.
pub fn process_gone(pid: u32) -> bool {
    pid != std::process::id()
        && Path::new("/proc/self").exists()
        && !Path::new("/proc").join(pid.to_string()).exists()
}

/// The process id in `rest` when it is `<digits>` followed by one of
/// `ends`' characters.
fn leading_pid(rest: &str, ends: &[char]) -> Option<u32> {
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after = rest[digits..].chars().next()?;
    if digits == 0 || !ends.contains(&after) {
        return None;
    }
    rest[..digits].parse().ok()
}

/// A new directory `<prefix><pid>-<random>` under `parent` (created),
/// removed when the returned handle drops; the directories of `prefix`
/// left by processes that are gone are removed first.
pub fn owned_temp_dir(parent: &Path, prefix: &str) -> std::io::Result<tempfile::TempDir> {
    std::fs::create_dir_all(parent)?;
    sweep_dirs(parent, prefix);
    tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(parent)
}

/// Removes the directories `<prefix><pid>-*` under `parent` whose process
/// is gone; returns how many.
pub fn sweep_dirs(parent: &Path, prefix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(prefix))
                .and_then(|rest| leading_pid(rest, &['-']))
                .is_some_and(process_gone)
        })
        .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
        .count()
}

/// The temporary file `target` is written through, beside it:
/// `.<name>.<pid>-<n>.tmp` (the counter keeps this process's writers
/// apart).
pub fn temp_file_for(target: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The process id of one of [`temp_file_for`]'s names.
fn temp_file_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (head, counter) = inner.rsplit_once('-')?;
    if counter.is_empty() || !counter.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (stem, pid) = head.rsplit_once('.')?;
    if stem.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the temporary files ([`temp_file_for`]) in `dir` whose process
/// is gone; returns how many.
pub fn sweep_temp_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(temp_file_pid)
                .is_some_and(process_gone)
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process id that is not running: a child that has been reaped.
    fn gone_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn names_carry_the_process_id() {
        let t = temp_file_for(Path::new("/x/result.csv"));
        let name = t.file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_file_pid(name), Some(std::process::id()));
        assert_eq!(temp_file_pid(".a.b.12-3.tmp"), Some(12));
        for other in [
            "a.12-3.tmp",
            ".12-3.tmp",
            ".a.12-.tmp",
            ".a.x-3.tmp",
            ".a.12-3.tmpx",
        ] {
            assert_eq!(temp_file_pid(other), None, "{other}");
        }
        assert_eq!(leading_pid("123-abc", &['-']), Some(123));
        assert_eq!(leading_pid("abc123", &['-']), None);
        assert_eq!(leading_pid("123456", &['-']), None);
    }

    #[test]
    fn only_what_a_gone_process_left_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        let gone = gone_pid();
        let me = std::process::id();
        let swept = [
            format!("joinlab-rocksdb-{gone}-abc123"),
            format!(".result.csv.{gone}-0.tmp"),
        ];
        let kept = [
            format!("joinlab-rocksdb-{me}-abc123"),
            "joinlab-rocksdb-abc123".to_string(),
            format!(".result.csv.{me}-0.tmp"),
            format!("result.csv.{gone}-0.tmp"),
            "result.csv".to_string(),
        ];
        for name in swept.iter().chain(&kept) {
            let p = dir.path().join(name);
            if name.starts_with("joinlab-") {
                std::fs::create_dir(&p).unwrap();
                std::fs::write(p.join("CURRENT"), "x").unwrap();
            } else {
                std::fs::write(&p, "x").unwrap();
            }
        }
        assert!(process_gone(gone));
        assert!(!process_gone(me));
        assert_eq!(sweep_dirs(dir.path(), "joinlab-rocksdb-"), 1);
        assert_eq!(sweep_temp_files(dir.path()), 1);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = kept.to_vec();
        want.sort();
        assert_eq!(left, want);
        let owned = owned_temp_dir(dir.path(), "joinlab-rocksdb-").unwrap();
        let name = owned.path().file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with(&format!("joinlab-rocksdb-{me}-")),
            "{name}"
        );
    }
}
