//! `lab run --changelog` streams the changelog to its file as the sink
//! receives it: the process's memory does not grow with the changelog's
//! length, and the file holds every change, appearing only once the run is
//! complete.
//!
//! Memory is the child's peak resident set (`VmHWM` in
//! `/proc/<pid>/status`), sampled while it runs: it only grows, so the
//! last sample before exit is the peak up to then.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

/// Runs the demo aggregate over `rows` rows with `--changelog`; returns
/// the peak RSS in KiB and the number of lines of the changelog file.
fn run_with_changelog(rows: u64, dir: &Path) -> (u64, usize) {
    let file = dir.join(format!("changes-{rows}.csv"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("run")
        .arg(examples().join("demo_agg.sql"))
        .args(["--param", &format!("rows={rows}")])
        // Many keys, little skew: nearly every row updates a group, so the
        // changelog has about two rows per input row.
        .args(["--param", "keys=1000", "--param", "skew=0.5", "--quiet"])
        .arg("--changelog")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    (peak, text.lines().count())
}

#[test]
fn memory_does_not_grow_with_the_changelog() {
    let dir = tempfile::tempdir().unwrap();
    let (small_peak, small_lines) = run_with_changelog(200_000, dir.path());
    let (large_peak, large_lines) = run_with_changelog(1_000_000, dir.path());
    // A header and about two rows per input row (+I, or -U and +U).
    assert!(small_lines > 300_000, "{small_lines} lines");
    assert!(large_lines > 1_500_000, "{large_lines} lines");
    // Kept in memory, the 1.6M more changelog rows would take hundreds of
    // MiB (about 450 bytes per input row); streamed, the peaks differ by
    // allocator noise.
    assert!(
        large_peak < small_peak + 32 * 1024,
        "peak RSS {small_peak} KiB at 200k rows, {large_peak} KiB at 1M rows"
    );
}

#[test]
fn the_streamed_changelog_is_the_whole_changelog_and_no_temporary_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("run")
        .arg(examples().join("clicks_per_user.sql"))
        .arg("--changelog")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    // Three INSERTs: a file per sink, each with its header and every change.
    for (sink, changes) in [
        ("clicks_per_user", 229),
        ("clicks_per_user_upsert", 120),
        ("users_per_click_count", 343),
    ] {
        let text = std::fs::read_to_string(dir.path().join(format!("c-{sink}.csv"))).unwrap();
        assert_eq!(text.lines().count(), changes + 1, "{sink}");
        assert!(text.starts_with("op,"), "{text}");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "c-clicks_per_user.csv",
            "c-clicks_per_user_upsert.csv",
            "c-users_per_click_count.csv"
        ]
    );
}
