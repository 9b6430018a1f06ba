//! [`IndexLookupStore`]: source tables kept in RocksDB and indexed by a
//! declared index key — the lab's stand-in for Apache Fluss, which a delta
//! join queries instead of keeping join state.
//!
//! # What it holds
//!
//! Each table is declared with an arity, an *index key* (the columns a
//! lookup gives) and optionally a *primary key*:
//! - with a primary key the table is an upsert table: `+I` and `+U` put the
//!   row under its primary key, replacing the previous version (which also
//!   leaves the index if its index key differed); `-U` is ignored (the `+U`
//!   that follows carries the new version and finds the old one by primary
//!   key);
//! - without one it is insert-only: only `+I` is accepted, each row is kept
//!   (identical rows too).
//!
//! `-D` is always an error: a delta join needs sources without deletes.
//! [`IndexLookupStore::lookup`] returns every current row of a table whose
//! index key equals the given values (SQL equality is not applied: a NULL in
//! the key matches stored NULLs; callers that join skip NULL keys).
//!
//! # Layout
//!
//! One RocksDB per store, in its own temporary directory (removed on drop),
//! WAL off, no compression. Per table an `index` column family keyed
//! `encode(index key) ++ encode(row id)` with the encoded row as value, so a
//! lookup is one prefix scan (the [`codec`](crate::state::codec) encoding is
//! self-delimiting, so a key's entries are contiguous and nothing else shares
//! the prefix). The row id is the primary key, or a per-table sequence number
//! for insert-only tables. An upsert table whose index key is *not* part of
//! its primary key also has a `rows` column family (`primary key → row`) to
//! find the version a put replaces; when the index key is inside the primary
//! key the index entry of a primary key never moves, so a put simply
//! overwrites it (no read). A put is one atomic `WriteBatch`, so a concurrent
//! lookup never sees a row twice or not at all.
//!
//! # Generations (cache coherence)
//!
//! The store keeps, per table and index key, the *generation* of the last
//! write that touched that key (a store-wide counter; 0 = never written).
//! A reader that caches a lookup remembers the generation it read *before*
//! scanning ([`IndexLookupStore::lookup_versioned`]); the cached rows are
//! current exactly while [`IndexLookupStore::generation`] still returns it.
//! Writers update the data first and the generation after, so a lookup that
//! races a write is at worst tagged with an older generation and dropped at
//! its next check, never kept stale. The map costs one entry per distinct
//! index key written; it is metadata of the store, not of any operator.
//!
//! # Counters
//!
//! Per table ([`IndexLookupStore::stats`]) and summed
//! ([`IndexLookupStore::total_stats`]): lookups, rows returned, writes
//! (changes applied), retractions ignored, and version reads (the `get` an
//! upsert does to find the version it replaces).
//!
//! The store is `Send + Sync` and meant to be shared in an `Arc` by the
//! sources that write it ([`crate::join::StoreWritingSource`]) and the joins that
//! read it.

use crate::changelog::{Change, RowKind};
use crate::state::codec::{decode_all, encode_into};
use crate::value::{DisplayRow, Row, Value};
use rocksdb::{
    BoundColumnFamily, DBCompressionType, DBWithThreadMode, MultiThreaded, Options, WriteBatch,
    WriteOptions,
};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

type Db = DBWithThreadMode<MultiThreaded>;
type GenMap = hashbrown::HashMap<Vec<u8>, u64, foldhash::fast::FixedState>;

/// A store-wide write counter value; see the module doc.
pub type Generation = u64;

/// A table of the store (an index into its table list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(usize);

impl TableId {
    pub fn index(self) -> usize {
        self.0
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LookupStoreError {
    #[error("lookup store: a table named '{0}' already exists")]
    DuplicateTable(String),
    #[error("lookup store: no table {0:?}")]
    UnknownTable(TableId),
    #[error("lookup store: bad declaration of table '{table}': {message}")]
    BadSchema { table: String, message: String },
    #[error("lookup table '{table}' has {expected} columns, got a row of {got}: [{row}]")]
    Arity {
        table: String,
        expected: usize,
        got: usize,
        row: String,
    },
    #[error("lookup table '{table}': a lookup needs {expected} index key values, got {got}")]
    KeyArity {
        table: String,
        expected: usize,
        got: usize,
    },
    #[error(
        "lookup table '{table}' got -D[{row}]: sources of a delta join must not delete \
         (insert-only, or upserts without deletes)"
    )]
    Delete { table: String, row: String },
    #[error(
        "lookup table '{table}' has no primary key, so it is insert-only, but got {kind}[{row}]"
    )]
    UpdateWithoutPrimaryKey {
        table: String,
        kind: RowKind,
        row: String,
    },
    #[error("lookup table '{table}': primary key of {kind}[{row}] contains NULL")]
    NullPrimaryKey {
        table: String,
        kind: RowKind,
        row: String,
    },
    #[error("RocksDB error in lookup table '{table}': {error}")]
    RocksDb {
        table: String,
        error: rocksdb::Error,
    },
    #[error("cannot create the lookup store directory under {dir}: {error}")]
    Directory { dir: String, error: std::io::Error },
    #[error("corrupt bytes in lookup table '{0}'")]
    Corrupt(String),
}

impl LookupStoreError {
    /// Whether a table's declaration or a row it was given is at fault
    /// (rather than RocksDB or the disk).
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            LookupStoreError::RocksDb { .. }
                | LookupStoreError::Directory { .. }
                | LookupStoreError::Corrupt(_)
        )
    }
}

pub type LookupResult<T> = Result<T, LookupStoreError>;

/// A table's declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    pub name: String,
    pub arity: usize,
    /// Columns a lookup gives, in lookup order.
    pub index_key: Vec<usize>,
    /// `None`: insert-only table.
    pub primary_key: Option<Vec<usize>>,
}

impl TableSchema {
    /// True when every index key column is a primary key column.
    pub fn index_in_primary_key(&self) -> bool {
        self.primary_key
            .as_ref()
            .is_some_and(|pk| self.index_key.iter().all(|c| pk.contains(c)))
    }
}

/// Access counters of one table (or of all, summed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Lookups (prefix scans) served.
    pub lookups: u64,
    /// Rows those lookups returned.
    pub rows_returned: u64,
    /// Changes applied (`+I`/`+U` puts).
    pub writes: u64,
    /// `-U` changes received and ignored.
    pub ignored_retractions: u64,
    /// `get`s by primary key to find the version a put replaces.
    pub version_reads: u64,
}

impl StoreStats {
    pub fn merge(&mut self, o: &StoreStats) {
        self.lookups += o.lookups;
        self.rows_returned += o.rows_returned;
        self.writes += o.writes;
        self.ignored_retractions += o.ignored_retractions;
        self.version_reads += o.version_reads;
    }
}

#[derive(Default)]
struct AtomicStats {
    lookups: AtomicU64,
    rows_returned: AtomicU64,
    writes: AtomicU64,
    ignored_retractions: AtomicU64,
    version_reads: AtomicU64,
}

impl AtomicStats {
    fn load(&self) -> StoreStats {
        StoreStats {
            lookups: self.lookups.load(Ordering::Relaxed),
            rows_returned: self.rows_returned.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            ignored_retractions: self.ignored_retractions.load(Ordering::Relaxed),
            version_reads: self.version_reads.load(Ordering::Relaxed),
        }
    }
}

struct Table {
    schema: TableSchema,
    index_cf: String,
    /// `primary key → row`, for upsert tables whose index key is not inside
    /// the primary key.
    rows_cf: Option<String>,
    /// Serialises the writers of this table (an upsert reads the version it
    /// replaces, then writes).
    write_lock: Mutex<()>,
    /// Row ids of an insert-only table (taken under `write_lock`).
    next_row_id: AtomicU64,
    generations: RwLock<GenMap>,
    stats: AtomicStats,
}

/// Source tables in RocksDB, looked up by index key; see the module doc.
pub struct IndexLookupStore {
    db: Db,
    tables: RwLock<Vec<Arc<Table>>>,
    write_opts: WriteOptions,
    /// The last generation handed out.
    clock: AtomicU64,
    // Dropped after `db` (field order), so the files go once RocksDB closed.
    _dir: tempfile::TempDir,
}

fn cf_options() -> Options {
    let mut o = Options::default();
    o.set_compression_type(DBCompressionType::None);
    o
}

fn rocks_err(table: &str, error: rocksdb::Error) -> LookupStoreError {
    LookupStoreError::RocksDb {
        table: table.to_string(),
        error,
    }
}

fn encode_cols(row: &[Value], cols: &[usize], out: &mut Vec<u8>) {
    for &c in cols {
        encode_into(std::slice::from_ref(&row[c]), out);
    }
}

impl IndexLookupStore {
    /// A fresh, empty store in a new directory under `parent` (the system
    /// temporary directory when `None`), removed when the store drops.
    pub fn open(parent: Option<&Path>) -> LookupResult<IndexLookupStore> {
        let parent = parent
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        let dir_err = |error: std::io::Error| LookupStoreError::Directory {
            dir: parent.display().to_string(),
            error,
        };
        // Named after this process; a killed run's are removed here.
        let dir = crate::debris::owned_temp_dir(&parent, "joinlab-lookup-").map_err(dir_err)?;
        let mut opts = cf_options();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let db = Db::open(&opts, dir.path()).map_err(|e| rocks_err("<open>", e))?;
        let mut write_opts = WriteOptions::default();
        write_opts.disable_wal(true);
        Ok(IndexLookupStore {
            db,
            tables: RwLock::new(Vec::new()),
            write_opts,
            clock: AtomicU64::new(0),
            _dir: dir,
        })
    }

    /// Declares a table. `index_key` must be non-empty; every column must
    /// exist; `primary_key` (if any) must be non-empty. Names are unique.
    pub fn create_table(
        &self,
        name: &str,
        arity: usize,
        index_key: Vec<usize>,
        primary_key: Option<Vec<usize>>,
    ) -> LookupResult<TableId> {
        let bad = |message: String| LookupStoreError::BadSchema {
            table: name.to_string(),
            message,
        };
        if index_key.is_empty() {
            return Err(bad("the index key is empty".into()));
        }
        let check_cols = |what: &str, cols: &[usize]| -> LookupResult<()> {
            for (i, &c) in cols.iter().enumerate() {
                if c >= arity {
                    return Err(bad(format!(
                        "{what} column {c} does not exist (the table has {arity} columns)"
                    )));
                }
                if cols[..i].contains(&c) {
                    return Err(bad(format!("{what} names column {c} twice")));
                }
            }
            Ok(())
        };
        check_cols("index key", &index_key)?;
        if let Some(pk) = &primary_key {
            if pk.is_empty() {
                return Err(bad("the primary key is empty".into()));
            }
            check_cols("primary key", pk)?;
        }
        let mut tables = self.tables.write().unwrap_or_else(|p| p.into_inner());
        if tables.iter().any(|t| t.schema.name == name) {
            return Err(LookupStoreError::DuplicateTable(name.to_string()));
        }
        let schema = TableSchema {
            name: name.to_string(),
            arity,
            index_key,
            primary_key,
        };
        let id = tables.len();
        let index_cf = format!("lookup{id}/{name}/index");
        let rows_cf = (schema.primary_key.is_some() && !schema.index_in_primary_key())
            .then(|| format!("lookup{id}/{name}/rows"));
        for cf in std::iter::once(&index_cf).chain(rows_cf.as_ref()) {
            self.db
                .create_cf(cf, &cf_options())
                .map_err(|e| rocks_err(name, e))?;
        }
        tables.push(Arc::new(Table {
            schema,
            index_cf,
            rows_cf,
            write_lock: Mutex::new(()),
            next_row_id: AtomicU64::new(0),
            generations: RwLock::new(GenMap::with_hasher(foldhash::fast::FixedState::with_seed(
                0x6e6,
            ))),
            stats: AtomicStats::default(),
        }));
        Ok(TableId(id))
    }

    fn table(&self, id: TableId) -> LookupResult<Arc<Table>> {
        let tables = self.tables.read().unwrap_or_else(|p| p.into_inner());
        tables
            .get(id.0)
            .cloned()
            .ok_or(LookupStoreError::UnknownTable(id))
    }

    fn cf(&self, name: &str) -> Arc<BoundColumnFamily<'_>> {
        self.db
            .cf_handle(name)
            .expect("column family created with its table")
    }

    /// The table named `name`, if created (a cascaded delta join looks up
    /// the tables its lower delta join created).
    pub fn table_id(&self, name: &str) -> Option<TableId> {
        let tables = self.tables.read().unwrap_or_else(|p| p.into_inner());
        tables
            .iter()
            .position(|t| t.schema.name == name)
            .map(TableId)
    }

    pub fn schema(&self, table: TableId) -> LookupResult<TableSchema> {
        Ok(self.table(table)?.schema.clone())
    }

    /// Applies one change of a source to its table (see the module doc).
    pub fn apply(&self, table: TableId, change: &Change) -> LookupResult<()> {
        let t = self.table(table)?;
        let name = &t.schema.name;
        let row = &change.row;
        if row.len() != t.schema.arity {
            return Err(LookupStoreError::Arity {
                table: name.clone(),
                expected: t.schema.arity,
                got: row.len(),
                row: DisplayRow(row).to_string(),
            });
        }
        match change.kind {
            RowKind::Delete => Err(LookupStoreError::Delete {
                table: name.clone(),
                row: DisplayRow(row).to_string(),
            }),
            RowKind::UpdateBefore | RowKind::UpdateAfter if t.schema.primary_key.is_none() => {
                Err(LookupStoreError::UpdateWithoutPrimaryKey {
                    table: name.clone(),
                    kind: change.kind,
                    row: DisplayRow(row).to_string(),
                })
            }
            RowKind::UpdateBefore => {
                t.stats.ignored_retractions.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            RowKind::Insert | RowKind::UpdateAfter => self.put(&t, change.kind, row),
        }
    }

    /// Applies every change of `batch` in order.
    pub fn apply_all(&self, table: TableId, batch: &[Change]) -> LookupResult<()> {
        batch.iter().try_for_each(|c| self.apply(table, c))
    }

    fn put(&self, t: &Table, kind: RowKind, row: &[Value]) -> LookupResult<()> {
        let name = &t.schema.name;
        let mut ik = Vec::new();
        encode_cols(row, &t.schema.index_key, &mut ik);
        let mut value = Vec::new();
        encode_into(row, &mut value);
        let mut key = ik.clone();
        let mut batch = WriteBatch::default();
        let mut old_ik: Option<Vec<u8>> = None;

        let _guard = t.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let index_cf = self.cf(&t.index_cf);
        match &t.schema.primary_key {
            None => {
                let id = t.next_row_id.fetch_add(1, Ordering::Relaxed) as i64;
                encode_into(&[Value::Int(id)], &mut key);
            }
            Some(pk) => {
                if pk.iter().any(|&c| row[c].is_null()) {
                    return Err(LookupStoreError::NullPrimaryKey {
                        table: name.clone(),
                        kind,
                        row: DisplayRow(row).to_string(),
                    });
                }
                let mut pk_bytes = Vec::new();
                encode_cols(row, pk, &mut pk_bytes);
                key.extend_from_slice(&pk_bytes);
                if let Some(rows_cf) = &t.rows_cf {
                    let rows_cf = self.cf(rows_cf);
                    t.stats.version_reads.fetch_add(1, Ordering::Relaxed);
                    let old = self
                        .db
                        .get_pinned_cf(&rows_cf, &pk_bytes)
                        .map_err(|e| rocks_err(name, e))?;
                    if let Some(old) = old {
                        let old = decode_all(&old)
                            .filter(|r| r.len() == t.schema.arity)
                            .ok_or_else(|| LookupStoreError::Corrupt(name.clone()))?;
                        let mut oik = Vec::new();
                        encode_cols(&old, &t.schema.index_key, &mut oik);
                        if oik != ik {
                            let mut old_key = oik.clone();
                            old_key.extend_from_slice(&pk_bytes);
                            batch.delete_cf(&index_cf, old_key);
                            old_ik = Some(oik);
                        }
                    }
                    batch.put_cf(&rows_cf, &pk_bytes, &value);
                }
            }
        }
        batch.put_cf(&index_cf, &key, &value);
        self.db
            .write_opt(batch, &self.write_opts)
            .map_err(|e| rocks_err(name, e))?;
        drop(index_cf);
        t.stats.writes.fetch_add(1, Ordering::Relaxed);
        // Data first, generations after (see the module doc).
        let mut gens = t.generations.write().unwrap_or_else(|p| p.into_inner());
        if let Some(oik) = old_ik {
            let g = self.clock.fetch_add(1, Ordering::SeqCst) + 1;
            gens.insert(oik, g);
        }
        let g = self.clock.fetch_add(1, Ordering::SeqCst) + 1;
        gens.insert(ik, g);
        Ok(())
    }

    fn encode_key(t: &Table, key: &[Value]) -> LookupResult<Vec<u8>> {
        if key.len() != t.schema.index_key.len() {
            return Err(LookupStoreError::KeyArity {
                table: t.schema.name.clone(),
                expected: t.schema.index_key.len(),
                got: key.len(),
            });
        }
        let mut prefix = Vec::new();
        encode_into(key, &mut prefix);
        Ok(prefix)
    }

    fn generation_of(t: &Table, prefix: &[u8]) -> Generation {
        let gens = t.generations.read().unwrap_or_else(|p| p.into_inner());
        gens.get(prefix).copied().unwrap_or(0)
    }

    /// The generation of the last write that touched `key` in `table`
    /// (0 if none). Not counted as a lookup.
    pub fn generation(&self, table: TableId, key: &[Value]) -> LookupResult<Generation> {
        let t = self.table(table)?;
        let prefix = Self::encode_key(&t, key)?;
        Ok(Self::generation_of(&t, &prefix))
    }

    /// Every current row of `table` whose index key equals `key` (values in
    /// index key order), in key order (index key, then primary key or
    /// insertion order).
    pub fn lookup(&self, table: TableId, key: &[Value]) -> LookupResult<Vec<Row>> {
        Ok(self.lookup_versioned(table, key)?.1)
    }

    /// [`Self::lookup`] with the generation read before the scan: the rows
    /// are current while [`Self::generation`] still returns it.
    pub fn lookup_versioned(
        &self,
        table: TableId,
        key: &[Value],
    ) -> LookupResult<(Generation, Vec<Row>)> {
        let t = self.table(table)?;
        let prefix = Self::encode_key(&t, key)?;
        let generation = Self::generation_of(&t, &prefix);
        let rows = self.scan_prefix(&t, &prefix)?;
        t.stats.lookups.fetch_add(1, Ordering::Relaxed);
        t.stats
            .rows_returned
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        Ok((generation, rows))
    }

    fn scan_prefix(&self, t: &Table, prefix: &[u8]) -> LookupResult<Vec<Row>> {
        let name = &t.schema.name;
        let cf = self.cf(&t.index_cf);
        let mut it = self.db.raw_iterator_cf(&cf);
        it.seek(prefix);
        let mut rows = Vec::new();
        while it.valid() {
            let k = it.key().expect("valid iterator has a key");
            if !k.starts_with(prefix) {
                break;
            }
            let v = it.value().expect("valid iterator has a value");
            let row = decode_all(v)
                .filter(|r| r.len() == t.schema.arity)
                .ok_or_else(|| LookupStoreError::Corrupt(name.clone()))?;
            rows.push(row);
            it.next();
        }
        it.status().map_err(|e| rocks_err(name, e))?;
        Ok(rows)
    }

    /// Every current row of `table`, in key order (for tests and reports;
    /// not counted).
    pub fn scan(&self, table: TableId) -> LookupResult<Vec<Row>> {
        let t = self.table(table)?;
        self.scan_prefix(&t, &[])
    }

    /// The counters of one table.
    pub fn stats(&self, table: TableId) -> LookupResult<StoreStats> {
        Ok(self.table(table)?.stats.load())
    }

    /// The counters summed over every table.
    pub fn total_stats(&self) -> StoreStats {
        let tables = self.tables.read().unwrap_or_else(|p| p.into_inner());
        let mut s = StoreStats::default();
        for t in tables.iter() {
            s.merge(&t.stats.load());
        }
        s
    }

    /// RocksDB's own estimate of a table's bytes (live SST data plus
    /// memtables, over its column families).
    pub fn physical_bytes(&self, table: TableId) -> LookupResult<u64> {
        let t = self.table(table)?;
        let mut total = 0;
        for cf in std::iter::once(&t.index_cf).chain(t.rows_cf.as_ref()) {
            let handle = self.cf(cf);
            for prop in [
                "rocksdb.estimate-live-data-size",
                "rocksdb.cur-size-all-mem-tables",
            ] {
                total += self
                    .db
                    .property_int_value_cf(&handle, prop)
                    .ok()
                    .flatten()
                    .unwrap_or(0);
            }
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn store_is_send_and_sync() {
        assert_send_sync::<IndexLookupStore>();
    }
}
