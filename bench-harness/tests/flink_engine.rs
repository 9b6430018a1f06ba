//! The lab against Flink itself: shipped scripts run on both engines
//! (`lab compare`) on a local cluster that the test starts with the
//! project's own commands and stops by the pids it recorded, also when an
//! assertion fails.
//!
//! `lab flink install` runs first (it reuses `.flink/venv` when present, so
//! a fresh machine installs Flink here). Every case compares final results
//! (they must be equal) and changelog rows by kind:
//!
//! - `Counts::Equal`: the same rows of each kind on both engines. That holds
//!   where one input is read in order and each key's changes stay in order:
//!   group aggregates, mini-batch bundles cut by size (an allow-latency
//!   longer than the run, so Flink's bundles end at the same rows as the
//!   lab's) at parallelism 1, distinct aggregates, INNER joins of
//!   insert-only inputs, TTL that does not expire.
//! - `Counts::Net(why)`: the counts may differ, for the reason given; what
//!   is asserted is that every retract sink's changes add up to its result
//!   (+I + +U - -U - -D = result rows) and no upsert sink receives -U, on
//!   both engines.
//!
//! Then, on the same cluster: a statement set runs as one Flink job and its
//! EXPLAIN prints both plans; Flink's final checkpoint reports state; a job
//! that fails exits with 3; `lab tune --engine flink`; the shipped
//! `campaigns/lab-vs-flink.toml --quick` writes both engines' rows, charts
//! and the lab-and-Flink section, with parallelism 4 on both TaskManagers;
//! so does `campaigns/nexmark.toml --quick`, every Nexmark query on both.
//! Last, with the test's cluster stopped, a campaign with a Flink variant
//! and no cluster starts one and stops it, at its end and when
//! interrupted.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A local cluster in a folder of its own; dropping it stops it.
struct Cluster {
    dir: tempfile::TempDir,
    rest: String,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let o = lab()
            .args(["flink", "start", "--taskmanagers", "2", "--slots", "2"])
            .arg("--cluster-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "lab flink start: {}", text(&o));
        let info: Json = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("cluster.json")).unwrap(),
        )
        .unwrap();
        Cluster {
            rest: info["rest"].as_str().unwrap().to_string(),
            dir,
        }
    }

    fn pids(&self) -> Vec<u32> {
        let mut pids = Vec::new();
        for e in std::fs::read_dir(self.dir.path().join("pid"))
            .into_iter()
            .flatten()
        {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
            pids.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
        }
        pids
    }

    fn stop(&self) -> Output {
        lab()
            .args(["flink", "stop", "--cluster-dir"])
            .arg(self.dir.path())
            .output()
            .unwrap()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, r)| r.split_whitespace().next())
        .unwrap_or("");
    !state.is_empty() && state != "Z"
}

#[derive(Clone, Copy)]
enum Counts {
    Equal,
    Net(&'static str),
}

struct Case {
    script: &'static str,
    params: &'static [(&'static str, &'static str)],
    sets: &'static [(&'static str, &'static str)],
    flink_sets: &'static [(&'static str, &'static str)],
    counts: Counts,
    /// Sinks whose counts differ although the case's others are equal.
    net_sinks: &'static [(&'static str, &'static str)],
}

const MINI_BATCH: [(&str, &str); 3] = [
    ("table.exec.mini-batch.enabled", "true"),
    // Longer than the run: bundles end by size only, on both engines.
    ("table.exec.mini-batch.allow-latency", "1 h"),
    ("table.exec.mini-batch.size", "5000"),
];

const fn case(script: &'static str) -> Case {
    Case {
        script,
        params: &[],
        sets: &[],
        flink_sets: &[],
        counts: Counts::Equal,
        net_sinks: &[],
    }
}

const INTERLEAVING: &str = "Flink reads a join's inputs concurrently, so the order in which \
     their changes meet (and with it the NULL-padded rows a LEFT join emits and retracts, or \
     the updates an upsert key goes through) differs from the lab's round-robin and from run \
     to run";

fn cases() -> Vec<Case> {
    vec![
        // Group aggregates, upsert (120 rows) and retract (229 rows) sinks,
        // an aggregate over an aggregate (-D when a count group empties).
        case("clicks_per_user.sql"),
        // The same at parallelism 4 on two TaskManagers.
        Case {
            sets: &[("parallelism.default", "4")],
            net_sinks: &[(
                "users_per_click_count",
                "at parallelism 4 the outer aggregate receives the inner one's changes from \
                 four subtasks, interleaved differently on each engine",
            )],
            ..case("clicks_per_user.sql")
        },
        // datagen with Zipf keys.
        Case {
            params: &[("rows", "20000"), ("keys", "1000"), ("skew", "1.0")],
            ..case("demo_agg.sql")
        },
        // Mini-batch group aggregate.
        Case {
            params: &[("rows", "20000"), ("skew", "1.2")],
            sets: &MINI_BATCH,
            ..case("campaign_minibatch_agg.sql")
        },
        // Local-global (two-phase) aggregate at parallelism 4.
        Case {
            params: &[("rows", "20000"), ("hot_share", "0.5")],
            sets: &[
                MINI_BATCH[0],
                MINI_BATCH[1],
                MINI_BATCH[2],
                ("parallelism.default", "4"),
                ("table.optimizer.agg-phase-strategy", "TWO_PHASE"),
            ],
            counts: Counts::Net(
                "Flink's mini-batch assigner emits a watermark with the first row each source \
                 subtask reads, and the global aggregate flushes its bundle once every input \
                 channel's watermark has passed it: with one subtask reading the file and three \
                 idle ones finishing early, that flush comes at a time-dependent row",
            ),
            ..case("campaign_local_global_skew.sql")
        },
        // Split distinct.
        Case {
            params: &[("rows", "20000")],
            sets: &[("table.optimizer.distinct-agg.split.enabled", "true")],
            counts: Counts::Net(
                "a user's bucket is the lab's hash, not Flink's HASH_CODE, so the partial \
                 aggregates and the updates the outer SUM emits differ in number",
            ),
            ..case("campaign_split_distinct.sql")
        },
        // Distinct aggregates: one map per CASE WHEN, one shared with FILTER.
        Case {
            params: &[("rows", "20000"), ("users", "2000")],
            ..case("campaign_filter_vs_case_when.sql")
        },
        // Both FILTER and plain COUNT DISTINCT at parallelism 4.
        Case {
            sets: &[("parallelism.default", "4")],
            ..case("uv_split_distinct.sql")
        },
        // INNER joins of insert-only inputs.
        case("tenant_multijoin_selective.sql"),
        // LEFT and INNER join chains over upsert inputs.
        Case {
            params: &[
                ("tenants", "200"),
                ("rows_per_tenant", "2"),
                ("selective_tenants", "20"),
            ],
            counts: Counts::Net(INTERLEAVING),
            ..case("campaign_multijoin_vs_binary.sql")
        },
        // MultiJoin.
        Case {
            sets: &[("table.optimizer.multi-join.enabled", "true")],
            counts: Counts::Net(INTERLEAVING),
            ..case("tenant_multijoin_10way.sql")
        },
        // Mini-batch regular join.
        Case {
            params: &[("changes", "2000"), ("update_ratio", "0.3")],
            sets: &MINI_BATCH,
            counts: Counts::Net(INTERLEAVING),
            ..case("campaign_minibatch_join.sql")
        },
        // The delta join's result: the lab runs a delta join; Flink (whose
        // filesystem sources cannot be looked up) a regular join, which
        // Flink 2.3 only writes into this upsert sink with its
        // SinkUpsertMaterializer when ON CONFLICT is not required.
        Case {
            params: &[("rows", "5000"), ("customers", "500"), ("skew", "1.1")],
            flink_sets: &[("table.exec.sink.require-on-conflict", "false")],
            counts: Counts::Net(INTERLEAVING),
            ..case("campaign_delta_join.sql")
        },
        // State TTL through the STATE_TTL hint, longer than the run.
        case("orders_ttl_hint.sql"),
        // A statement set: one job for both sinks, one read of the file.
        case("clicks_statement_set.sql"),
        // Window TVF aggregation on event time (watermarks, end of input
        // firing the last windows): TUMBLE; HOP and CUMULATE two-phase at
        // parallelism 2 (the lab keeps slices, Flink its own slices).
        case("window_tumble.sql"),
        Case {
            sets: &[
                ("parallelism.default", "2"),
                ("table.optimizer.agg-phase-strategy", "TWO_PHASE"),
            ],
            ..case("window_hop.sql")
        },
        // SESSION windows, window deduplication (keep first and last) and
        // an event-time interval join whose rowtime is a computed column
        // (the file Flink reads holds the physical columns only).
        case("window_session.sql"),
        case("window_dedup.sql"),
        case("interval_join.sql"),
        // Window join: the FULL OUTER join of two window TVFs of Flink's
        // window join page, unmatched rows padded when their window fires
        // (watermarks lag the input's disorder, so no row is late on either
        // engine whatever the order the two sources are read in).
        case("window_join.sql"),
        // Window Top-N over a window aggregate and over a window TVF.
        case("window_topn.sql"),
        // The legacy group windows (GroupWindowAggregate): TUMBLE, HOP and
        // SESSION firing once; and allowed lateness with late firings, the
        // watermark after every row, so both engines update the fired
        // windows with the same -U/+U and drop the same late row.
        case("group_window_bids.sql"),
        case("group_window_late_fire.sql"),
        // Nexmark on the events the lab generates (50,000; q7 150,000),
        // written to files Flink reads: projections and filters, the string
        // functions, joins, window aggregates (HOP, TUMBLE, SESSION), a
        // window join (q8), distinct aggregates with FILTER, with split
        // distinct too, and a keep-last deduplication; q1's DECIMAL product
        // rounded once to DOUBLE.
        case("nexmark/q0.sql"),
        case("nexmark/q1.sql"),
        case("nexmark/q2.sql"),
        case("nexmark/q3.sql"),
        Case {
            counts: Counts::Net(INTERLEAVING),
            ..case("nexmark/q4.sql")
        },
        // The maximum per window over the window counts is a window
        // aggregate over their windows (window-attached) and the join a
        // window join, on both engines: inserts only, once per window.
        case("nexmark/q5.sql"),
        case("nexmark/q7.sql"),
        case("nexmark/q8.sql"),
        case("nexmark/q11.sql"),
        case("nexmark/q15.sql"),
        Case {
            sets: &[("table.optimizer.distinct-agg.split.enabled", "true")],
            counts: Counts::Net(
                "a bucket is the lab's hash, not Flink's HASH_CODE, so the partial \
                 aggregates and the updates of the outer aggregate differ in number",
            ),
            ..case("nexmark/q15.sql")
        },
        case("nexmark/q16.sql"),
        case("nexmark/q17.sql"),
        case("nexmark/q18.sql"),
        // Top-N over an update stream (Flink's and the lab's ties both
        // keep the earlier row, so the changelogs match too).
        case("nexmark/q19.sql"),
        case("nexmark/q20.sql"),
        case("nexmark/q21.sql"),
        case("nexmark/q22.sql"),
        // Flink's final checkpoint reports the state.
        Case {
            params: &[("rows", "20000"), ("keys", "1000"), ("skew", "1.0")],
            flink_sets: &[("execution.checkpointing.interval", "1 s")],
            ..case("demo_agg.sql")
        },
    ]
}

fn counts(c: &Json, engine: &str) -> [i64; 4] {
    let a = c[format!("{engine}_counts")].as_array().unwrap();
    [0, 1, 2, 3].map(|i| a[i].as_i64().unwrap())
}

fn check_net(c: &Json, why: &str, failures: &mut Vec<String>, label: &str) {
    let sink = c["sink"].as_str().unwrap();
    for engine in ["lab", "flink"] {
        let [i, ub, ua, d] = counts(c, engine);
        let rows = c[format!("{engine}_result_rows")].as_i64().unwrap();
        if c["keyed"].as_bool().unwrap() {
            if ub != 0 {
                failures.push(format!(
                    "{label}: upsert sink {sink} got {ub} -U on {engine}"
                ));
            }
        } else if i + ua - ub - d != rows {
            failures.push(format!(
                "{label}: retract sink {sink} on {engine}: +I {i} + +U {ua} - -U {ub} - -D {d} \
                 is not its {rows} result rows ({why})"
            ));
        }
    }
}

fn compare(cluster: &Cluster, c: &Case, json: &Path) -> Output {
    let mut cmd = lab();
    cmd.arg("compare")
        .arg(examples().join(c.script))
        .args(["--quiet", "--flink-rest", &cluster.rest, "--json"])
        .arg(json);
    for (k, v) in c.params {
        cmd.arg("--param").arg(format!("{k}={v}"));
    }
    for (k, v) in c.sets {
        cmd.arg("--set").arg(format!("{k}={v}"));
    }
    for (k, v) in c.flink_sets {
        cmd.arg("--flink-set").arg(format!("{k}={v}"));
    }
    cmd.output().unwrap()
}

#[test]
fn lab_and_flink_agree_on_shipped_scripts() {
    let o = lab().args(["flink", "install"]).output().unwrap();
    assert!(o.status.success(), "lab flink install: {}", text(&o));
    let cluster = Cluster::start();

    // Two TaskManagers registered, as `lab flink status` shows.
    let o = lab()
        .args(["flink", "status", "--cluster-dir"])
        .arg(cluster.dir.path())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    assert!(status.contains("2 TaskManager(s), 4 slot(s)"), "{status}");
    // `  TaskManager localhost:40651-0db092 (pid 32246): 2 slot(s), 2 free`:
    // each TaskManager the REST API names is one of the processes `lab
    // flink start` recorded, a different one each.
    let taskmanagers: std::collections::BTreeMap<String, u32> = status
        .lines()
        .filter_map(|l| l.strip_prefix("  TaskManager "))
        .filter_map(|l| {
            let (id, rest) = l.split_once(" (pid ")?;
            Some((id.to_string(), rest.split_once(')')?.0.parse().ok()?))
        })
        .collect();
    let pids = cluster.pids();
    assert_eq!(taskmanagers.len(), 2, "{status}");
    assert!(
        taskmanagers.values().all(|p| pids.contains(p))
            && taskmanagers
                .values()
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                == 2,
        "TaskManagers {taskmanagers:?}, the cluster's pids {pids:?}: {status}"
    );

    let out = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut scripts = std::collections::BTreeSet::new();
    let cases = cases();
    let outputs = compare_all(&cluster, &cases, out.path());
    for ((n, c), o) in cases.iter().enumerate().zip(outputs) {
        let label = format!("{} {:?} {:?}", c.script, c.params, c.sets);
        scripts.insert(c.script);
        let json = out.path().join(format!("{n}.json"));
        if !o.status.success() {
            failures.push(format!("{label}: {}", text(&o)));
            continue;
        }
        let report: Json = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        if c.script == "clicks_statement_set.sql" {
            let jobs: std::collections::BTreeSet<&str> = report
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["flink_job_id"].as_str().unwrap())
                .collect();
            if jobs.len() != 1 || report.as_array().unwrap().len() != 2 {
                failures.push(format!("{label}: not one Flink job for the set: {report}"));
            }
            // Both plans of the EXPLAIN, section by section; Flink's shares
            // the scan between the sinks.
            if !stdout.contains("EXPLAIN statement 1, section by section")
                || stdout.matches("-- Flink\n").count() != 3
                || !stdout.contains("Reused(reference_id=[1])")
            {
                failures.push(format!("{label}: the EXPLAIN's plans: {stdout}"));
            }
        }
        let checkpointing = c
            .flink_sets
            .iter()
            .any(|(k, _)| *k == "execution.checkpointing.interval");
        for s in report.as_array().unwrap() {
            let state = s["flink_checkpointed_state_bytes"].as_u64();
            if checkpointing != state.is_some_and(|b| b > 0) {
                failures.push(format!(
                    "{label}: Flink's checkpointed state {state:?} with checkpointing {checkpointing}"
                ));
            }
            let sink = s["sink"].as_str().unwrap();
            if !s["results_equal"].as_bool().unwrap() {
                failures.push(format!("{label}: sink {sink}: results differ"));
            }
            let net = c
                .net_sinks
                .iter()
                .find(|(n, _)| *n == sink)
                .map(|(_, w)| *w);
            match (c.counts, net) {
                (_, Some(why)) | (Counts::Net(why), None) => {
                    check_net(s, why, &mut failures, &label)
                }
                (Counts::Equal, None) => {
                    if counts(s, "lab") != counts(s, "flink") {
                        failures.push(format!(
                            "{label}: sink {sink}: changelog by kind lab {:?} vs Flink {:?}",
                            counts(s, "lab"),
                            counts(s, "flink")
                        ));
                    }
                }
            }
            // At parallelism 4 (two slots per TaskManager) the subtasks
            // ran on both TaskManager processes, as REST names them.
            let ran_on: std::collections::BTreeSet<&str> = s["flink_subtasks_per_taskmanager"]
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let both: std::collections::BTreeSet<&str> =
                taskmanagers.keys().map(String::as_str).collect();
            if c.sets.contains(&("parallelism.default", "4"))
                && (s["flink_taskmanagers"].as_u64() != Some(2) || ran_on != both)
            {
                failures.push(format!(
                    "{label}: sink {sink}: at parallelism 4 the subtasks ran on {ran_on:?}, \
                     not both TaskManagers {both:?}"
                ));
            }
        }
        // The counts the issue names: 229 retract, 120 upsert rows.
        if c.script == "clicks_per_user.sql" && c.sets.is_empty() {
            let total = |sink: &str| {
                let s = report
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["sink"] == sink)
                    .unwrap();
                (
                    counts(s, "lab").iter().sum::<i64>(),
                    counts(s, "flink").iter().sum::<i64>(),
                )
            };
            assert_eq!(total("clicks_per_user"), (229, 229));
            assert_eq!(total("clicks_per_user_upsert"), (120, 120));
        }
    }
    assert!(scripts.len() >= 12, "{} scripts", scripts.len());

    // A statement Flink rejects: Flink's own message, exit code 2. Flink
    // 2.3 asks for ON CONFLICT where the lab materialises the sink.
    let o = lab()
        .args([
            "run",
            "--engine",
            "flink",
            "--quiet",
            "--flink-rest",
            &cluster.rest,
        ])
        .arg(examples().join("campaign_delta_join.sql"))
        .args([
            "--param",
            "rows=100",
            "--param",
            "customers=10",
            "--param",
            "skew=1.1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() != Some(2)
        || !err.contains("Flink rejected 'INSERT INTO enriched'")
        || !err.contains("org.apache.flink.table.api.ValidationException")
        || !err.contains("ON CONFLICT")
        || err.contains("panicked")
    {
        failures.push(format!("Flink's rejection: {}", text(&o)));
    }

    // A job that fails as it runs: Flink's failure, exit code 3.
    let failing = out.path().join("fail.sql");
    std::fs::write(
        &failing,
        "CREATE TABLE src (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', \
         'number-of-rows' = '10', 'fields.k.min' = '1', 'fields.k.max' = '3', 'seed' = '1');\n\
         CREATE TABLE quotients (k BIGINT, q BIGINT) WITH ('connector' = 'blackhole');\n\
         INSERT INTO quotients SELECT k, v / (v - v) FROM src;\n",
    )
    .unwrap();
    let o = lab()
        .args(["run", "--engine", "flink", "--quiet", "--flink-rest"])
        .arg(&cluster.rest)
        .arg(&failing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() != Some(3)
        || !err.contains("the Flink job of 'INSERT INTO quotients")
        || !err.contains(&format!("failed at {}", cluster.rest))
        || err.contains("panicked")
    {
        failures.push(format!("a failing job: {}", text(&o)));
    }

    // stdout on a full device: the --result files first, complete, then
    // the error naming them (exit 3), as lab run on the lab.
    let result = out.path().join("final.csv");
    let o = lab()
        .args(["run", "--engine", "flink", "--quiet", "--flink-rest"])
        .arg(&cluster.rest)
        .arg(examples().join("clicks_per_user.sql"))
        .arg("--result")
        .arg(&result)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let upsert = out.path().join("final-clicks_per_user_upsert.csv");
    if o.status.code() != Some(3)
        || !err.contains("cannot write to standard output")
        || !err.contains("the output files are complete")
        || err.contains("panicked")
        || std::fs::read_to_string(&upsert).map_or(0, |t| t.lines().count()) != 12
    {
        failures.push(format!("run --engine flink > /dev/full: {}", text(&o)));
    }

    // An exported bundle runs on the cluster with PyFlink.
    let bundle = out.path().join("bundle");
    let o = lab()
        .arg("export")
        .arg(examples().join("clicks_per_user.sql"))
        .arg("-o")
        .arg(&bundle)
        .output()
        .unwrap();
    if !o.status.success() {
        failures.push(format!("lab export: {}", text(&o)));
    } else {
        let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.flink/venv/bin/python");
        let o = Command::new(bundle.join("run.sh"))
            .arg(&cluster.rest)
            .env("PYTHON", python)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        if !o.status.success() || stdout.matches("\"event\": \"finished\"").count() != 3 {
            failures.push(format!("the exported bundle: {}", text(&o)));
        }
    }

    // lab tune on Flink: every variant runs there.
    let o = lab()
        .args([
            "tune",
            "--engine",
            "flink",
            "--quiet",
            "--flink-rest",
            &cluster.rest,
            "--repeats",
            "1",
            "--try",
            "parallelism.default=1,2",
        ])
        .arg(examples().join("clicks_per_user.sql"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    if !o.status.success()
        || !stdout.contains(&format!("on Flink at {}", cluster.rest))
        || !stdout.contains("INSERT INTO users_per_click_count")
        || stdout.contains("p99 latency")
    {
        failures.push(format!("lab tune --engine flink: {}", text(&o)));
    }

    // The shipped lab-vs-Flink campaign, quick, on this cluster.
    failures.extend(lab_vs_flink_quick(&cluster));
    // The shipped Nexmark campaign, quick, on this cluster.
    failures.extend(nexmark_quick(&cluster));

    // stop ends exactly the processes start recorded.
    let pids = cluster.pids();
    assert_eq!(pids.len(), 3, "one JobManager and two TaskManagers");
    let o = cluster.stop();
    assert!(o.status.success(), "lab flink stop: {}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "still running after stop: {left:?}");

    // With no cluster running, a campaign with a Flink variant starts one
    // and stops it.
    failures.extend(campaign_starts_and_stops_a_cluster());

    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One row of a results.csv, by column name.
type CsvRow = std::collections::HashMap<String, String>;

fn read_results(path: &Path) -> Vec<CsvRow> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// Every case's `lab compare`, two at a time (the cluster's four slots
/// take two jobs of parallelism 1, or queue a job of 4 until its slots are
/// free): most of a small job's time is its submission, which leaves the
/// cores idle a fifth of the time when the cases run one after the other.
/// Case `n` writes `n.json` in `out`; the outputs come back in case order.
fn compare_all(cluster: &Cluster, cases: &[Case], out: &Path) -> Vec<Output> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(c) = cases.get(n) else { break };
                let o = compare(cluster, c, &out.join(format!("{n}.json")));
                done.lock().unwrap().push((n, o));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(n, _)| *n);
    done.into_iter().map(|(_, o)| o).collect()
}

/// `lab campaign campaigns/nexmark.toml --quick` on the test's cluster:
/// every query on both engines, throughput per core on both, the same
/// changelog rows for the queries without state (their rows are the
/// input's, in its order), the lab-and-Flink section and the published
/// figures in index.md.
fn nexmark_quick(cluster: &Cluster) -> Vec<String> {
    let mut failures = Vec::new();
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns/nexmark.toml");
    let o = lab()
        .arg("campaign")
        .arg(&spec)
        .args(["--quick", "--quiet", "--flink-rest", &cluster.rest, "--out"])
        .arg(&report)
        .output()
        .unwrap();
    if !o.status.success() {
        return vec![format!("nexmark --quick: {}", text(&o))];
    }
    let rows = read_results(&report.join("results.csv"));
    let sinks: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["sink"].as_str()).collect();
    // Every query of the campaign's script (one INSERT each).
    let script = std::fs::read_to_string(examples().join("campaign_nexmark.sql")).unwrap();
    let queries = script.matches("INSERT INTO nexmark_q").count();
    if sinks.len() != queries {
        failures.push(format!(
            "nexmark: {} of {queries} queries ran: {sinks:?}",
            sinks.len()
        ));
    }
    for r in &rows {
        let what = format!("nexmark {} {}", r["variant"], r["sink"]);
        if !r["throughput_per_core_rows_per_s"]
            .parse::<f64>()
            .is_ok_and(|t| t > 0.0)
        {
            failures.push(format!("{what}: no throughput per core"));
        }
        if r["engine"] != "flink" {
            continue;
        }
        if ["nexmark_q0", "nexmark_q2", "nexmark_q21", "nexmark_q22"].contains(&r["sink"].as_str())
        {
            let twin = r["variant"].replacen("flink-", "lab-", 1);
            let lab = rows
                .iter()
                .find(|l| l["variant"] == twin && l["sink"] == r["sink"]);
            if lab.map(|l| &l["changelog_rows"]) != Some(&r["changelog_rows"]) {
                failures.push(format!("{what}: changelog rows differ from {twin}'s"));
            }
        }
    }
    let index = std::fs::read_to_string(report.join("index.md")).unwrap_or_default();
    for want in [
        "Lab and Flink",
        "GUIDE_V1.md",
        "155.02",
        "q22: throughput per core vs events",
    ] {
        if !index.contains(want) {
            failures.push(format!("nexmark index.md has no '{want}'"));
        }
    }
    failures
}

/// `lab campaign campaigns/lab-vs-flink.toml --quick` on the test's cluster:
/// rows of both engines, charts, the lab-and-Flink section, subtasks on
/// both TaskManagers at parallelism 4, checkpointed state on Flink, and
/// the same changelog rows on both engines where the order of one input
/// decides them (group aggregates one record at a time).
fn lab_vs_flink_quick(cluster: &Cluster) -> Vec<String> {
    let mut failures = Vec::new();
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns/lab-vs-flink.toml");
    let o = lab()
        .arg("campaign")
        .arg(&spec)
        .args(["--quick", "--quiet", "--flink-rest", &cluster.rest, "--out"])
        .arg(&report)
        .output()
        .unwrap();
    if !o.status.success() {
        return vec![format!("lab-vs-flink --quick: {}", text(&o))];
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    if !stdout.contains("throughput ratio per strategy, on the lab and on Flink") {
        failures.push(format!("lab-vs-flink output: {stdout}"));
    }
    let rows = read_results(&report.join("results.csv"));
    let engines: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["engine"].as_str()).collect();
    if engines != ["flink", "lab"].into_iter().collect() {
        failures.push(format!("lab-vs-flink engines: {engines:?}"));
    }
    for r in rows.iter().filter(|r| r["engine"] == "flink") {
        let what = format!("{} {} repeat {}", r["variant"], r["sink"], r["repeat"]);
        if r["cfg:parallelism.default"] == "4" && r["flink_taskmanagers"] != "2" {
            failures.push(format!(
                "{what}: at parallelism 4 on {} TaskManager(s)",
                r["flink_taskmanagers"]
            ));
        }
        if !r["flink_checkpointed_state_bytes"]
            .parse::<u64>()
            .is_ok_and(|b| b > 0)
        {
            failures.push(format!("{what}: no checkpointed state"));
        }
        if !r["variant"].starts_with("flink-") || !r["state_bytes"].is_empty() {
            failures.push(format!("{what}: a Flink row with the lab's columns"));
        }
        // Twins received as many changelog rows where one input's order
        // decides them.
        if r["variant"] == "flink-agg-heap" || r["variant"] == "flink-agg-rocksdb" {
            let twin = r["variant"].replacen("flink-", "lab-", 1);
            let lab = rows.iter().find(|l| {
                l["variant"] == twin && l["sink"] == r["sink"] && l["repeat"] == r["repeat"]
            });
            if lab.map(|l| &l["changelog_rows"]) != Some(&r["changelog_rows"]) {
                failures.push(format!("{what}: changelog rows differ from {twin}'s"));
            }
        }
    }
    for chart in [
        "group-aggregate-uniform-keys-throughput-vs-parallelism",
        "10-way-left-join-throughput-vs-parallelism",
    ] {
        if !report.join(format!("{chart}.png")).exists() {
            failures.push(format!("lab-vs-flink: no chart {chart}.png"));
        }
    }
    let index = std::fs::read_to_string(report.join("index.md")).unwrap_or_default();
    for want in [
        "## Lab and Flink",
        "### The lab's speed relative to Flink's",
        "### Strategies: does the lab's ratio hold on Flink?",
        "| agg_zipf | `table.exec.mini-batch.enabled`: false → true (`lab-agg-rocksdb` → `lab-agg-rocksdb-mb`) |",
        "| joined10 | `table.optimizer.multi-join.enabled`: false → true (`lab-join-binary-heap` → `lab-join-multijoin-heap`) |",
        "#### State size",
    ] {
        if !index.contains(want) {
            failures.push(format!("lab-vs-flink index.md lacks {want:?}"));
        }
    }
    failures
}

/// A campaign with a Flink variant, no `--flink-rest` and no local cluster
/// running starts one in `.flink/cluster/` and stops it at the end.
fn campaign_starts_and_stops_a_cluster() -> Vec<String> {
    let mut failures = Vec::new();
    let home = tempfile::tempdir().unwrap();
    // A Flink home of its own (its cluster/ is the default one there),
    // with the installed virtualenv and capture jar.
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.flink");
    for sub in ["venv", "lib"] {
        std::os::unix::fs::symlink(installed.join(sub), home.path().join(sub)).unwrap();
    }
    let spec = home.path().join("auto.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"auto\"\nscript = \"{}\"\nrepeats = 1\n\
             [variants.lab]\n\
             [variants.flink]\nengine = \"flink\"\nsinks = [\"clicks_per_user\"]\n",
            examples().join("clicks_per_user.sql").display()
        ),
    )
    .unwrap();
    let o = lab()
        .arg("campaign")
        .arg(&spec)
        .args(["--quiet", "--out"])
        .arg(home.path().join("report"))
        .env("JOINLAB_FLINK_DIR", home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() || !stderr.contains("started a local Flink") {
        failures.push(format!("a campaign that starts its cluster: {}", text(&o)));
    }
    // `stopped 3 process(es) of the cluster in DIR: pids a, b, c`
    let pids: Vec<u32> = stderr
        .lines()
        .find_map(|l| l.split_once(": pids "))
        .map(|(_, p)| {
            p.split(|c: char| !c.is_ascii_digit())
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    if pids.len() != 3 {
        failures.push(format!(
            "the campaign did not stop its 3 processes: {stderr}"
        ));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    if !left.is_empty() {
        failures.push(format!("still running after the campaign: {left:?}"));
    }
    let rows = read_results(&home.path().join("report/results.csv"));
    let flink: Vec<&CsvRow> = rows.iter().filter(|r| r["engine"] == "flink").collect();
    // The Flink variant ran its one sink; the lab variant all three.
    if flink.len() != 1 || flink[0]["sink"] != "clicks_per_user" || rows.len() != 4 {
        failures.push(format!("the auto campaign's rows: {rows:?}"));
    }

    // Interrupted (SIGINT), the campaign stops the cluster it started and
    // exits with 130.
    let long = home.path().join("long.toml");
    std::fs::write(
        &long,
        format!(
            "name = \"long\"\nscript = \"{}\"\nrepeats = 20\n\
             [variants.flink]\nengine = \"flink\"\n\
             [sweep]\nrows = [200000]\nkeys = [1000]\nskew = [1.0]\n",
            examples().join("demo_agg.sql").display()
        ),
    )
    .unwrap();
    let mut child = lab()
        .arg("campaign")
        .arg(&long)
        .args(["--quiet", "--out"])
        .arg(home.path().join("long-report"))
        .env("JOINLAB_FLINK_DIR", home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let cluster_dir = home.path().join("cluster");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    while !cluster_dir.join("cluster.json").exists()
        && std::time::Instant::now() < deadline
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let mut pids = Vec::new();
    for e in std::fs::read_dir(cluster_dir.join("pid"))
        .into_iter()
        .flatten()
    {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
        pids.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() != Some(130) || pids.len() != 3 || !err.contains("lab: interrupted") {
        failures.push(format!(
            "an interrupted campaign: exit {:?}, pids {pids:?}, stderr {err}",
            o.status.code()
        ));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    if !left.is_empty() {
        failures.push(format!(
            "still running after an interrupted campaign: {left:?}"
        ));
    }
    failures
}

#[test]
fn nothing_listening_at_the_rest_address_is_an_error_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let o = lab()
        .args([
            "run",
            "--engine",
            "flink",
            "--quiet",
            "--flink-rest",
            &address,
        ])
        .arg(examples().join("clicks_per_user.sql"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(err.contains(&address), "{err}");
    assert!(err.contains("no Flink REST API answers"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let o = lab()
        .args(["run", "--engine", "flink", "--flink-rest", "nohost"])
        .arg(examples().join("clicks_per_user.sql"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'nohost': expected HOST:PORT"));

    // A campaign with Flink variants and a tune on Flink say the same.
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns/lab-vs-flink.toml");
    let out = tempfile::tempdir().unwrap();
    let o = lab()
        .arg("campaign")
        .arg(&spec)
        .args(["--quick", "--quiet", "--flink-rest", &address, "--out"])
        .arg(out.path().join("r"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(err.contains(&address) && !err.contains("panicked"), "{err}");
    // Checked before the report directory is made: nothing is left behind.
    assert!(
        !out.path().join("r").exists(),
        "a report directory was made"
    );
    let o = lab()
        .args(["compare", "--quiet", "--flink-rest", &address])
        .arg(examples().join("clicks_per_user.sql"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        err.contains(&format!("no Flink REST API answers at {address}"))
            && !err.contains("panicked"),
        "{err}"
    );
    let o = lab()
        .args(["flink", "status", "--flink-rest", &address])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(err.contains(&address) && !err.contains("panicked"), "{err}");
    let o = lab()
        .args(["tune", "--engine", "flink", "--flink-rest", &address])
        .args(["--try", "parallelism.default=1,2"])
        .arg(examples().join("clicks_per_user.sql"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(err.contains(&address) && !err.contains("panicked"), "{err}");
}

#[test]
fn install_without_java_on_path_says_so() {
    let home = tempfile::tempdir().unwrap();
    let o = lab()
        .args(["flink", "install"])
        .env("PATH", home.path())
        .env("JOINLAB_FLINK_DIR", home.path().join("flink"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        err.contains("Java 17+ is needed") && err.contains("no `java` on PATH"),
        "{err}"
    );
    assert!(!home.path().join("flink/venv").exists());
}
