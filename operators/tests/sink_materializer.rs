//! `SinkUpsertMaterializer` emits what Flink's operator of that name emits,
//! on both backends, and the sink's row for a key is always the last row
//! kept for it.

use operators::changelog::{Change, RowKind};
use operators::operator::Operator;
use operators::sink_materializer::SinkUpsertMaterializer;
use operators::state::StateBackend;
use operators::value::Value;

fn row(pk: i64, v: i64) -> Vec<Value> {
    vec![Value::Int(pk), Value::Int(v)]
}

fn change(kind: RowKind, pk: i64, v: i64) -> Change {
    Change::new(kind, row(pk, v))
}

#[test]
fn emission_follows_flinks_sink_upsert_materializer() {
    use RowKind::*;
    let input = vec![
        change(Insert, 1, 10),       // nothing kept: +I
        change(Insert, 1, 11),       // [10, 11]: +U 11
        change(UpdateBefore, 1, 10), // not the last: nothing
        change(Delete, 1, 11),       // none left: -D 11
        change(Delete, 1, 12),       // matches nothing: dropped
        change(Insert, 2, 20),       // +I
        change(UpdateAfter, 2, 21),  // +U 21, [20, 21]
        change(UpdateBefore, 2, 21), // the last: +U of the one before, 20
    ];
    let expected = vec![
        change(Insert, 1, 10),
        change(UpdateAfter, 1, 11),
        change(Delete, 1, 11),
        change(Insert, 2, 20),
        change(UpdateAfter, 2, 21),
        change(UpdateAfter, 2, 20),
    ];
    for backend in [StateBackend::heap(), StateBackend::rocksdb(None).unwrap()] {
        let mut op = SinkUpsertMaterializer::new(&backend, "mat", vec![0], 2).unwrap();
        let mut out = Vec::new();
        op.process(0, input.clone(), &mut out).unwrap();
        assert_eq!(out, expected, "{:?}", backend.kind());
        let m = op.state_reports()[0].metrics;
        // One read per record; a write per record that leaves rows kept,
        // a delete when none are left (key 1 after its -D).
        assert_eq!((m.reads, m.writes, m.deletes, m.entries), (8, 6, 1, 1));
        assert_eq!(op.counters(), vec![("unmatched_retractions", 1)]);
    }
}
