//! The configuration registry: defaults, parsing of every type, errors and
//! cross-key validation.

use optimizer::config::{
    self, format_duration, parse_duration, AggPhaseStrategy, ClockKind, Config, DeltaJoinStrategy,
    StateBackendKind, UpsertMaterialize,
};
use optimizer::error::ErrorKind;
use std::path::PathBuf;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn set_err(key: &str, value: &str) -> String {
    let err = Config::default().set(key, value).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
    err.message
}

#[test]
fn every_default() {
    let c = Config::default();
    assert!(!c.mini_batch_enabled());
    assert_eq!(c.mini_batch_allow_latency(), Duration::ZERO);
    assert_eq!(c.mini_batch_size(), -1);
    assert_eq!(c.agg_phase_strategy(), AggPhaseStrategy::Auto);
    assert!(!c.split_distinct_enabled());
    assert_eq!(c.split_bucket_num(), 1024);
    assert!(!c.multi_join_enabled());
    assert_eq!(c.delta_join_strategy(), DeltaJoinStrategy::Auto);
    assert!(c.reuse_sub_plan_enabled());
    assert!(c.reuse_source_enabled());
    assert!(c.delta_join_cache_enabled());
    assert_eq!(c.delta_join_left_cache_size(), 10000);
    assert_eq!(c.delta_join_right_cache_size(), 10000);
    assert_eq!(c.state_ttl(), Duration::ZERO);
    assert_eq!(c.emit_allow_lateness(), Duration::ZERO);
    assert!(!c.emit_early_fire_enabled());
    assert_eq!(c.emit_early_fire_delay(), Duration::ZERO);
    assert!(!c.emit_late_fire_enabled());
    assert_eq!(c.emit_late_fire_delay(), Duration::ZERO);
    assert_eq!(c.sink_upsert_materialize(), UpsertMaterialize::Auto);
    assert_eq!(c.parallelism(), 1);
    assert_eq!(c.state_backend(), StateBackendKind::HashMap);
    assert_eq!(c.source_batch_size(), 1024);
    assert_eq!(c.state_dir(), None);
    assert_eq!(c.clock(), ClockKind::Processing);
    assert!(c.explicitly_set().is_empty());
    assert!(c.validate().is_ok());
}

#[test]
fn entries_list_every_key_in_canonical_text() {
    let entries = Config::default().entries();
    let expected = [
        ("table.exec.mini-batch.enabled", "false"),
        ("table.exec.mini-batch.allow-latency", "0 ms"),
        ("table.exec.mini-batch.size", "-1"),
        ("table.optimizer.agg-phase-strategy", "AUTO"),
        ("table.optimizer.distinct-agg.split.enabled", "false"),
        ("table.optimizer.distinct-agg.split.bucket-num", "1024"),
        ("table.optimizer.multi-join.enabled", "false"),
        ("table.optimizer.delta-join.strategy", "AUTO"),
        ("table.optimizer.reuse-sub-plan-enabled", "true"),
        ("table.optimizer.reuse-source-enabled", "true"),
        ("table.exec.delta-join.cache-enabled", "true"),
        ("table.exec.delta-join.left.cache-size", "10000"),
        ("table.exec.delta-join.right.cache-size", "10000"),
        ("table.exec.rank.topn-cache-size", "10000"),
        ("table.exec.state.ttl", "0 ms"),
        ("table.exec.emit.allow-lateness", "0 ms"),
        ("table.exec.emit.early-fire.enabled", "false"),
        ("table.exec.emit.early-fire.delay", "0 ms"),
        ("table.exec.emit.late-fire.enabled", "false"),
        ("table.exec.emit.late-fire.delay", "0 ms"),
        ("table.exec.sink.upsert-materialize", "AUTO"),
        ("parallelism.default", "1"),
        ("pipeline.auto-watermark-interval", "200 ms"),
        ("table.exec.source.idle-timeout", "0 ms"),
        ("table.exec.uid.generation", "PLAN_ONLY"),
        ("table.exec.uid.format", "<id>_<transformation>"),
        ("execution.checkpointing.interval", "0 ms"),
        ("execution.checkpointing.dir", ""),
        ("execution.checkpointing.num-retained", "1"),
        ("execution.checkpointing.incremental", "false"),
        ("restart-strategy.type", "none"),
        ("restart-strategy.fixed-delay.attempts", "1"),
        ("restart-strategy.fixed-delay.delay", "1000 ms"),
        ("execution.savepoint.path", ""),
        ("execution.savepoint.ignore-unclaimed-state", "false"),
        ("state.backend.type", "hashmap"),
        ("table.exec.async-state.enabled", "false"),
        ("state.backend.rocksdb.block.cache-size", "8 mb"),
        ("state.backend.rocksdb.block.blocksize", "4 kb"),
        ("state.backend.rocksdb.use-bloom-filter", "false"),
        ("state.backend.rocksdb.bloom-filter.bits-per-key", "10.0"),
        ("state.backend.rocksdb.writebuffer.size", "64 mb"),
        ("state.backend.rocksdb.writebuffer.count", "2"),
        ("state.backend.rocksdb.writebuffer.number-to-merge", "1"),
        ("state.backend.rocksdb.compaction.style", "LEVEL"),
        (
            "state.backend.rocksdb.compaction.level.use-dynamic-size",
            "false",
        ),
        (
            "state.backend.rocksdb.compaction.level.target-file-size-base",
            "64 mb",
        ),
        (
            "state.backend.rocksdb.compaction.level.max-size-level-base",
            "256 mb",
        ),
        ("state.backend.rocksdb.thread.num", "2"),
        ("lab.source.batch-size", "1024"),
        ("lab.state.dir", ""),
        ("lab.clock", "processing"),
        ("lab.source.delivery", "depth-first"),
        ("lab.delta-join.source-read-ahead", "1"),
        ("lab.optimizer.disabled-rules", ""),
        ("lab.window.slicing", "true"),
        ("lab.fault.operator", ""),
        ("lab.fault.after-records", "1"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(entries, expected);
}

#[test]
fn key_infos_match_defaults() {
    let keys = config::keys();
    assert_eq!(keys.len(), 58);
    let defaults = Config::default();
    for k in keys {
        assert_eq!(
            defaults.get(k.name).as_deref(),
            Some(k.default),
            "{}",
            k.name
        );
        assert!(!k.description.is_empty(), "{}", k.name);
        // Setting a key to its default text is accepted and changes nothing
        // but the explicit flag.
        let mut c = Config::default();
        c.set(k.name, k.default).unwrap();
        assert_eq!(c.entries(), defaults.entries());
        assert!(c.is_set(k.name));
    }
    let info = config::key_info("table.optimizer.agg-phase-strategy").unwrap();
    assert_eq!(info.type_name, "Enum");
    assert_eq!(info.allowed(), &["AUTO", "ONE_PHASE", "TWO_PHASE"]);
    assert_eq!(
        config::key_info("parallelism.default").unwrap().type_name,
        "Integer"
    );
    assert_eq!(
        config::key_info("table.exec.mini-batch.size")
            .unwrap()
            .type_name,
        "Long"
    );
    assert_eq!(
        config::key_info("table.exec.state.ttl").unwrap().type_name,
        "Duration"
    );
    assert_eq!(
        config::key_info("lab.state.dir").unwrap().type_name,
        "String"
    );
    assert!(config::key_info("no.such.key").is_none());
}

#[test]
fn booleans() {
    let mut c = Config::default();
    c.set("table.exec.mini-batch.enabled", "TRUE").unwrap();
    assert!(c.mini_batch_enabled());
    c.set("table.exec.mini-batch.enabled", " False ").unwrap();
    assert!(!c.mini_batch_enabled());
    c.set("table.optimizer.multi-join.enabled", "true").unwrap();
    assert!(c.multi_join_enabled());
    c.set("table.optimizer.distinct-agg.split.enabled", "true")
        .unwrap();
    assert!(c.split_distinct_enabled());
    c.set("table.exec.delta-join.cache-enabled", "false")
        .unwrap();
    assert!(!c.delta_join_cache_enabled());
    for bad in ["yes", "1", "", "on"] {
        let m = set_err("table.exec.mini-batch.enabled", bad);
        assert!(m.contains("'table.exec.mini-batch.enabled'"), "{m}");
        assert!(m.contains(&format!("'{bad}'")), "{m}");
        assert!(m.contains("true or false"), "{m}");
    }
}

#[test]
fn integers_and_longs() {
    let mut c = Config::default();
    c.set("table.exec.mini-batch.size", "5000").unwrap();
    assert_eq!(c.mini_batch_size(), 5000);
    c.set("table.exec.mini-batch.size", "-7").unwrap();
    assert_eq!(c.mini_batch_size(), -7);
    c.set("table.optimizer.distinct-agg.split.bucket-num", "16")
        .unwrap();
    assert_eq!(c.split_bucket_num(), 16);
    c.set("parallelism.default", "4").unwrap();
    assert_eq!(c.parallelism(), 4);
    c.set("lab.source.batch-size", "1").unwrap();
    assert_eq!(c.source_batch_size(), 1);
    c.set("table.exec.delta-join.left.cache-size", "3").unwrap();
    c.set("table.exec.delta-join.right.cache-size", "5000000000")
        .unwrap();
    assert_eq!(c.delta_join_left_cache_size(), 3);
    assert_eq!(c.delta_join_right_cache_size(), 5_000_000_000);

    let m = set_err("parallelism.default", "0");
    assert!(
        m.contains("'parallelism.default'") && m.contains("'0'"),
        "{m}"
    );
    assert!(m.contains("from 1 to 32768"), "{m}");
    let m = set_err("table.optimizer.distinct-agg.split.bucket-num", "-3");
    assert!(m.contains(">= 1"), "{m}");
    let m = set_err("table.exec.delta-join.left.cache-size", "0");
    assert!(m.contains(">= 1"), "{m}");
    let m = set_err("lab.source.batch-size", "1.5");
    assert!(m.contains("integer"), "{m}");
    // Integer keys are 32-bit, as Flink's.
    let m = set_err("parallelism.default", "3000000000");
    assert!(m.contains("32-bit"), "{m}");
    let m = set_err("table.exec.mini-batch.size", "many");
    assert!(m.contains("'many'") && m.contains("64-bit integer"), "{m}");
    let m = set_err("table.exec.mini-batch.size", "99999999999999999999");
    assert!(m.contains("integer"), "{m}");
}

#[test]
fn enums_are_case_insensitive_and_canonical() {
    let mut c = Config::default();
    c.set("table.optimizer.agg-phase-strategy", "two_phase")
        .unwrap();
    assert_eq!(c.agg_phase_strategy(), AggPhaseStrategy::TwoPhase);
    assert_eq!(
        c.get("table.optimizer.agg-phase-strategy").unwrap(),
        "TWO_PHASE"
    );
    c.set("table.optimizer.agg-phase-strategy", "One_Phase")
        .unwrap();
    assert_eq!(c.agg_phase_strategy(), AggPhaseStrategy::OnePhase);
    c.set("table.optimizer.delta-join.strategy", "force")
        .unwrap();
    assert_eq!(c.delta_join_strategy(), DeltaJoinStrategy::Force);
    c.set("table.optimizer.delta-join.strategy", "NONE")
        .unwrap();
    assert_eq!(c.delta_join_strategy(), DeltaJoinStrategy::None);
    c.set("state.backend.type", "RocksDB").unwrap();
    assert_eq!(c.state_backend(), StateBackendKind::RocksDb);
    assert_eq!(c.get("state.backend.type").unwrap(), "rocksdb");
    c.set("state.backend.type", "HASHMAP").unwrap();
    assert_eq!(c.state_backend(), StateBackendKind::HashMap);
    c.set("lab.clock", "Deterministic").unwrap();
    assert_eq!(c.clock(), ClockKind::Deterministic);

    let m = set_err("table.optimizer.agg-phase-strategy", "THREE_PHASE");
    assert!(m.contains("'THREE_PHASE'"), "{m}");
    assert!(m.contains("AUTO, ONE_PHASE, TWO_PHASE"), "{m}");
    // `filesystem`, Flink's old alias of hashmap, is not accepted.
    let m = set_err("state.backend.type", "filesystem");
    assert!(
        m.contains("'state.backend.type'") && m.contains("hashmap, rocksdb"),
        "{m}"
    );
    let m = set_err("table.optimizer.delta-join.strategy", "ALWAYS");
    assert!(m.contains("AUTO, FORCE, NONE"), "{m}");
    let m = set_err("lab.clock", "wall");
    assert!(m.contains("processing, deterministic"), "{m}");
    assert_eq!(StateBackendKind::RocksDb.to_string(), "rocksdb");
    assert_eq!(AggPhaseStrategy::TwoPhase.to_string(), "TWO_PHASE");
}

#[test]
fn durations() {
    let mut c = Config::default();
    c.set("table.exec.mini-batch.allow-latency", "5 s").unwrap();
    assert_eq!(c.mini_batch_allow_latency(), ms(5000));
    assert_eq!(
        c.get("table.exec.mini-batch.allow-latency").unwrap(),
        "5000 ms"
    );
    c.set("table.exec.state.ttl", "1h").unwrap();
    assert_eq!(c.state_ttl(), ms(3_600_000));
    assert_eq!(c.get("table.exec.state.ttl").unwrap(), "3600000 ms");

    let m = set_err("table.exec.state.ttl", "one hour");
    assert!(
        m.contains("'table.exec.state.ttl'") && m.contains("'one hour'"),
        "{m}"
    );
    assert!(m.contains("duration"), "{m}");
    let m = set_err("table.exec.mini-batch.allow-latency", "5 fortnights");
    assert!(m.contains("unknown time unit 'fortnights'"), "{m}");
}

#[test]
fn duration_syntax() {
    let good = [
        ("0", 0),
        ("250", 250),
        ("250 ms", 250),
        ("250ms", 250),
        ("3 milli", 3),
        ("3 millis", 3),
        ("3 millisecond", 3),
        ("3 milliseconds", 3),
        ("2 s", 2_000),
        ("2s", 2_000),
        ("2 sec", 2_000),
        ("2 secs", 2_000),
        ("2 second", 2_000),
        ("2 seconds", 2_000),
        ("2 min", 120_000),
        ("2m", 120_000),
        ("2 minute", 120_000),
        ("2 minutes", 120_000),
        ("1 h", 3_600_000),
        ("1 hour", 3_600_000),
        ("2 hours", 7_200_000),
        ("1 d", 86_400_000),
        ("1 day", 86_400_000),
        ("2 days", 172_800_000),
        ("  10 S  ", 10_000),
        ("10 MIN", 600_000),
        ("10 Seconds", 10_000),
    ];
    for (text, expected) in good {
        assert_eq!(parse_duration(text), Ok(ms(expected)), "{text}");
    }
    for bad in [
        "",
        "ms",
        "-5 s",
        "1.5 s",
        "5 weeks",
        "5 s s",
        "5 us",
        "5 ns",
        "s5",
        "99999999999999999999999 ms",
        "18446744073709551615 d",
    ] {
        assert!(parse_duration(bad).is_err(), "{bad:?} parsed");
    }
    assert_eq!(format_duration(ms(5000)), "5000 ms");
    assert_eq!(format_duration(Duration::ZERO), "0 ms");
}

#[test]
fn strings() {
    let mut c = Config::default();
    c.set("lab.state.dir", "/var/tmp/joinlab").unwrap();
    assert_eq!(c.state_dir(), Some(PathBuf::from("/var/tmp/joinlab")));
    c.set("lab.state.dir", "").unwrap();
    assert_eq!(c.state_dir(), None);
}

#[test]
fn unknown_key_suggests_nearest() {
    let m = set_err("table.exec.mini-batch.enable", "true");
    assert_eq!(
        m,
        "unknown configuration key 'table.exec.mini-batch.enable'; did you mean \
         'table.exec.mini-batch.enabled'?"
    );
    let m = set_err("table.exec.minibatch.size", "10");
    assert!(
        m.ends_with("did you mean 'table.exec.mini-batch.size'?"),
        "{m}"
    );
    let m = set_err("state.backend", "rocksdb");
    assert!(m.ends_with("did you mean 'state.backend.type'?"), "{m}");
    let m = set_err("TABLE.OPTIMIZER.MULTI-JOIN.ENABLED", "true");
    assert!(
        m.ends_with("did you mean 'table.optimizer.multi-join.enabled'?"),
        "{m}"
    );
    let m = set_err("mini-batch.allow-latency", "1 s");
    assert!(
        m.ends_with("did you mean 'table.exec.mini-batch.allow-latency'?"),
        "{m}"
    );
    // Nothing close: the known keys are listed instead.
    let m = set_err("pipeline.name", "x");
    assert!(
        m.starts_with("unknown configuration key 'pipeline.name'; known keys: "),
        "{m}"
    );
    assert!(m.contains("parallelism.default"), "{m}");
    let full = Config::default().set("foo", "1").unwrap_err().to_string();
    assert!(
        full.starts_with("configuration error: unknown configuration key 'foo'"),
        "{full}"
    );
}

#[test]
fn sizes_have_a_maximum_named_in_the_error() {
    // 2147483647 rows a batch asked for a 64 GiB buffer.
    let m = set_err("lab.source.batch-size", "2147483647");
    assert_eq!(
        m,
        "invalid value '2147483647' for configuration key 'lab.source.batch-size': expected a \
         32-bit integer from 1 to 1048576 (a batch's buffer is allocated before it is filled)"
    );
    let mut c = Config::default();
    c.set("lab.source.batch-size", "1048576").unwrap();
    let m = set_err("parallelism.default", "32769");
    assert!(m.contains("from 1 to 32768"), "{m}");
    c.set("parallelism.default", "32768").unwrap();
    assert_eq!(c.parallelism(), 32768);
}

#[test]
fn a_long_unknown_key_is_refused_without_a_costly_search() {
    // The edit distance costs the product of the lengths; a key far
    // longer than any known one is no typo of one.
    let key = format!("table.exec.{}", "x".repeat(100_000));
    let m = set_err(&key, "1");
    assert!(m.contains("; known keys: "), "{}", &m[m.len() - 200..]);
}

#[test]
fn failed_set_changes_nothing() {
    let mut c = Config::default();
    c.set("parallelism.default", "4").unwrap();
    assert!(c.set("parallelism.default", "zero").is_err());
    assert!(c.set("parallelism.defaults", "2").is_err());
    assert_eq!(c.parallelism(), 4);
    assert_eq!(
        c.explicitly_set(),
        vec![("parallelism.default".to_string(), "4".to_string())]
    );
}

#[test]
fn explicitly_set_lists_given_keys_in_registry_order() {
    let mut c = Config::default();
    c.set("state.backend.type", "ROCKSDB").unwrap();
    c.set("table.exec.mini-batch.allow-latency", "2 s").unwrap();
    c.set("table.exec.mini-batch.enabled", "true").unwrap();
    assert_eq!(
        c.explicitly_set(),
        vec![
            (
                "table.exec.mini-batch.enabled".to_string(),
                "true".to_string()
            ),
            (
                "table.exec.mini-batch.allow-latency".to_string(),
                "2000 ms".to_string()
            ),
            ("state.backend.type".to_string(), "rocksdb".to_string()),
        ]
    );
    assert!(c.is_set("state.backend.type"));
    assert!(!c.is_set("parallelism.default"));
}

#[test]
fn mini_batch_needs_latency_and_size() {
    let mut c = Config::default();
    c.set("table.exec.mini-batch.enabled", "true").unwrap();
    let e = c.validate().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains(
            "'table.exec.mini-batch.allow-latency' must be > 0 when \
             'table.exec.mini-batch.enabled' is true"
        ),
        "{}",
        e.message
    );
    assert!(
        e.message.contains(
            "'table.exec.mini-batch.size' must be > 0 when 'table.exec.mini-batch.enabled' is true"
        ),
        "{}",
        e.message
    );

    c.set("table.exec.mini-batch.allow-latency", "1 s").unwrap();
    let e = c.validate().unwrap_err();
    assert!(!e.message.contains("allow-latency"), "{}", e.message);
    assert!(
        e.message
            .contains("'table.exec.mini-batch.size' must be > 0"),
        "{}",
        e.message
    );
    assert!(e.message.contains("got '-1'"), "{}", e.message);

    c.set("table.exec.mini-batch.size", "1000").unwrap();
    assert!(c.validate().is_ok());

    c.set("table.exec.mini-batch.allow-latency", "0 s").unwrap();
    let e = c.validate().unwrap_err();
    assert!(
        e.message.contains("allow-latency' must be > 0"),
        "{}",
        e.message
    );
    assert!(e.message.contains("got '0 ms'"), "{}", e.message);

    // Disabled: the rules do not apply.
    c.set("table.exec.mini-batch.enabled", "false").unwrap();
    assert!(c.validate().is_ok());
}

#[test]
fn rocksdb_options_default_to_flinks_and_parse_memory_sizes() {
    use operators::state::rocksdb_options::{CompactionStyle, RocksDbOptions};
    assert_eq!(
        Config::default().rocksdb_options(),
        RocksDbOptions::default()
    );
    let mut c = Config::default();
    c.set("state.backend.rocksdb.block.cache-size", "64MB")
        .unwrap();
    c.set("state.backend.rocksdb.block.blocksize", " 16 kb ")
        .unwrap();
    c.set("state.backend.rocksdb.writebuffer.size", "1048576")
        .unwrap();
    c.set("state.backend.rocksdb.use-bloom-filter", "true")
        .unwrap();
    c.set("state.backend.rocksdb.bloom-filter.bits-per-key", "7.5")
        .unwrap();
    c.set("state.backend.rocksdb.compaction.style", "universal")
        .unwrap();
    c.set("state.backend.rocksdb.thread.num", "4").unwrap();
    let o = c.rocksdb_options();
    assert_eq!(o.block_cache_size, 64 << 20);
    assert_eq!(o.block_size, 16 << 10);
    assert_eq!(o.write_buffer_size, 1 << 20);
    assert!(o.use_bloom_filter);
    assert_eq!(o.bloom_bits_per_key, 7.5);
    assert_eq!(o.compaction_style, CompactionStyle::Universal);
    assert_eq!(o.background_jobs, 4);
    assert_eq!(
        c.get("state.backend.rocksdb.block.cache-size").as_deref(),
        Some("64 mb")
    );
    assert_eq!(
        c.get("state.backend.rocksdb.writebuffer.size").as_deref(),
        Some("1 mb")
    );
    assert_eq!(
        c.get("state.backend.rocksdb.bloom-filter.bits-per-key")
            .as_deref(),
        Some("7.5")
    );
    assert!(
        o.describe().contains("block cache 64 mb"),
        "{}",
        o.describe()
    );
}

#[test]
fn rocksdb_options_refuse_bad_values_saying_what_was_expected() {
    let e = set_err("state.backend.rocksdb.block.cache-size", "3 parsecs");
    assert!(
        e.contains("memory size") && e.contains("unknown unit 'parsecs'"),
        "{e}"
    );
    let e = set_err("state.backend.rocksdb.block.cache-size", "0");
    assert!(e.contains("at least 1 byte"), "{e}");
    let e = set_err("state.backend.rocksdb.writebuffer.size", "2 gb");
    assert!(e.contains("at most 1 gb"), "{e}");
    let e = set_err(
        "state.backend.rocksdb.writebuffer.size",
        "99999999999999 tb",
    );
    assert!(e.contains("too large"), "{e}");
    let e = set_err("state.backend.rocksdb.bloom-filter.bits-per-key", "NaN");
    assert!(e.contains("number > 0"), "{e}");
    let e = set_err("state.backend.rocksdb.compaction.style", "NONE");
    assert!(e.contains("LEVEL, UNIVERSAL, FIFO"), "{e}");
    let e = set_err("state.backend.rocksdb.thread.num", "0");
    assert!(e.contains("from 1 to 256"), "{e}");
}

#[test]
fn a_checkpoint_interval_needs_a_directory() {
    let mut c = Config::default();
    c.set("execution.checkpointing.interval", "10 s").unwrap();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("execution.checkpointing.dir"), "{e}");
    c.set("execution.checkpointing.dir", "ckpt").unwrap();
    c.validate().unwrap();
    assert_eq!(
        c.checkpointing_interval(),
        std::time::Duration::from_secs(10)
    );
    assert_eq!(c.checkpointing_num_retained(), 1);
    assert!(c.set("execution.checkpointing.num-retained", "0").is_err());
    assert_eq!(c.savepoint_path(), None);
    c.set("execution.savepoint.path", "sp/savepoint-100")
        .unwrap();
    assert_eq!(
        c.savepoint_path(),
        Some(std::path::PathBuf::from("sp/savepoint-100"))
    );
    assert!(!c.savepoint_ignore_unclaimed_state());
    c.set("execution.savepoint.ignore-unclaimed-state", "true")
        .unwrap();
    assert!(c.savepoint_ignore_unclaimed_state());
    assert!(c.set("table.exec.uid.generation", "SOMETIMES").is_err());
    c.set("table.exec.uid.generation", "always").unwrap();
    assert_eq!(c.uid_generation(), optimizer::config::UidGeneration::Always);
}
