//! Jobs the checkpoint and restart tests share (`checkpoint_resume.rs`,
//! `restart_strategy.rs`, `savepoint_upgrade.rs`).

macro_rules! tenant_tables {
    () => {
        "
CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '1000', 'number-of-changes' = '1500',
  'update-ratio' = '0.5', 'payload-length' = '4', 'table-index' = '0', 'seed' = '1');
CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '1000', 'number-of-changes' = '1500',
  'update-ratio' = '0.5', 'payload-length' = '4', 'table-index' = '1', 'seed' = '1');
CREATE TABLE joined (tenant_id BIGINT, p0 STRING, p1 STRING)
  WITH ('connector' = 'blackhole');
"
    };
}

macro_rules! tenant_join {
    () => {
        "INSERT INTO joined
SELECT t0.tenant_id, t0.payload, t1.payload FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id;
"
    };
}

/// Two upsert streams (one live row per tenant, then updates) and a sink
/// for their join.
pub const TENANT_TABLES: &str = tenant_tables!();

/// The LEFT join of [`TENANT_TABLES`]' streams into `joined`.
pub const TENANT_JOIN: &str = tenant_join!();

/// The two streams LEFT JOINed: 3,000 changes in, a join state per side.
pub const TENANT_LEFT_JOIN: &str = concat!(tenant_tables!(), tenant_join!());
