//! The two state backends agree: same values, same counters, on the same
//! sequence of operations; and the counters follow the documented rules.

use operators::state::{StateBackend, StateMetrics};
use operators::value::Value;
use proptest::prelude::*;

fn backends() -> Vec<StateBackend> {
    vec![
        StateBackend::heap(),
        StateBackend::rocksdb(None).expect("rocksdb opens"),
    ]
}

fn k(i: i64) -> Vec<Value> {
    vec![Value::Int(i)]
}

#[test]
fn value_state_counts_reads_writes_entries_and_bytes() {
    for b in backends() {
        let mut s = b.value_state("op", "acc", 1).unwrap();
        assert_eq!(s.get(&k(1)).unwrap(), None);
        s.put(&k(1), vec![Value::str("abc")]).unwrap();
        s.put(&k(2), vec![Value::Int(7)]).unwrap();
        s.put(&k(1), vec![Value::str("abcdef")]).unwrap();
        assert_eq!(s.get(&k(1)).unwrap(), Some(vec![Value::str("abcdef")]));
        s.delete(&k(2)).unwrap();
        s.delete(&k(3)).unwrap();
        let m = s.metrics();
        // key Int = 9 bytes; "abcdef" = 1 + 1 + 6 = 8 bytes.
        assert_eq!(
            m,
            StateMetrics {
                reads: 2,
                writes: 3,
                deletes: 2,
                entries: 1,
                logical_bytes: 9 + 8,
            },
            "{:?}",
            b.kind()
        );
    }
}

#[test]
fn modify_is_one_read_and_one_write_or_delete() {
    for b in backends() {
        let mut s = b.value_state("op", "acc", 1).unwrap();
        for _ in 0..5 {
            s.modify(&k(1), |slot| {
                let n = slot.as_ref().and_then(|r| r[0].as_int()).unwrap_or(0);
                *slot = Some(vec![Value::Int(n + 1)]);
            })
            .unwrap();
        }
        s.modify(&k(1), |slot| *slot = None).unwrap();
        let m = s.metrics();
        assert_eq!(
            (m.reads, m.writes, m.deletes, m.entries, m.logical_bytes),
            (6, 5, 1, 0, 0)
        );
    }
}

#[test]
fn modify_many_counts_as_one_modify_per_key() {
    for b in backends() {
        let mut s = b.value_state("op", "acc", 1).unwrap();
        s.put(&k(1), vec![Value::Int(1)]).unwrap();
        s.put(&k(2), vec![Value::Int(2)]).unwrap();
        // Key 3 is new, key 1 grows, key 2 goes, key 4 stays absent; keys
        // are visited in the order given, whatever their stored order.
        let keys = [k(3), k(1), k(2), k(4)];
        let seen = s
            .modify_many(&keys, |i, slot| {
                let old = slot.clone();
                *slot = match i {
                    0 => Some(vec![Value::str("new")]),
                    1 => Some(vec![Value::Int(10), Value::Int(11)]),
                    _ => None,
                };
                (i, old)
            })
            .unwrap();
        assert_eq!(
            seen,
            vec![
                (0, None),
                (1, Some(vec![Value::Int(1)])),
                (2, Some(vec![Value::Int(2)])),
                (3, None)
            ]
        );
        assert_eq!(
            s.get(&k(1)).unwrap(),
            Some(vec![Value::Int(10), Value::Int(11)])
        );
        assert_eq!(s.get(&k(2)).unwrap(), None);
        assert_eq!(s.get(&k(3)).unwrap(), Some(vec![Value::str("new")]));
        let m = s.metrics();
        // 2 puts + 4 reads, 2 writes, 1 delete + 3 gets; entries 1 and 3:
        // 9 + 18 and 9 + 5 bytes.
        assert_eq!(
            (m.reads, m.writes, m.deletes, m.entries, m.logical_bytes),
            (7, 4, 1, 2, 9 + 18 + 9 + 5),
            "{:?}",
            b.kind()
        );
    }
}

#[test]
fn map_state_scans_one_key_only() {
    for b in backends() {
        let mut s = b.map_state("op", "left", 1, 1).unwrap();
        for key in [1i64, 2, 10] {
            for u in 0..3 {
                s.put(&k(key), &k(u), vec![Value::Int(key * 100 + u)])
                    .unwrap();
            }
        }
        let mut got = s.entries(&k(1)).unwrap();
        got.sort_by_key(|(u, _)| u[0].as_int());
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], (k(2), vec![Value::Int(102)]));
        assert!(s.entries(&k(5)).unwrap().is_empty());
        let m = s.metrics();
        assert_eq!(m.entries, 9);
        assert_eq!(
            m.reads,
            3 + 1,
            "a scan reads each entry, an empty scan once"
        );
    }
}

#[derive(Clone, Debug)]
enum Op {
    Get(i64),
    Put(i64, i64),
    Delete(i64),
    Incr(i64),
    /// `Incr` of several distinct keys through one `modify_many`.
    IncrMany(Vec<i64>),
    MapPut(i64, i64, i64),
    MapDelete(i64, i64),
    Scan(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..6i64).prop_map(Op::Get),
        (0..6i64, -3..1000i64).prop_map(|(a, b)| Op::Put(a, b)),
        (0..6i64).prop_map(Op::Delete),
        (0..6i64).prop_map(Op::Incr),
        proptest::collection::btree_set(0..6i64, 0..5)
            .prop_map(|keys| Op::IncrMany(keys.into_iter().rev().collect())),
        (0..4i64, 0..4i64, 0..50i64).prop_map(|(a, b, c)| Op::MapPut(a, b, c)),
        (0..4i64, 0..4i64).prop_map(|(a, b)| Op::MapDelete(a, b)),
        (0..4i64).prop_map(Op::Scan),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn heap_and_rocksdb_agree(ops in proptest::collection::vec(op(), 1..60)) {
        let mut results = Vec::new();
        for b in backends() {
            let mut v = b.value_state("op", "v", 1).unwrap();
            let mut m = b.map_state("op", "m", 1, 1).unwrap();
            let mut trace = Vec::new();
            for o in &ops {
                match o {
                    Op::Get(a) => trace.push(format!("{:?}", v.get(&k(*a)).unwrap())),
                    Op::Put(a, x) => v.put(&k(*a), vec![Value::Int(*x), Value::str(&"x".repeat(*a as usize))]).unwrap(),
                    Op::Delete(a) => v.delete(&k(*a)).unwrap(),
                    Op::Incr(a) => v.modify(&k(*a), |s| {
                        let n = s.as_ref().and_then(|r| r[0].as_int()).unwrap_or(0);
                        *s = if n >= 2 { None } else { Some(vec![Value::Int(n + 1)]) };
                    }).unwrap(),
                    Op::IncrMany(keys) => {
                        let keys: Vec<Vec<Value>> = keys.iter().map(|a| k(*a)).collect();
                        let seen = v.modify_many(&keys, |i, s| {
                            let n = s.as_ref().and_then(|r| r[0].as_int()).unwrap_or(0);
                            *s = if n >= 2 { None } else { Some(vec![Value::Int(n + 1)]) };
                            (i, n)
                        }).unwrap();
                        trace.push(format!("{seen:?}"));
                    }
                    Op::MapPut(a, u, x) => m.put(&k(*a), &k(*u), vec![Value::Int(*x)]).unwrap(),
                    Op::MapDelete(a, u) => m.delete(&k(*a), &k(*u)).unwrap(),
                    Op::Scan(a) => {
                        let mut e = m.entries(&k(*a)).unwrap();
                        e.sort_by_key(|(u, _)| u[0].as_int());
                        trace.push(format!("{e:?}"));
                    }
                }
            }
            results.push((trace, v.metrics(), m.metrics()));
        }
        prop_assert_eq!(&results[0], &results[1]);
    }
}

/// RocksDB writes blind (no lookup of the value replaced), yet entries and
/// logical bytes stay exact: blind puts over live keys, blind deletes of
/// absent ones, map overwrites, and writes over entries a restore put back
/// into two subtasks' handles of one column family.
#[test]
fn blind_writes_keep_entries_and_bytes_exact() {
    let s = |n: usize| vec![Value::str(&"x".repeat(n))];
    let mut seen = Vec::new();
    for b in backends() {
        let mut v = b.value_state("op", "v", 1).unwrap();
        let mut m = b.map_state("op", "m", 1, 1).unwrap();
        for i in 0..4 {
            v.put(&k(i), s(3)).unwrap();
            m.put(&k(i % 2), &k(i), s(3)).unwrap();
        }
        // Over live keys, each after an access to another key.
        for i in 0..4 {
            v.get(&k(9)).unwrap();
            v.put(&k(i), s(10)).unwrap();
            m.put(&k(i % 2), &k(i), s(i as usize)).unwrap();
        }
        // Absent keys, then one live key, deleted blind.
        for i in [7, 8, 3] {
            v.delete(&k(i)).unwrap();
            m.delete(&k(i % 2), &k(i)).unwrap();
        }
        let (vm, mm) = (v.metrics(), m.metrics());
        // Value: keys 0..3 live, "x" * 10 = 12 bytes each. Map: entries
        // (0,0), (1,1), (0,2) of 9 + 9 + (2 + i) bytes.
        assert_eq!((vm.entries, vm.logical_bytes), (3, 3 * (9 + 12)));
        assert_eq!((mm.entries, mm.logical_bytes), (3, 3 * 18 + 2 + 3 + 4));
        assert_eq!((vm.writes, vm.deletes), (8, 3));

        // A restore: two subtasks (odd and even keys) of one operator
        // write back their own entries, then write over them blind.
        let r = StateBackend::new(b.kind(), None).unwrap();
        let mut parts = Vec::new();
        for part in 0..2 {
            let mut v2 = r.value_state("op", "v", 1).unwrap();
            let mut m2 = r.map_state("op", "m", 1, 1).unwrap();
            let owns = |key: &[Value]| key[0].as_int().unwrap() % 2 == part;
            for (key, row) in v.all_entries().unwrap() {
                if owns(&key) {
                    v2.restore_entry(&key, row).unwrap();
                }
            }
            for (key, ukey, row) in m.all_entries().unwrap() {
                if owns(&key) {
                    m2.restore_entry(&key, &ukey, row).unwrap();
                }
            }
            for i in (part..6).step_by(2) {
                v2.put(&k(i), s(1)).unwrap();
                m2.put(&k(part), &k(i), s(1)).unwrap();
            }
            v2.delete(&k(part)).unwrap();
            m2.delete(&k(part), &k(part)).unwrap();
            parts.push((v2.metrics(), m2.metrics()));
        }
        // Each subtask: keys part+2, part+4 live in v (3-byte values);
        // entries (part, part+2), (part, part+4) in m (3-byte values).
        for (v2, m2) in &parts {
            assert_eq!((v2.entries, v2.logical_bytes), (2, 2 * (9 + 3)));
            assert_eq!((m2.entries, m2.logical_bytes), (2, 2 * (18 + 3)));
        }
        seen.push((vm, mm, parts));
    }
    assert_eq!(seen[0], seen[1], "heap and RocksDB count alike");
}
