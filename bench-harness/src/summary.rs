//! The run summary `lab run` prints for each INSERT.

use operators::changelog::RowKind;
use optimizer::session::InsertOutcome;
use std::fmt::Write;
use std::time::Duration;

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M rows/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k rows/s", r / 1e3)
    } else {
        format!("{r:.0} rows/s")
    }
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
        let _ = writeln!(s, "  input rows        {}", r.input_rows);
    }
    let _ = writeln!(
        s,
        "  changelog rows    {} (+I {}, -U {}, +U {}, -D {})",
        c.total(),
        c.get(RowKind::Insert),
        c.get(RowKind::UpdateBefore),
        c.get(RowKind::UpdateAfter),
        c.get(RowKind::Delete)
    );
    if let Some(rows) = &sink.result {
        let _ = writeln!(s, "  result rows       {}", rows.len());
    }
    if job_part {
        let _ = writeln!(
            s,
            "  wall time         {} ({})",
            ms(r.wall),
            rate(r.throughput())
        );
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
        "  records shuffled  {}, hotspot factor {:.2}",
        r.records_shuffled(),
        r.hotspot_factor()
    );
    let _ = writeln!(
        s,
        "  state             {} entries, {} bytes, {} reads, {} writes",
        r.state_entries(),
        r.state_bytes(),
        r.state_reads(),
        r.state_writes()
    );
    join_summary(o, &mut s);
    let _ = writeln!(s, "  operators:");
    for st in &r.stages {
        let _ = writeln!(s, "    {} x{}", st.name, st.parallelism);
        let _ = write!(
            s,
            "      in {} out {}, hotspot {:.2}, busy(max) {}",
            st.records_in(),
            st.records_out(),
            st.hotspot_factor(),
            ms(st.max_busy())
        );
        if st.records_shuffled > 0 {
            let _ = write!(s, ", shuffled {}", st.records_shuffled);
        }
        let _ = writeln!(s);
        for (state, phys) in st.states.iter().zip(&st.physical_bytes) {
            let m = &state.metrics;
            let _ = write!(
                s,
                "      state {:<12} entries {} bytes {} reads {} writes {} deletes {}",
                state.name, m.entries, m.logical_bytes, m.reads, m.writes, m.deletes
            );
            if let Some(p) = phys {
                let _ = write!(s, " physical {p}");
            }
            let _ = writeln!(s);
        }
        for (name, v) in &st.counters {
            let _ = writeln!(s, "      {name} {v}");
        }
    }
    s
}

/// Join-specific lines: how much join state is intermediate results (kept
/// by a binary chain, not by MultiJoin), recomputation cost, and delta join
/// lookups.
fn join_summary(o: &InsertOutcome, s: &mut String) {
    use optimizer::physical::plan::NodeKind;
    let nodes = o.plan.root.stage_nodes();
    if nodes.len() != o.stages.len() {
        return;
    }
    let (mut input_bytes, mut intermediate_bytes, mut joins) = (0i64, 0i64, 0);
    for (node, stage) in nodes.iter().zip(o.plan_stages()) {
        match &node.kind {
            NodeKind::Join { .. } | NodeKind::MultiJoin { .. } => {
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
                        "  {}: {:.1} state rows visited per input record",
                        short(&stage.name),
                        visited as f64 / stage.records_in() as f64
                    );
                }
            }
            NodeKind::DeltaJoin { .. } => {
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
                    "  delta join: {} lookups, cache hit rate left {} right {}, {} duplicate rows emitted, join state {} entries",
                    stage.counter("lookups"),
                    rate("left"),
                    rate("right"),
                    stage.counter("duplicates"),
                    stage.state_entries()
                );
            }
            _ => {}
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
            "  join state        {total} bytes: inputs {input_bytes}, intermediate results {intermediate_bytes} ({share:.1}%)"
        );
    }
}

fn short(name: &str) -> &str {
    name.split('(').next().unwrap_or(name)
}
