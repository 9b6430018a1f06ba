//! The run summary `lab run` prints for each INSERT. Numbers are written
//! by [`crate::numbers`], as in every other output; a run under
//! [`MIN_TIMED_MS`] of wall time (or [`MIN_WORK_MS`] besides waiting for its
//! sources) says it is too short to time. Operators
//! are numbered by stage (`[2]`), and join lines name the stage they are
//! about.

use crate::numbers::{self, Unit};
use crate::stats::{self, MIN_TIMED_MS, MIN_WORK_MS};
use operators::changelog::RowKind;
use optimizer::config::StateBackendKind;
use optimizer::session::InsertOutcome;
use std::fmt::Write;
use std::time::Duration;

fn ms(d: Duration) -> String {
    numbers::format(d.as_secs_f64() * 1e3, Unit::Millis)
}

fn rate(r: f64) -> String {
    format!("{} rows/s", numbers::format(r, Unit::Rate))
}

fn count(n: impl Into<f64>) -> String {
    numbers::format(n.into(), Unit::Count)
}

fn bytes(n: i64) -> String {
    numbers::format(n as f64, Unit::Bytes)
}

pub fn render(o: &InsertOutcome) -> String {
    let r = &o.report;
    let sink = o.sink_report();
    let c = &sink.counts;
    // The job's figures are printed with its first sink; a statement set's
    // other sinks print their own rows only.
    let job_part = o.sink_index == 0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "INSERT INTO {} (parallelism {}, state backend {})",
        o.sink,
        o.config.parallelism(),
        o.config.state_backend().as_str()
    );
    let sinks = o.job_sinks();
    if sinks.len() > 1 {
        let _ = writeln!(
            s,
            "  statement set     one job for INSERT INTO {}{}",
            sinks.join(", "),
            if job_part {
                ": input rows, time, state and operators are the job's"
            } else {
                " (the job's figures are above)"
            }
        );
    }
    if job_part {
        let _ = writeln!(s, "  input rows        {}", count(r.input_rows as f64));
    }
    let _ = writeln!(
        s,
        "  changelog rows    {} (+I {}, -U {}, +U {}, -D {})",
        count(c.total() as f64),
        count(c.get(RowKind::Insert) as f64),
        count(c.get(RowKind::UpdateBefore) as f64),
        count(c.get(RowKind::UpdateAfter) as f64),
        count(c.get(RowKind::Delete) as f64)
    );
    if let Some(rows) = &sink.result {
        let _ = writeln!(s, "  result rows       {}", count(rows.len() as f64));
    }
    if job_part {
        let _ = writeln!(
            s,
            "  wall time         {} ({})",
            ms(r.wall),
            rate(r.throughput())
        );
        let (wall_ms, wait_ms) = (
            r.wall.as_secs_f64() * 1e3,
            r.source_wait.as_secs_f64() * 1e3,
        );
        if stats::too_short(wall_ms, wait_ms) {
            let why = if wall_ms < MIN_TIMED_MS {
                format!("under {MIN_TIMED_MS:.0} ms of wall time")
            } else {
                format!("under {MIN_WORK_MS:.0} ms of work besides waiting for the sources")
            };
            let _ = writeln!(
                s,
                "                    too short to time: {why}; start-up and scheduling weigh as \
                 much as the work: give it more rows"
            );
        }
        let _ = writeln!(
            s,
            "  job thread        waited for sources {}, in sink {}",
            ms(r.source_wait),
            ms(r.sink_time)
        );
    }
    let _ = writeln!(
        s,
        "  latency           p50 {}, p99 {}",
        ms(sink.latency.p50),
        ms(sink.latency.p99)
    );
    if !job_part {
        join_summary(o, &mut s);
        return s;
    }
    let _ = writeln!(
        s,
        "  records shuffled  {}, hotspot factor {}",
        count(r.records_shuffled() as f64),
        numbers::format(r.hotspot_factor(), Unit::Factor)
    );
    // The peak when it was above the end (window state is freed as
    // windows fire).
    let peak = if r.peak_state_entries() > r.state_entries() {
        format!(" (peak {})", count(r.peak_state_entries() as f64))
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "  state             {} entries{peak}, {}, {} reads, {} writes",
        count(r.state_entries() as f64),
        bytes(r.state_bytes()),
        count(r.state_reads() as f64),
        count(r.state_writes() as f64)
    );
    let k = &r.checkpoints;
    if k.taken > 0 {
        let last = if k.incremental {
            format!(
                "last {} (incremental, {} in all its files)",
                bytes(k.last_bytes as i64),
                bytes(k.last_full_bytes as i64)
            )
        } else {
            format!("last {}", bytes(k.last_bytes as i64))
        };
        let _ = writeln!(
            s,
            "  checkpoints       {} taken, {} written in all, {last}, {} taking them",
            k.taken,
            bytes(k.bytes as i64),
            ms(k.time)
        );
    }
    if r.restarts > 0 {
        let _ = writeln!(
            s,
            "  restarts          {} (restart-strategy.type = fixed-delay; the figures are the last attempt's)",
            r.restarts
        );
    }
    if let Some(p) = &r.savepoint {
        let _ = writeln!(s, "  savepoint         {}", p.display());
    }
    for d in &r.non_restored {
        let _ = writeln!(s, "  not restored      {d}");
    }
    if o.config.state_backend() == StateBackendKind::RocksDb {
        let _ = writeln!(
            s,
            "  rocksdb options   {}",
            o.config.rocksdb_options().describe()
        );
    }
    join_summary(o, &mut s);
    let _ = writeln!(s, "  operators:");
    for (i, st) in r.stages.iter().enumerate() {
        let _ = writeln!(s, "    [{}] {} x{}", i + 1, st.name, st.parallelism);
        let _ = write!(
            s,
            "      in {} out {}, hotspot {}, busy(max) {}",
            count(st.records_in() as f64),
            count(st.records_out() as f64),
            numbers::format(st.hotspot_factor(), Unit::Factor),
            ms(st.max_busy())
        );
        if st.records_shuffled > 0 {
            let _ = write!(s, ", shuffled {}", count(st.records_shuffled as f64));
        }
        let _ = writeln!(s);
        for (state, phys) in st.states.iter().zip(&st.physical_bytes) {
            let m = &state.metrics;
            let _ = write!(
                s,
                "      state {:<12} {} entries, {}, {} reads, {} writes, {} deletes",
                state.name,
                count(m.entries as f64),
                bytes(m.logical_bytes),
                count(m.reads as f64),
                count(m.writes as f64),
                count(m.deletes as f64)
            );
            if let Some(p) = phys {
                let _ = write!(s, ", RocksDB physical {}", bytes(*p as i64));
            }
            let _ = writeln!(s);
        }
        for (name, v) in &st.counters {
            let _ = writeln!(s, "      {name} {}", count(*v as f64));
        }
    }
    s
}

/// Join-specific lines: how much join state is intermediate results (kept
/// by a binary chain, not by MultiJoin), recomputation cost, delta join
/// lookups, and lookup joins' lookups and cache hits.
fn join_summary(o: &InsertOutcome, s: &mut String) {
    use optimizer::physical::node::JoinRole;
    let nodes = o.plan.root.stage_nodes();
    if nodes.len() != o.stages.len() {
        return;
    }
    let (mut input_bytes, mut intermediate_bytes, mut joins) = (0i64, 0i64, 0);
    // Operators are numbered by their stage in the job (as in the list below).
    for (&i, (node, stage)) in o.stages.iter().zip(nodes.iter().zip(o.plan_stages())) {
        match node.spec().join_role() {
            Some(JoinRole::KeepsInputs) => {
                joins += 1;
                for (i, state) in stage.states.iter().enumerate() {
                    let intermediate = node.inputs.get(i).is_some_and(|n| n.is_join_result());
                    if intermediate {
                        intermediate_bytes += state.metrics.logical_bytes;
                    } else {
                        input_bytes += state.metrics.logical_bytes;
                    }
                }
                let visited = stage.counter("rows_visited");
                if stage.records_in() > 0 {
                    let _ = writeln!(
                        s,
                        "  [{}] {}: {} state rows visited per input record",
                        i + 1,
                        short(&stage.name),
                        numbers::format(visited as f64 / stage.records_in() as f64, Unit::Count)
                    );
                }
            }
            Some(JoinRole::LooksUp) => {
                let rate = |side: &str| {
                    let h = stage.counter(&format!("{side}_cache_hits"));
                    let m = stage.counter(&format!("{side}_cache_misses"))
                        + stage.counter(&format!("{side}_cache_stale"));
                    if h + m == 0 {
                        "n/a".to_string()
                    } else {
                        format!("{:.1}%", 100.0 * h as f64 / (h + m) as f64)
                    }
                };
                let _ = writeln!(
                    s,
                    "  [{}] delta join: {} lookups, cache hit rate left {} right {}, {} duplicate rows emitted, join state {} entries",
                    i + 1,
                    count(stage.counter("lookups") as f64),
                    rate("left"),
                    rate("right"),
                    count(stage.counter("duplicates") as f64),
                    count(stage.state_entries() as f64)
                );
            }
            Some(JoinRole::LooksUpTable) => {
                let lookups = stage.counter("lookups");
                let hits = stage.counter("lookup_cache_hits");
                let rate = if lookups == 0 {
                    "n/a".to_string()
                } else {
                    format!("{:.1}%", 100.0 * hits as f64 / lookups as f64)
                };
                let _ = writeln!(
                    s,
                    "  [{}] lookup join: {} lookups, cache hit rate {rate}, {} went to the table, {} rows read from it",
                    i + 1,
                    count(lookups as f64),
                    count(stage.counter("lookup_store_lookups") as f64),
                    count(stage.counter("lookup_store_rows") as f64)
                );
            }
            None => {}
        }
    }
    if joins > 0 {
        let total = input_bytes + intermediate_bytes;
        let share = if total > 0 {
            100.0 * intermediate_bytes as f64 / total as f64
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  join state        {}: inputs {}, intermediate results {} ({share:.1}%)",
            bytes(total),
            bytes(input_bytes),
            bytes(intermediate_bytes)
        );
    }
}

fn short(name: &str) -> &str {
    name.split('(').next().unwrap_or(name)
}
