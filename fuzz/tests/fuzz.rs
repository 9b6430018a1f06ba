//! The fuzz harness in the test suite: every saved case of the regression
//! corpus (`fuzz/corpus/`) replays without a crash, and a bounded run of
//! 30,000 generated inputs finds none (no panic, abort, stack overflow,
//! allocation failure or hang). Compiled plans have their own test: every
//! plan that passes validation on load runs without a panic.
//!
//! The bounded run is seeded (`FUZZ_SEED`, default 1): the same inputs on
//! every machine; a failure names its seed and index, and `lab-fuzz show`
//! or `lab-fuzz run --findings DIR` saves it as a case.

use fuzz::case::{cases_under, Category};
use fuzz::parent::{self, Amount, Options, Report};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn options(amount: Amount, work: &Path) -> Options {
    Options {
        exe: PathBuf::from(env!("CARGO_BIN_EXE_lab-fuzz")),
        seed: std::env::var("FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1),
        amount,
        jobs: 2,
        batch: 500,
        budget: Duration::from_secs(30),
        stack: fuzz::STACK_KIB * 1024,
        findings: None,
        minimize: false,
        progress: false,
        work: work.to_path_buf(),
    }
}

/// No failure, or the report (with every failure's input) in the message.
fn assert_no_failure(report: &Report) {
    assert!(report.failures.is_empty(), "{}", fuzz::describe(report));
}

fn cases_of(keep: impl Fn(Category) -> bool) -> Vec<PathBuf> {
    cases_under(&corpus())
        .into_iter()
        .filter(|c| {
            fuzz::case::Input::load(c)
                .map(|i| keep(i.category))
                .unwrap_or(true)
        })
        .collect()
}

#[test]
fn the_corpus_replays_without_a_crash() {
    let cases = cases_of(|c| c != Category::Plan);
    assert!(cases.len() >= 20, "{cases:?}");
    let work = tempfile::tempdir().unwrap();
    let report = parent::replay(
        &options(Amount::Replay(Vec::new()), work.path()),
        cases.clone(),
    );
    println!("{}", fuzz::describe(&report));
    assert_no_failure(&report);
    assert_eq!(report.total(), cases.len() as u64);
}

#[test]
fn a_bounded_run_of_30000_inputs_finds_no_crash() {
    let weights = fuzz::parse_weights("sql=40,csv=15,config=15,spec=10,results=8").unwrap();
    let counts = fuzz::split_counts(30_000, &weights);
    let work = tempfile::tempdir().unwrap();
    let report = parent::run(&options(Amount::Counts(counts.clone()), work.path()));
    println!("{}", fuzz::describe(&report));
    assert_no_failure(&report);
    assert_eq!(report.total(), 30_000);
    // The generators reach past the first checks: some of every category
    // runs (or, for specs and reports, passes every check).
    for (category, n) in &counts {
        let c = &report.counts[category];
        assert_eq!(c.inputs, *n, "{}", category.name());
        assert!(
            c.ran > 0,
            "no {} input ran: {}",
            category.name(),
            report.table()
        );
    }
}

#[test]
fn compiled_plans_never_crash() {
    let work = tempfile::tempdir().unwrap();
    let cases = cases_of(|c| c == Category::Plan);
    assert!(!cases.is_empty());
    let replayed = parent::replay(&options(Amount::Replay(Vec::new()), work.path()), cases);
    println!("{}", fuzz::describe(&replayed));
    let generated = parent::run(&options(
        Amount::Counts(vec![(Category::Plan, 12_000)]),
        work.path(),
    ));
    println!("{}", fuzz::describe(&generated));
    assert_no_failure(&replayed);
    assert_no_failure(&generated);
    assert!(generated.counts[&Category::Plan].ran > 0);
}

/// The compiled-plan cases stay in the plan format the lab reads today, so
/// each reaches the checks it was saved for: a case the loader refuses for
/// its shape (a missing or renamed field) would replay without crashing and
/// test nothing. Each is refused by validation, with the JSON path of what
/// is wrong.
#[test]
fn every_saved_plan_reaches_the_checks_on_load() {
    for case in cases_of(|c| c == Category::Plan) {
        let err = optimizer::session::explain_script_in("EXECUTE PLAN 'plan.json';", &case, &[])
            .expect_err(&format!("{}: a saved crash case loads", case.display()))
            .to_string();
        assert!(
            !err.contains("missing field") && !err.contains("unknown field"),
            "{}: the plan no longer has the lab's format: {err}",
            case.display()
        );
        assert!(
            err.contains("plan.json: nodes[") || err.contains("plan.json: edges["),
            "{}: refused without a JSON path: {err}",
            case.display()
        );
    }
}
