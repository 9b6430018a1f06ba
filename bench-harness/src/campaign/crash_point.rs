//! Deterministic kill points for the crash-safety tests: with
//! `LAB_CRASH_AT=<point>` in its environment, `lab campaign` aborts (as a
//! `kill -9` would: no destructor runs, no buffer is flushed) the moment
//! it passes that point. Points: `run:<n>` (after the n-th run's rows are
//! written), `history` (after the first file of the previous run moved to
//! `history/`), `finalize` (with every run written, before the partial
//! file becomes `results.csv`), `results` (right after), `chart` (after
//! the first chart is drawn), `baseline` (between the two renames of
//! `--save-baseline`). Tests in `bench-harness/tests/campaign_crash.rs`
//! kill at each and resume. Unset, this costs one environment lookup.

use std::sync::OnceLock;

/// The environment variable that names the point.
pub const VAR: &str = "LAB_CRASH_AT";

fn target() -> Option<&'static str> {
    static TARGET: OnceLock<Option<String>> = OnceLock::new();
    TARGET
        .get_or_init(|| std::env::var(VAR).ok().filter(|v| !v.is_empty()))
        .as_deref()
}

/// Aborts the process when `point` is the one asked for.
pub fn reached(point: &str) {
    if target() == Some(point) {
        crate::output::err(&format!(
            "lab campaign: aborting at crash point '{point}' ({VAR})\n"
        ));
        std::process::abort();
    }
}

/// Aborts after the `n`-th run (1-based) when `run:<n>` is asked for.
pub fn run_done(n: usize) {
    if let Some(rest) = target().and_then(|t| t.strip_prefix("run:")) {
        if rest.parse() == Ok(n) {
            reached(&format!("run:{n}"));
        }
    }
}
