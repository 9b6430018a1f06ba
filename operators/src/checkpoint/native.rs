//! Incremental checkpoints on RocksDB (`execution.checkpointing.incremental`),
//! as Flink's RocksDB backend takes them: instead of copying every entry
//! into `_metadata`, a checkpoint keeps RocksDB's own files. SST files are
//! immutable, so a file that an earlier checkpoint of the same run already
//! holds is referenced again, not written again: a checkpoint after a
//! small change adds the few SST files the flush and compactions made
//! since, plus the small MANIFEST, CURRENT and OPTIONS files.
//!
//! Layout under the checkpoint directory, as Flink's:
//! - `shared/<run>-<sst>`: SST files, shared by the checkpoints that list
//!   them (`<run>` tells apart two runs' databases, whose SST numbers
//!   restart);
//! - `chk-<id>/private/`: the checkpoint's MANIFEST, CURRENT, OPTIONS;
//! - `chk-<id>/_metadata`: as a full checkpoint's, with each RocksDB
//!   state recorded by its column family ([`super::StateImage::native`])
//!   and the list of files with their sizes ([`NativeFile`]).
//!
//! A shared file is deleted when no retained checkpoint lists it
//! ([`super::store`]). Reading a checkpoint puts its files together in a
//! scratch directory, opens them read-only and fills each state's entries,
//! so what is restored, by either backend at any parallelism, is the
//! canonical image a full checkpoint holds (the first checkpoint after a
//! resume is therefore a full set of files again: the restored database is
//! a new one).

use super::error::CheckpointError;
use super::format::Checkpoint;
pub use super::image::NativeFile;
use crate::state::rocksdb::CheckpointDb;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The directory, beside the `chk-<id>` directories, of shared SST files.
pub const SHARED: &str = "shared";
const PRIVATE: &str = "private";

/// The SST files this run has put into `shared/`, by their database name.
#[derive(Debug)]
pub struct SharedFiles {
    run: String,
    by_name: HashMap<String, String>,
}

/// What [`share`] put where, and how many bytes it wrote.
pub struct Shared {
    pub files: Vec<NativeFile>,
    /// Bytes of the files new in this checkpoint (private ones included).
    pub new_bytes: u64,
    /// Bytes of every file the checkpoint lists.
    pub all_bytes: u64,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |error| CheckpointError::Io {
        path: path.display().to_string(),
        error,
    }
}

impl Default for SharedFiles {
    fn default() -> SharedFiles {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        SharedFiles {
            run: format!("{:x}{:x}", std::process::id(), nanos & 0xffff_ffff_ffff),
            by_name: HashMap::new(),
        }
    }
}

/// Files the RocksDB checkpoint in `staged` (inside the in-progress
/// checkpoint directory `chk_tmp`) into place: SST files not shared yet
/// move to `shared/`, those shared already are dropped from the staging
/// copy, the rest move to `chk_tmp/private/`. `staged` is gone afterwards.
pub fn share(
    staged: &Path,
    chk_tmp: &Path,
    shared: &mut SharedFiles,
) -> Result<Shared, CheckpointError> {
    let base = chk_tmp.parent().unwrap_or(Path::new("."));
    let shared_dir = base.join(SHARED);
    let private = chk_tmp.join(PRIVATE);
    std::fs::create_dir_all(&shared_dir).map_err(io(&shared_dir))?;
    std::fs::create_dir_all(&private).map_err(io(&private))?;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(staged).map_err(io(staged))? {
        let entry = entry.map_err(io(staged))?;
        if let Some(n) = entry.file_name().to_str() {
            names.push(n.to_string());
        }
    }
    names.sort();
    let mut out = Shared {
        files: Vec::new(),
        new_bytes: 0,
        all_bytes: 0,
    };
    let mut live = HashMap::new();
    for name in names {
        let from = staged.join(&name);
        let size = std::fs::metadata(&from).map_err(io(&from))?.len();
        let stored = if name.ends_with(".sst") {
            let file = match shared.by_name.get(&name) {
                Some(f) if shared_dir.join(f).is_file() => {
                    std::fs::remove_file(&from).map_err(io(&from))?;
                    f.clone()
                }
                _ => {
                    let f = format!("{}-{name}", shared.run);
                    let to = shared_dir.join(&f);
                    std::fs::rename(&from, &to).map_err(io(&to))?;
                    out.new_bytes += size;
                    f
                }
            };
            live.insert(name.clone(), file.clone());
            format!("../{SHARED}/{file}")
        } else {
            let to = private.join(&name);
            std::fs::rename(&from, &to).map_err(io(&to))?;
            out.new_bytes += size;
            format!("{PRIVATE}/{name}")
        };
        out.all_bytes += size;
        out.files.push(NativeFile { name, stored, size });
    }
    // SST files compacted away are never live again (their numbers are
    // not reused): forget them.
    shared.by_name = live;
    std::fs::remove_dir(staged).map_err(io(staged))?;
    Ok(out)
}

/// The shared files checkpoint `c` lists, by their name in `shared/`.
pub fn shared_names(c: &Checkpoint) -> impl Iterator<Item = &str> {
    c.files.iter().filter_map(|f| {
        f.stored
            .strip_prefix("../")
            .and_then(|s| s.strip_prefix(SHARED))
            .and_then(|s| s.strip_prefix('/'))
    })
}

/// Where file `f` of the checkpoint in `chk_dir` is; `None` for a path
/// that is not one of the two the format allows (a hostile file must not
/// make the lab read elsewhere).
fn located(chk_dir: &Path, f: &NativeFile) -> Option<PathBuf> {
    let plain = |n: &str| !n.is_empty() && !n.contains(['/', '\\']) && n != "." && n != "..";
    if !plain(&f.name) {
        return None;
    }
    if let Some(n) = f.stored.strip_prefix(&format!("{PRIVATE}/")) {
        return plain(n).then(|| chk_dir.join(PRIVATE).join(n));
    }
    let n = f.stored.strip_prefix(&format!("../{SHARED}/"))?;
    plain(n).then(|| {
        chk_dir
            .parent()
            .unwrap_or(Path::new("."))
            .join(SHARED)
            .join(n)
    })
}

/// Fills the entries of every state `c` recorded by reference from its
/// RocksDB files, found from `chk_dir` (the `chk-<id>` directory `c` was
/// read from), and drops the file list. `shown` names the checkpoint in
/// errors.
pub fn materialize(c: &mut Checkpoint, chk_dir: &Path, shown: &str) -> Result<(), CheckpointError> {
    let wanted = c
        .operators
        .values()
        .flat_map(|o| o.states.values())
        .any(|s| s.native.is_some());
    if !wanted {
        c.files.clear();
        return Ok(());
    }
    let corrupt = |reason: String| CheckpointError::Corrupt {
        path: shown.to_string(),
        reason,
    };
    // Removed when dropped; a killed restore's is swept by the next.
    let tmp = std::env::temp_dir();
    let scratch = crate::debris::owned_temp_dir(&tmp, "joinlab-restore-").map_err(io(&tmp))?;
    for f in &c.files {
        let Some(from) = located(chk_dir, f) else {
            return Err(corrupt(format!(
                "file '{}' stored at '{}' is not a file of a checkpoint",
                f.name, f.stored
            )));
        };
        match std::fs::metadata(&from) {
            Ok(m) if m.len() == f.size => {}
            Ok(m) => {
                return Err(corrupt(format!(
                    "{} has {} bytes where the checkpoint recorded {}",
                    from.display(),
                    m.len(),
                    f.size
                )))
            }
            Err(_) => return Err(corrupt(format!("its file {} is missing", from.display()))),
        }
        let to = scratch.path().join(&f.name);
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(io(&to))?;
        }
    }
    let db = CheckpointDb::open(scratch.path())
        .map_err(|e| corrupt(format!("its RocksDB files do not open: {e}")))?;
    for op in c.operators.values_mut() {
        for s in op.states.values_mut() {
            let Some(n) = s.native.take() else { continue };
            let arity = s.map.then_some(n.ukey_arity);
            let rows = db.entries(&n.column_family, arity).map_err(|e| {
                corrupt(format!(
                    "column family '{}' does not read: {e}",
                    n.column_family
                ))
            })?;
            for (k, u, v) in rows {
                s.insert(k, u, v);
            }
        }
    }
    // What is left is the canonical image a full checkpoint holds.
    c.files.clear();
    Ok(())
}
