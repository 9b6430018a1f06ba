//! Every RocksDB option the lab sets on purpose, in one place.
//!
//! The tunable ones are Flink's `state.backend.rocksdb.*` options
//! (Flink's `RocksDBConfigurableOptions`), with Flink's defaults, so a run
//! on the lab and one on Flink start from the same database settings; the
//! optimizer's configuration registry maps each key to a field here. Two
//! more are fixed, as Flink fixes them too: no write-ahead log (durability
//! comes from checkpoints, which the lab does not take) and no
//! compression (the lab links no compression library; Flink's default is
//! Snappy, `state.backend.rocksdb.compression.per.level`).
//!
//! [`RocksDbOptions::describe`] is what the run summary prints.

use rocksdb::{BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, Options};

/// `state.backend.rocksdb.compaction.style`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompactionStyle {
    Level,
    Universal,
    Fifo,
}

impl CompactionStyle {
    /// Flink's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionStyle::Level => "LEVEL",
            CompactionStyle::Universal => "UNIVERSAL",
            CompactionStyle::Fifo => "FIFO",
        }
    }
}

/// The database's options; [`Default`] is Flink's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RocksDbOptions {
    /// `state.backend.rocksdb.block.cache-size`: one LRU cache of data
    /// blocks for the whole database.
    pub block_cache_size: u64,
    /// `state.backend.rocksdb.block.blocksize`.
    pub block_size: u64,
    /// `state.backend.rocksdb.use-bloom-filter`: a full (not block-based)
    /// filter in every new SST file.
    pub use_bloom_filter: bool,
    /// `state.backend.rocksdb.bloom-filter.bits-per-key`.
    pub bloom_bits_per_key: f64,
    /// `state.backend.rocksdb.writebuffer.size`: one memtable's size.
    pub write_buffer_size: u64,
    /// `state.backend.rocksdb.writebuffer.count`.
    pub write_buffer_count: i32,
    /// `state.backend.rocksdb.writebuffer.number-to-merge`.
    pub write_buffer_number_to_merge: i32,
    /// `state.backend.rocksdb.compaction.style`.
    pub compaction_style: CompactionStyle,
    /// `state.backend.rocksdb.compaction.level.use-dynamic-size`.
    pub dynamic_level_size: bool,
    /// `state.backend.rocksdb.compaction.level.target-file-size-base`.
    pub target_file_size_base: u64,
    /// `state.backend.rocksdb.compaction.level.max-size-level-base`.
    pub max_size_level_base: u64,
    /// `state.backend.rocksdb.thread.num`: background flush and compaction
    /// jobs.
    pub background_jobs: i32,
}

const KB: u64 = 1 << 10;
const MB: u64 = 1 << 20;

impl Default for RocksDbOptions {
    fn default() -> RocksDbOptions {
        RocksDbOptions {
            block_cache_size: 8 * MB,
            block_size: 4 * KB,
            use_bloom_filter: false,
            bloom_bits_per_key: 10.0,
            write_buffer_size: 64 * MB,
            write_buffer_count: 2,
            write_buffer_number_to_merge: 1,
            compaction_style: CompactionStyle::Level,
            dynamic_level_size: false,
            target_file_size_base: 64 * MB,
            max_size_level_base: 256 * MB,
            background_jobs: 2,
        }
    }
}

impl RocksDbOptions {
    /// The options of the database and of each of its column families;
    /// every column family made with (a clone of) them shares one block
    /// cache.
    pub fn to_rocksdb(&self) -> Options {
        let mut o = Options::default();
        o.set_compression_type(DBCompressionType::None);
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&Cache::new_lru_cache(self.block_cache_size as usize));
        table.set_block_size(self.block_size as usize);
        if self.use_bloom_filter {
            table.set_bloom_filter(self.bloom_bits_per_key, false);
        }
        o.set_block_based_table_factory(&table);
        o.set_write_buffer_size(self.write_buffer_size as usize);
        o.set_max_write_buffer_number(self.write_buffer_count);
        o.set_min_write_buffer_number_to_merge(self.write_buffer_number_to_merge);
        o.set_compaction_style(match self.compaction_style {
            CompactionStyle::Level => DBCompactionStyle::Level,
            CompactionStyle::Universal => DBCompactionStyle::Universal,
            CompactionStyle::Fifo => DBCompactionStyle::Fifo,
        });
        o.set_level_compaction_dynamic_level_bytes(self.dynamic_level_size);
        o.set_target_file_size_base(self.target_file_size_base);
        o.set_max_bytes_for_level_base(self.max_size_level_base);
        o.set_max_background_jobs(self.background_jobs);
        o
    }

    /// One line for the run summary.
    pub fn describe(&self) -> String {
        let bloom = if self.use_bloom_filter {
            format!("bloom filter {} bits/key", self.bloom_bits_per_key)
        } else {
            "no bloom filter".to_string()
        };
        format!(
            "block cache {}, block {}, {bloom}, write buffer {} x {} (merge {}), \
             compaction {}{} (L1 files {}, level base {}), {} background jobs, \
             no compression, no WAL",
            size(self.block_cache_size),
            size(self.block_size),
            size(self.write_buffer_size),
            self.write_buffer_count,
            self.write_buffer_number_to_merge,
            self.compaction_style.as_str(),
            if self.dynamic_level_size {
                " dynamic"
            } else {
                ""
            },
            size(self.target_file_size_base),
            size(self.max_size_level_base),
            self.background_jobs,
        )
    }
}

/// A byte count in Flink's spelling: the largest unit that divides it.
pub fn size(bytes: u64) -> String {
    for (unit, n) in [("tb", 1u64 << 40), ("gb", 1 << 30), ("mb", MB), ("kb", KB)] {
        if bytes >= n && bytes.is_multiple_of(n) {
            return format!("{} {unit}", bytes / n);
        }
    }
    format!("{bytes} bytes")
}
