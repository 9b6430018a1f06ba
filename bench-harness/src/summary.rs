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
    let c = &r.sink_counts;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "INSERT INTO {} (parallelism {}, state backend {})",
        o.sink,
        o.config.parallelism(),
        o.config.state_backend().as_str()
    );
    let _ = writeln!(s, "  input rows        {}", r.input_rows);
    let _ = writeln!(
        s,
        "  changelog rows    {} (+I {}, -U {}, +U {}, -D {})",
        c.total(),
        c.get(RowKind::Insert),
        c.get(RowKind::UpdateBefore),
        c.get(RowKind::UpdateAfter),
        c.get(RowKind::Delete)
    );
    if let Some(rows) = &r.result {
        let _ = writeln!(s, "  result rows       {}", rows.len());
    }
    let _ = writeln!(
        s,
        "  wall time         {} ({})",
        ms(r.wall),
        rate(r.throughput())
    );
    let _ = writeln!(
        s,
        "  latency           p50 {}, p99 {}",
        ms(r.latency.p50),
        ms(r.latency.p99)
    );
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
