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
    assert_eq!(status.matches("  TaskManager ").count(), 2, "{status}");

    let out = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut scripts = std::collections::BTreeSet::new();
    for (n, c) in cases().iter().enumerate() {
        let label = format!("{} {:?} {:?}", c.script, c.params, c.sets);
        scripts.insert(c.script);
        let json = out.path().join(format!("{n}.json"));
        let o = compare(&cluster, c, &json);
        if !o.status.success() {
            failures.push(format!("{label}: {}", text(&o)));
            continue;
        }
        let report: Json = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for s in report.as_array().unwrap() {
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
            if c.sets.contains(&("parallelism.default", "4"))
                && s["flink_taskmanagers"].as_u64() != Some(2)
            {
                failures.push(format!(
                    "{label}: sink {sink}: at parallelism 4 the subtasks ran on {} TaskManager(s), not both",
                    s["flink_taskmanagers"]
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

    // stop ends exactly the processes start recorded.
    let pids = cluster.pids();
    assert_eq!(pids.len(), 3, "one JobManager and two TaskManagers");
    let o = cluster.stop();
    assert!(o.status.success(), "lab flink stop: {}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "still running after stop: {left:?}");

    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
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
