-- The script of campaigns/lab-vs-flink.toml: the same work on the lab and
-- on Flink, one INSERT per workload (a variant's `sinks` picks its own):
--
--   agg_uniform, agg_zipf: SELECT k, COUNT(*), SUM(v) ... GROUP BY k over
--     ${rows} rows whose ${keys} keys are uniform, and Zipf-skewed with
--     exponent ${skew} (a few keys take most rows);
--   joined10: the 10-way tenant LEFT join of examples/tenant_multijoin_10way.sql
--     (tables t0..t9 of `tenant` upserts keyed by (tenant_id, row_id), the
--     fraction ${update_ratio} of their changes updates, LEFT JOINed on
--     tenant_id); t1, t2 and t3 hold ${rows_per_tenant} rows per tenant,
--     the others one.
--
-- The sinks have no primary key: they receive the retract changelog on both
-- engines (on Flink through the lab's capture sink, which keeps -U).
-- Run it with `lab campaign campaigns/lab-vs-flink.toml`, not as it is.

-- Flink's sources are tasks of their own that run ahead of a pipeline of
-- joins; the lab's breadth-first delivery models that, so the two engines
-- emit the same changelog for the join chain (without updates, exactly the
-- same rows; docs/campaigns.md). Flink ignores the lab's keys.
SET 'lab.source.delivery' = 'breadth-first';

CREATE TABLE src_uniform (
  k BIGINT,
  v BIGINT
) WITH (
  'connector'             = 'datagen',
  'number-of-rows'        = '${rows}',
  'fields.k.kind'         = 'random',
  'fields.k.min'          = '1',
  'fields.k.max'          = '${keys}',
  'fields.v.min'          = '1',
  'fields.v.max'          = '100',
  'seed'                  = '1'
);

CREATE TABLE src_zipf (
  k BIGINT,
  v BIGINT
) WITH (
  'connector'              = 'datagen',
  'number-of-rows'         = '${rows}',
  'fields.k.kind'          = 'random',
  'fields.k.min'           = '1',
  'fields.k.max'           = '${keys}',
  'fields.k.distribution'  = 'zipf',
  'fields.k.zipf-exponent' = '${skew}',
  'fields.v.min'           = '1',
  'fields.v.max'           = '100',
  'seed'                   = '2'
);

CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '0', 'seed' = '1');

CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '${rows_per_tenant}',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '1', 'seed' = '1');

CREATE TABLE t2 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '${rows_per_tenant}',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '2', 'seed' = '1');

CREATE TABLE t3 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '${rows_per_tenant}',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '3', 'seed' = '1');

CREATE TABLE t4 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '4', 'seed' = '1');

CREATE TABLE t5 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '5', 'seed' = '1');

CREATE TABLE t6 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '6', 'seed' = '1');

CREATE TABLE t7 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '7', 'seed' = '1');

CREATE TABLE t8 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '8', 'seed' = '1');

CREATE TABLE t9 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '9', 'seed' = '1');

CREATE TABLE agg_uniform (k BIGINT, cnt BIGINT, total BIGINT) WITH ('connector' = 'blackhole');

CREATE TABLE agg_zipf (k BIGINT, cnt BIGINT, total BIGINT) WITH ('connector' = 'blackhole');

CREATE TABLE joined10 (
  tenant_id BIGINT,
  p0 STRING, p1 STRING, p2 STRING, p3 STRING, p4 STRING,
  p5 STRING, p6 STRING, p7 STRING, p8 STRING, p9 STRING
) WITH ('connector' = 'blackhole');

INSERT INTO agg_uniform SELECT k, COUNT(*), SUM(v) FROM src_uniform GROUP BY k;

INSERT INTO agg_zipf SELECT k, COUNT(*), SUM(v) FROM src_zipf GROUP BY k;

INSERT INTO joined10
SELECT
  t0.tenant_id,
  t0.payload, t1.payload, t2.payload, t3.payload, t4.payload,
  t5.payload, t6.payload, t7.payload, t8.payload, t9.payload
FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id
LEFT JOIN t3 ON t0.tenant_id = t3.tenant_id
LEFT JOIN t4 ON t0.tenant_id = t4.tenant_id
LEFT JOIN t5 ON t0.tenant_id = t5.tenant_id
LEFT JOIN t6 ON t0.tenant_id = t6.tenant_id
LEFT JOIN t7 ON t0.tenant_id = t7.tenant_id
LEFT JOIN t8 ON t0.tenant_id = t8.tenant_id
LEFT JOIN t9 ON t0.tenant_id = t9.tenant_id;
