//! The `tenant` connector: one input of the N-way MultiJoin benchmark.
//!
//! Semantics. Flink's MultiJoin benchmark joins N tables that all carry a
//! `tenant_id`; each table is an upsert stream with primary key
//! `(tenant_id, row_id)`. A `tenant` table declares exactly
//!
//! ```sql
//! tenant_id BIGINT, row_id BIGINT, payload STRING [, c1 BIGINT, ..., cK BIGINT]
//! ```
//!
//! (the optional `c1..cK`, in that order, widen the rows; `PRIMARY KEY
//! (tenant_id, row_id) NOT ENFORCED` is the key the stream respects) and
//! takes these options:
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `tenants` | `10000` | `tenant_id` is in `1..=tenants` |
//! | `rows-per-tenant` | `1` | rows per tenant in this table: `row_id` is in `1..=rows-per-tenant` |
//! | `update-ratio` | `0.0` | fraction of the emitted changes that are updates, in `[0, 1)` |
//! | `number-of-changes` | see below | inserts plus updates |
//! | `payload-length` | `16` | characters of `payload`, from `[0-9A-Za-z]` (at most 1048576) |
//! | `insert-order` | `'tenant-major'` | `'tenant-major'`: `(1,1), (1,2), ..., (2,1), ...`; `'random'`: a seeded permutation of the same rows (different per `table-index`) |
//! | `table-index` | `0` | a non-negative integer mixed into the seed, so the N tables of one join differ in content (and in order when random) while sharing their keys |
//! | `seed` | `0` | |
//!
//! The stream: first the inserts (`+I`), one per row in the insert order,
//! then the updates. An update picks a live row uniformly at random and
//! emits `-U` with its current values then `+U` with new `payload` and `c`
//! values under the same primary key. Nothing is ever deleted, so every
//! `-U` retracts exactly the row last emitted for its key, and the primary
//! key is unique among live rows at every point of the stream.
//!
//! Counting: an update is one change (emitted as two rows). With `I =
//! tenants * rows-per-tenant` and ratio `r`:
//! - by default the stream inserts all `I` rows and then emits
//!   `round(I * r / (1 - r))` updates, so that a fraction `r` of its
//!   changes are updates;
//! - with `number-of-changes = N` it emits `round(N * r)` updates after
//!   `N - round(N * r)` inserts, which must not exceed `I` (with fewer, the
//!   first rows of the insert order are inserted and only those are updated),
//!   and must be at least 1 when there are updates.
//!
//! `payload` and `c1..cK` of a row are a hash of (seed, table-index,
//! tenant_id, row_id, version), where version counts the row's updates; the
//! `c` values are in `0..1000000`. Updates keep one 32-bit version per row.
//!
//! A batch never ends between the `-U` and `+U` of an update unless the
//! batch size is 1. Speed: a few hashes, the payload string and the row `Vec`
//! per row.

use std::collections::BTreeMap;

use operators::{Change, DataType, Value};
use rand::RngCore;

use super::draw::{below, mix, push_alphanumeric, Permutation, SplitMix};
use super::options::{check_schema, Options};
use crate::error::DatasetError;
use crate::rng::LabRng;
use operators::exec::ChangeSource;
use operators::operator::OpResult;

/// The connector's name.
pub const CONNECTOR: &str = "tenant";

/// The leading columns every `tenant` table declares.
pub const BASE_SCHEMA: [(&str, DataType); 3] = [
    ("tenant_id", DataType::BigInt),
    ("row_id", DataType::BigInt),
    ("payload", DataType::String),
];

const OPTIONS: [&str; 9] = [
    "connector",
    "tenants",
    "rows-per-tenant",
    "update-ratio",
    "number-of-changes",
    "payload-length",
    "insert-order",
    "table-index",
    "seed",
];

/// Longest accepted payload.
const MAX_PAYLOAD_LENGTH: u64 = 1 << 20;

/// Most rows a table with updates may have (one version word per row).
const MAX_ROWS_WITH_UPDATES: u64 = 1 << 31;

/// The `c1..cK` values are in `0..EXTRA_RANGE`.
const EXTRA_RANGE: u64 = 1_000_000;

/// Random streams of the connector (`'te'` in the high bits).
const STREAM: u64 = 0x7465 << 32;

/// The order in which a table's rows are inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOrder {
    /// Tenant 1's rows, then tenant 2's, ...
    TenantMajor,
    /// A seeded permutation of the rows.
    Random,
}

/// A bounded, seeded upsert stream keyed by `(tenant_id, row_id)`.
#[derive(Debug)]
pub struct TenantSource {
    rows_per_tenant: u64,
    inserts: u64,
    updates: u64,
    inserted: u64,
    updated: u64,
    /// `None` for tenant-major order.
    permutation: Option<Permutation>,
    /// Per inserted row (by its position in the insert order), its number
    /// of updates so far; empty when there are no updates. It grows with
    /// the inserts emitted, so a huge `rows` asks for no memory up front.
    versions: Vec<u32>,
    update_rng: LabRng,
    content_key: u64,
    payload_length: usize,
    extra_columns: usize,
    /// The `+U` of an update whose `-U` ended a batch of size 1.
    pending: Option<Vec<Value>>,
    text: String,
}

impl TenantSource {
    /// Validates the options and the declared columns.
    pub fn new(
        options: &BTreeMap<String, String>,
        column_names: &[String],
        types: &[DataType],
    ) -> Result<TenantSource, DatasetError> {
        let opts = Options::new(options, &OPTIONS)?;
        let extra_columns = column_names.len().saturating_sub(BASE_SCHEMA.len());
        let expected = schema(extra_columns);
        check_schema(
            CONNECTOR,
            &expected,
            "optionally followed by c1 BIGINT, c2 BIGINT, ... to widen rows",
            column_names,
            types,
        )?;
        let tenants = opts.int_in("tenants", Some(10_000), 1, i64::MAX as u64)?;
        let rows_per_tenant = opts.int_in("rows-per-tenant", Some(1), 1, i64::MAX as u64)?;
        let rows = tenants.checked_mul(rows_per_tenant).ok_or_else(|| {
            DatasetError::conflict(
                "rows-per-tenant",
                format!("tenants * rows-per-tenant = {tenants} * {rows_per_tenant} exceeds 2^64"),
            )
        })?;
        let ratio = opts.number_in(
            "update-ratio",
            0.0,
            0.0,
            1.0,
            true,
            "a fraction >= 0.0 and < 1.0",
        )?;
        let (inserts, updates) = match opts.get("number-of-changes") {
            None => (rows, (rows as f64 * ratio / (1.0 - ratio)).round() as u64),
            Some(_) => {
                let n = opts.int_in("number-of-changes", None, 0, u64::MAX)?;
                let updates = ((n as f64 * ratio).round() as u64).min(n);
                let inserts = n - updates;
                if inserts > rows {
                    return Err(DatasetError::conflict(
                        "number-of-changes",
                        format!(
                            "{n} changes with update-ratio {ratio} need {inserts} inserts, but the \
                             table has only {rows} rows (tenants * rows-per-tenant)"
                        ),
                    ));
                }
                if inserts == 0 && updates > 0 {
                    return Err(DatasetError::conflict(
                        "number-of-changes",
                        format!(
                            "{n} changes with update-ratio {ratio} are all updates, but updates \
                             need at least one inserted row"
                        ),
                    ));
                }
                (inserts, updates)
            }
        };
        if updates > 0 && rows > MAX_ROWS_WITH_UPDATES {
            return Err(DatasetError::conflict(
                "update-ratio",
                format!(
                    "updates keep a version per row, so the table may have at most \
                     {MAX_ROWS_WITH_UPDATES} rows (tenants * rows-per-tenant), not {rows}"
                ),
            ));
        }
        let payload_length = opts.int_in("payload-length", Some(16), 0, MAX_PAYLOAD_LENGTH)?;
        let order = match opts.get("insert-order").map(str::trim) {
            None | Some("tenant-major") => InsertOrder::TenantMajor,
            Some("random") => InsertOrder::Random,
            Some(other) => {
                return Err(DatasetError::bad_option(
                    "insert-order",
                    other,
                    "'tenant-major' or 'random'",
                ))
            }
        };
        let table_index = opts.int_in("table-index", Some(0), 0, u64::MAX)?;
        let seed = opts.seed()?;
        let base = mix(seed, &[STREAM, table_index]);
        Ok(TenantSource {
            rows_per_tenant,
            inserts,
            updates,
            inserted: 0,
            updated: 0,
            permutation: (order == InsertOrder::Random)
                .then(|| Permutation::new(rows, mix(base, &[1]))),
            versions: Vec::new(),
            update_rng: LabRng::seed_from(base, 2),
            content_key: mix(base, &[3]),
            payload_length: payload_length as usize,
            extra_columns,
            pending: None,
            text: String::with_capacity(payload_length as usize),
        })
    }

    /// Inserts the stream emits.
    pub fn inserts(&self) -> u64 {
        self.inserts
    }

    /// Updates the stream emits (each as a `-U` and a `+U` row).
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Changelog rows the stream emits in all.
    pub fn total_rows(&self) -> u64 {
        self.inserts + 2 * self.updates
    }

    /// The row index (tenant-major) inserted at `position`.
    #[inline]
    fn row_at(&self, position: u64) -> u64 {
        match &self.permutation {
            None => position,
            Some(p) => p.apply(position),
        }
    }

    /// The values of row `index` after `version` updates.
    fn row(&mut self, index: u64, version: u32) -> Vec<Value> {
        let tenant = index / self.rows_per_tenant + 1;
        let row_id = index % self.rows_per_tenant + 1;
        let mut words = SplitMix(mix(self.content_key, &[tenant, row_id, version as u64]));
        self.text.clear();
        push_alphanumeric(&mut self.text, self.payload_length, &mut words);
        let mut row = Vec::with_capacity(BASE_SCHEMA.len() + self.extra_columns);
        row.push(Value::Int(tenant as i64));
        row.push(Value::Int(row_id as i64));
        row.push(Value::str(self.text.as_str()));
        for _ in 0..self.extra_columns {
            row.push(Value::Int(below(words.next_word(), EXTRA_RANGE) as i64));
        }
        row
    }

    /// Picks a live row and returns its old and new values.
    fn update(&mut self) -> (Vec<Value>, Vec<Value>) {
        let position = below(self.update_rng.next_u64(), self.inserts);
        let index = self.row_at(position);
        let version = self.versions[position as usize];
        let next = version.wrapping_add(1);
        self.versions[position as usize] = next;
        self.updated += 1;
        (self.row(index, version), self.row(index, next))
    }
}

/// The schema of a tenant table with `extra` `c` columns.
pub fn schema(extra: usize) -> Vec<(String, DataType)> {
    BASE_SCHEMA
        .iter()
        .map(|(n, t)| (n.to_string(), *t))
        .chain((1..=extra).map(|i| (format!("c{i}"), DataType::BigInt)))
        .collect()
}

impl ChangeSource for TenantSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let before = out.len();
        if max == 0 {
            return Ok(0);
        }
        if let Some(row) = self.pending.take() {
            out.push(Change::update_after(row));
        }
        while self.inserted < self.inserts && out.len() - before < max {
            let index = self.row_at(self.inserted);
            let row = self.row(index, 0);
            out.push(Change::insert(row));
            if self.updates > 0 {
                self.versions.push(0);
            }
            self.inserted += 1;
        }
        while self.updated < self.updates {
            let room = max - (out.len() - before);
            if room == 0 || (room == 1 && out.len() > before) {
                break;
            }
            let (old, new) = self.update();
            out.push(Change::update_before(old));
            if room >= 2 {
                out.push(Change::update_after(new));
            } else {
                self.pending = Some(new);
            }
        }
        Ok(out.len() - before)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}
