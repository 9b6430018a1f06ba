//! One writer per report directory: `lab campaign` and `lab plot` hold an
//! exclusive lock on `<report>/.lock` while they write there, so a second
//! campaign on the same directory is refused (with the process that holds
//! it) instead of interleaving rows with the first.
//!
//! The lock is an advisory `flock` on the file, which the kernel releases
//! when its process ends, killed or not: a lock left by a dead process is
//! simply taken over. The file itself stays (deleting it would let a third
//! process lock a fresh file while a second still holds the old one); it
//! holds the owner's process id and command while locked and is emptied
//! on release, so a non-empty file found unlocked names a process that
//! died holding it.

use super::CampaignError;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file of a report directory.
pub const LOCK: &str = ".lock";

/// A held lock on a report directory; released when dropped (or when the
/// process ends).
#[derive(Debug)]
pub struct ReportLock {
    file: File,
    /// Whom the lock was taken over from: the owner recorded by a process
    /// that ended without releasing it.
    pub taken_over_from: Option<String>,
}

impl ReportLock {
    /// Locks `dir` (which must exist) for `what` (e.g. `lab campaign
    /// c.toml`), or says which process holds it.
    pub fn acquire(dir: &Path, what: &str) -> Result<ReportLock, CampaignError> {
        let path = dir.join(LOCK);
        let io = |action: &str, e: std::io::Error| {
            CampaignError::execution(format!("cannot {action} {}: {e}", path.display()))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("open the lock file", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let owner = read_owner(&mut file);
                return Err(CampaignError::input(format!(
                    "{} is in use: {} is writing there ({}); wait for it to finish, or choose \
                     another report directory with --out",
                    dir.display(),
                    owner.as_deref().unwrap_or("another lab process"),
                    path.display()
                )));
            }
            Err(TryLockError::Error(e)) => return Err(io("lock", e)),
        }
        let taken_over_from = read_owner(&mut file);
        let record = format!(
            "process {} ({what}), since {}\n",
            std::process::id(),
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
        file.set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(record.as_bytes()))
            .and_then(|_| file.flush())
            .map_err(|e| io("write", e))?;
        Ok(ReportLock {
            file,
            taken_over_from,
        })
    }

    /// The lock file of `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(LOCK)
    }
}

/// The owner a lock file names, if any.
fn read_owner(file: &mut File) -> Option<String> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    // A few hundred bytes name the owner; never read more.
    file.take(1024).read_to_string(&mut text).ok()?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_string())
}

impl Drop for ReportLock {
    fn drop(&mut self) {
        // Emptied first: once unlocked, a non-empty file means a dead owner.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_owner_and_a_released_one_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let first = ReportLock::acquire(dir.path(), "lab campaign a.toml").unwrap();
        assert_eq!(first.taken_over_from, None);
        let e = ReportLock::acquire(dir.path(), "lab campaign b.toml").unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("is in use"), "{}", e.message);
        assert!(
            e.message.contains(&format!(
                "process {} (lab campaign a.toml)",
                std::process::id()
            )),
            "{}",
            e.message
        );
        drop(first);
        let again = ReportLock::acquire(dir.path(), "lab campaign b.toml").unwrap();
        assert_eq!(
            again.taken_over_from, None,
            "a released lock names no owner"
        );
    }

    #[test]
    fn the_lock_of_a_dead_process_is_taken_over() {
        // What a killed owner leaves: the file with its record, unlocked.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            ReportLock::path(dir.path()),
            "process 999999 (lab campaign c.toml), since 2026-01-01T00:00:00Z\n",
        )
        .unwrap();
        let lock = ReportLock::acquire(dir.path(), "lab campaign c.toml").unwrap();
        assert_eq!(
            lock.taken_over_from.as_deref(),
            Some("process 999999 (lab campaign c.toml), since 2026-01-01T00:00:00Z")
        );
    }
}
