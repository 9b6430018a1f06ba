//! The checkpoint directory (`execution.checkpointing.dir`): one directory
//! `chk-<id>` per completed checkpoint holding its `_metadata` file, as
//! Flink lays them out. A checkpoint is written into `chk-<id>.inprogress`
//! and renamed when its file is complete and synced, so a run killed while
//! writing leaves nothing that looks complete; only the newest
//! `num-retained` are kept, with the shared files of incremental
//! checkpoints ([`super::native`]) that they list.

pub use super::error::CheckpointError;
use super::format::Checkpoint;
use super::native;
use std::io::Write;
use std::path::{Path, PathBuf};

const METADATA: &str = "_metadata";
const PREFIX: &str = "chk-";
const IN_PROGRESS: &str = ".inprogress";

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |error| CheckpointError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// A checkpoint directory and how many checkpoints it keeps.
#[derive(Clone, Debug)]
pub struct CheckpointStore {
    dir: PathBuf,
    retained: usize,
}

impl CheckpointStore {
    pub fn new(dir: impl Into<PathBuf>, retained: usize) -> CheckpointStore {
        CheckpointStore {
            dir: dir.into(),
            retained: retained.max(1),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The ids of the completed checkpoints, oldest first.
    pub fn completed(&self) -> Result<Vec<u64>, CheckpointError> {
        let mut ids = Vec::new();
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ids),
            Err(e) => return Err(io(&self.dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io(&self.dir))?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            if entry.path().join(METADATA).is_file() {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// The path of checkpoint `id`'s file.
    pub fn path_of(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{PREFIX}{id}")).join(METADATA)
    }

    /// The newest completed checkpoint's file.
    pub fn latest(&self) -> Result<PathBuf, CheckpointError> {
        match self.completed()?.last() {
            Some(&id) => Ok(self.path_of(id)),
            None => Err(CheckpointError::Missing(format!(
                "{} (no completed checkpoint in it)",
                self.dir.display()
            ))),
        }
    }

    /// Writes `c` as checkpoint `c.id`, then drops the oldest beyond the
    /// number retained. Returns the file's size in bytes.
    pub fn write(&self, c: &Checkpoint) -> Result<u64, CheckpointError> {
        let tmp = self.begin(c.id)?;
        self.finish(&tmp, c)
    }

    /// Starts checkpoint `id`: an empty `chk-<id>.inprogress` directory
    /// (an incremental checkpoint files RocksDB's files into it first).
    pub fn begin(&self, id: u64) -> Result<PathBuf, CheckpointError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let tmp = self.dir.join(format!("{PREFIX}{id}{IN_PROGRESS}"));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
        }
        std::fs::create_dir(&tmp).map_err(io(&tmp))?;
        Ok(tmp)
    }

    /// Completes the checkpoint begun in `tmp`: writes `c`'s `_metadata`,
    /// renames the directory into place, drops the oldest checkpoints
    /// beyond the number retained and the shared files none of the rest
    /// lists. Returns the `_metadata` file's size in bytes.
    pub fn finish(&self, tmp: &Path, c: &Checkpoint) -> Result<u64, CheckpointError> {
        let done = self.dir.join(format!("{PREFIX}{}", c.id));
        let bytes = write_metadata(tmp, c)?;
        if done.exists() {
            std::fs::remove_dir_all(&done).map_err(io(&done))?;
        }
        std::fs::rename(tmp, &done).map_err(io(&done))?;
        let ids = self.completed()?;
        if ids.len() > self.retained {
            for id in &ids[..ids.len() - self.retained] {
                let old = self.dir.join(format!("{PREFIX}{id}"));
                std::fs::remove_dir_all(&old).map_err(io(&old))?;
            }
        }
        self.drop_unlisted_shared_files()?;
        Ok(bytes)
    }

    /// Deletes the files in `shared/` that no completed checkpoint lists;
    /// deletes nothing if one of them does not read.
    fn drop_unlisted_shared_files(&self) -> Result<(), CheckpointError> {
        let shared = self.dir.join(native::SHARED);
        let Ok(entries) = std::fs::read_dir(&shared) else {
            return Ok(());
        };
        let mut listed = std::collections::HashSet::new();
        for id in self.completed()? {
            let Ok(bytes) = std::fs::read(self.path_of(id)) else {
                return Ok(());
            };
            let Ok(c) = Checkpoint::decode(&bytes) else {
                return Ok(());
            };
            listed.extend(native::shared_names(&c).map(str::to_string));
        }
        for entry in entries {
            let entry = entry.map_err(io(&shared))?;
            let listed = entry
                .file_name()
                .to_str()
                .is_some_and(|n| listed.contains(n));
            if !listed {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
        }
        Ok(())
    }
}

/// Writes `c`'s `_metadata` file into directory `tmp`, synced. Returns
/// the file's size in bytes.
fn write_metadata(tmp: &Path, c: &Checkpoint) -> Result<u64, CheckpointError> {
    let bytes = c.encode();
    let file = tmp.join(METADATA);
    let mut f = std::fs::File::create(&file).map_err(io(&file))?;
    f.write_all(&bytes).map_err(io(&file))?;
    f.sync_all().map_err(io(&file))?;
    Ok(bytes.len() as u64)
}

/// Writes `c` as a savepoint: a self-contained directory
/// `<dir>/savepoint-<rows>` (`rows`: input rows read when it was taken)
/// holding its `_metadata`, written under a temporary name and renamed
/// when complete. An existing savepoint is never replaced. Returns the
/// directory and the file's size in bytes.
pub fn write_savepoint(
    dir: &Path,
    rows: u64,
    c: &Checkpoint,
) -> Result<(PathBuf, u64), CheckpointError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let done = dir.join(format!("savepoint-{rows}"));
    if done.exists() {
        return Err(CheckpointError::Unsupported(format!(
            "savepoint {} exists already; give another --savepoint-dir",
            done.display()
        )));
    }
    let tmp = dir.join(format!("savepoint-{rows}{IN_PROGRESS}"));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    let bytes = write_metadata(&tmp, c)?;
    std::fs::rename(&tmp, &done).map_err(io(&done))?;
    Ok((done, bytes))
}

/// Reads the checkpoint at `path`: a `_metadata` file, or a `chk-<id>`
/// directory holding one; the states of an incremental checkpoint are read
/// from its RocksDB files ([`native::materialize`]). Never panics on a bad
/// file.
pub fn read(path: &Path) -> Result<Checkpoint, CheckpointError> {
    let (file, chk_dir) = if path.is_dir() {
        (path.join(METADATA), path.to_path_buf())
    } else {
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        (path.to_path_buf(), dir)
    };
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CheckpointError::Missing(file.display().to_string()))
        }
        Err(e) => return Err(io(&file)(e)),
    };
    let shown = file.display().to_string();
    let mut c = Checkpoint::decode(&bytes).map_err(|reason| CheckpointError::Corrupt {
        path: shown.clone(),
        reason,
    })?;
    native::materialize(&mut c, &chk_dir, &shown)?;
    Ok(c)
}
