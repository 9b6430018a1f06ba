//! Incremental RocksDB checkpoints (`execution.checkpointing.incremental`):
//! after a small change a checkpoint writes a small part of what a full one
//! does, its shared SST files go once no retained checkpoint lists them,
//! and a missing or damaged file is refused as bad input before anything
//! is written. (That an incremental checkpoint reads back to the canonical
//! image and resumes a run exactly is `checkpoint_resume.rs`.)

use operators::checkpoint::{native, store, Checkpoint, CheckpointStore};
use optimizer::session::{run_script, FromCheckpoint, InsertOutcome, RunError, RunOptions};
use std::collections::BTreeSet;
use std::path::Path;

/// 20,000 rows: the first 10,000 create a key each, the rest update 10 keys.
const AGG: &str = "
CREATE TABLE ev (n BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20000',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '19999',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '3');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO per_key
SELECT k, COUNT(*), SUM(v)
FROM (SELECT CASE WHEN n < 10000 THEN n ELSE MOD(n, 10) END AS k, v FROM ev)
GROUP BY k;
";

fn settings(backend: &str, incremental: bool, retained: u32, dir: &Path) -> Vec<(String, String)> {
    [
        ("state.backend.type", backend.to_string()),
        (
            "execution.checkpointing.incremental",
            incremental.to_string(),
        ),
        ("lab.clock", "deterministic".into()),
        ("lab.source.batch-size", "1000".into()),
        ("execution.checkpointing.interval", "5000 ms".into()),
        ("execution.checkpointing.dir", dir.display().to_string()),
        ("execution.checkpointing.num-retained", retained.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn run(set: &[(String, String)], from: Option<FromCheckpoint>) -> Result<InsertOutcome, RunError> {
    run_with(set, from, RunOptions::keep_all())
}

fn run_with(
    set: &[(String, String)],
    from: Option<FromCheckpoint>,
    opts: RunOptions,
) -> Result<InsertOutcome, RunError> {
    let opts = RunOptions {
        from_checkpoint: from,
        ..opts
    };
    let mut out = run_script(AGG, Path::new("."), set, opts, &mut |_, _| {})?;
    Ok(out.remove(0))
}

/// Checkpoint `id`'s `_metadata` as written (its RocksDB files not read).
fn metadata(dir: &Path, id: u64) -> (Checkpoint, u64) {
    let bytes = std::fs::read(CheckpointStore::new(dir, 1).path_of(id)).unwrap();
    (Checkpoint::decode(&bytes).unwrap(), bytes.len() as u64)
}

fn shared_listed(c: &Checkpoint) -> BTreeSet<String> {
    native::shared_names(c).map(str::to_string).collect()
}

fn shared_on_disk(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir.join(native::SHARED))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn after_a_small_change_an_incremental_checkpoint_writes_a_small_part_of_a_full_one() {
    let full_dir = tempfile::tempdir().unwrap();
    let inc_dir = tempfile::tempdir().unwrap();
    // No materialised result: a sink's result is in `_metadata` whichever
    // the kind of checkpoint; here only the operator's state differs.
    let changelog_only = || RunOptions {
        keep_changelog: true,
        ..RunOptions::default()
    };
    let full = run_with(
        &settings("rocksdb", false, 10, full_dir.path()),
        None,
        changelog_only(),
    )
    .unwrap();
    let inc = run_with(
        &settings("rocksdb", true, 10, inc_dir.path()),
        None,
        changelog_only(),
    )
    .unwrap();
    assert_eq!(full.changelog, inc.changelog);
    // Barriers after 5,000, 10,000, 15,000 and 20,000 rows, and one when
    // the input has ended.
    let ids = CheckpointStore::new(inc_dir.path(), 1).completed().unwrap();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(inc.report.checkpoints.taken, 5);
    assert!(inc.report.checkpoints.incremental);
    assert!(!full.report.checkpoints.incremental);

    // Checkpoint 3 follows 5,000 rows that changed 10 keys of 10,000.
    let (c2, _) = metadata(inc_dir.path(), 2);
    let (c3, meta3) = metadata(inc_dir.path(), 3);
    let before = shared_listed(&c2);
    let written: u64 = meta3
        + c3.files
            .iter()
            .filter(|f| {
                let shared = f.stored.rsplit('/').next().unwrap();
                !f.stored.starts_with("../") || !before.contains(shared)
            })
            .map(|f| f.size)
            .sum::<u64>();
    let all: u64 = meta3 + c3.files.iter().map(|f| f.size).sum::<u64>();
    let full3 = std::fs::metadata(CheckpointStore::new(full_dir.path(), 1).path_of(3))
        .unwrap()
        .len();
    // The state of 10,000 keys is some 700 KB in the canonical file.
    assert!(full3 > 500_000, "full checkpoint {full3} bytes");
    assert!(
        written * 10 < full3,
        "incremental checkpoint 3 wrote {written} bytes, a full one {full3}"
    );
    // Its files hold the whole state, as the full checkpoint does.
    assert!(all > full3 / 2, "all its files: {all} bytes");
    // Its state entries are recorded by column family, not copied.
    let agg = c3.operators.values().next().unwrap();
    assert!(agg
        .states
        .values()
        .all(|s| s.native.is_some() && s.entries.is_empty()));
    // Read back, the two checkpoints are the same canonical image.
    let full_c3 = store::read(&full_dir.path().join("chk-3")).unwrap();
    let inc_c3 = store::read(&inc_dir.path().join("chk-3")).unwrap();
    assert_eq!(full_c3.operators, inc_c3.operators);
    assert_eq!(full_c3.sinks, inc_c3.sinks);
}

#[test]
fn shared_files_go_with_the_last_checkpoint_that_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let whole = run(&settings("rocksdb", true, 1, dir.path()), None).unwrap();
    let ids = CheckpointStore::new(dir.path(), 1).completed().unwrap();
    assert_eq!(ids, [5]);
    let (c, _) = metadata(dir.path(), 5);
    assert!(!shared_listed(&c).is_empty());
    assert_eq!(shared_on_disk(dir.path()), shared_listed(&c));
    // A run resumed from it, with its own checkpoints, keeps the rule.
    let again = run(
        &settings("rocksdb", true, 1, dir.path()),
        Some(FromCheckpoint::Latest),
    )
    .unwrap();
    assert!(again.changelog.is_empty());
    assert_eq!(again.sink_report().result, whole.sink_report().result);
    let ids = CheckpointStore::new(dir.path(), 1).completed().unwrap();
    let (c, _) = metadata(dir.path(), *ids.last().unwrap());
    assert_eq!(shared_on_disk(dir.path()), shared_listed(&c));
}

#[test]
fn on_the_heap_the_key_takes_full_checkpoints_as_flink_s_heap_backend() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&settings("hashmap", true, 10, dir.path()), None).unwrap();
    assert!(!out.report.checkpoints.incremental);
    assert!(shared_on_disk(dir.path()).is_empty());
    let (c, _) = metadata(dir.path(), 4);
    assert!(c.files.is_empty());
}

#[test]
fn a_missing_or_damaged_rocksdb_file_is_refused_as_bad_input_before_any_output() {
    let dir = tempfile::tempdir().unwrap();
    run(&settings("rocksdb", true, 10, dir.path()), None).unwrap();
    let chk = dir.path().join("chk-3");
    let (c, _) = metadata(dir.path(), 3);
    let sst = c
        .files
        .iter()
        .filter(|f| f.stored.starts_with("../"))
        .max_by_key(|f| f.size)
        .unwrap();
    let path = chk.join(&sst.stored);
    let good = std::fs::read(&path).unwrap();
    let out = tempfile::tempdir().unwrap();
    let refused = |what: &str| {
        let set = settings("rocksdb", true, 10, out.path());
        let e = run(&set, Some(FromCheckpoint::Path(&chk)))
            .err()
            .unwrap_or_else(|| panic!("{what}: ran"));
        assert_eq!(e.exit_code(), 2, "{what}: {e}");
        assert!(
            CheckpointStore::new(out.path(), 1)
                .completed()
                .unwrap()
                .is_empty(),
            "{what}: wrote a checkpoint"
        );
        e.to_string()
    };

    std::fs::remove_file(&path).unwrap();
    let m = refused("missing");
    assert!(m.contains("is missing") && m.contains(&sst.name), "{m}");

    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let m = refused("truncated");
    assert!(m.contains("where the checkpoint recorded"), "{m}");

    let mut bad = good.clone();
    let at = bad.len() / 3;
    bad[at] ^= 0xff;
    std::fs::write(&path, &bad).unwrap();
    let m = refused("corrupt");
    assert!(m.contains("cannot be restored"), "{m}");

    // A file list that points outside the checkpoint's directories.
    std::fs::write(&path, &good).unwrap();
    let mut hostile = c.clone();
    hostile.files[0].stored = "../../etc/passwd".into();
    let meta = chk.join("_metadata");
    std::fs::write(&meta, hostile.encode()).unwrap();
    let m = refused("hostile path");
    assert!(m.contains("is not a file of a checkpoint"), "{m}");
}
