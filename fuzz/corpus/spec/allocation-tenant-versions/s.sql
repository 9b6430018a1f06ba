-- The script of campaigns/multijoin-vs-binary.toml: Flink's MultiJoin
-- benchmark shape (Performance Tuning, "MultiJoin Operator") as four
-- INSERTs, one per sink, so that one campaign point measures every shape:
--
--   joined3, joined5, joined10: t0 LEFT JOIN t1 ... ON tenant_id over the
--     first 3, 5 and 10 tables (the 10-way one is
--     examples/tenant_multijoin_10way.sql). t1, t2 and t3 hold
--     ${rows_per_tenant} rows per tenant, the others one, so the result
--     has rows_per_tenant^2 (3 tables) or rows_per_tenant^3 (5 and 10
--     tables) rows per tenant: the record amplification that makes a chain
--     of binary joins keep large intermediate results.
--   selective: a 4-way INNER join ON tenant_id AND row_id over s0..s3, with
--     10 * rows_per_tenant rows per tenant (the '${rows_per_tenant}0'
--     below) over ${selective_tenants} tenants: the regime where MultiJoin
--     loses (examples/tenant_multijoin_selective.sql). Each binary join is
--     partitioned by (tenant_id, row_id) and its intermediate result stays
--     one row per key, while MultiJoin, partitioned by tenant_id, walks the
--     tenant's rows of the other inputs for every record.
--
-- Every INSERT is its own job reading its own copy of its sources. The
-- campaign fills the ${...} parameters and sets the join strategy and state
-- backend per variant; run it with
-- `lab campaign campaigns/multijoin-vs-binary.toml`, not as it is.

CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '0', 'seed' = '1');

CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '${rows_per_tenant}',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '1', 'seed' = '1');

CREATE TABLE t2 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '${rows_per_tenant}',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '2', 'seed' = '1');

CREATE TABLE t3 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '${rows_per_tenant}',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '3', 'seed' = '1');

CREATE TABLE t4 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '4', 'seed' = '1');

CREATE TABLE t5 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '5', 'seed' = '1');

CREATE TABLE t6 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '6', 'seed' = '1');

CREATE TABLE t7 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '7', 'seed' = '1');

CREATE TABLE t8 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '8', 'seed' = '1');

CREATE TABLE t9 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${tenants}', 'rows-per-tenant' = '1',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '9', 'seed' = '1');

CREATE TABLE s0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${selective_tenants}', 'rows-per-tenant' = '${rows_per_tenant}0',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '0', 'seed' = '1');

CREATE TABLE s1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${selective_tenants}', 'rows-per-tenant' = '${rows_per_tenant}0',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '1', 'seed' = '1');

CREATE TABLE s2 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${selective_tenants}', 'rows-per-tenant' = '${rows_per_tenant}0',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '2', 'seed' = '1');

CREATE TABLE s3 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${selective_tenants}', 'rows-per-tenant' = '${rows_per_tenant}0',
  'update-ratio' = '0.2', 'payload-length' = '16', 'table-index' = '3', 'seed' = '1');

CREATE TABLE joined3 (
  tenant_id BIGINT,
  p0 STRING,
  p1 STRING,
  p2 STRING
) WITH ('connector' = 'blackhole');

CREATE TABLE joined5 (
  tenant_id BIGINT,
  p0 STRING,
  p1 STRING,
  p2 STRING,
  p3 STRING,
  p4 STRING
) WITH ('connector' = 'blackhole');

CREATE TABLE joined10 (
  tenant_id BIGINT,
  p0 STRING,
  p1 STRING,
  p2 STRING,
  p3 STRING,
  p4 STRING,
  p5 STRING,
  p6 STRING,
  p7 STRING,
  p8 STRING,
  p9 STRING
) WITH ('connector' = 'blackhole');

CREATE TABLE selective (tenant_id BIGINT, row_id BIGINT, p0 STRING, p1 STRING, p2 STRING, p3 STRING)
  WITH ('connector' = 'blackhole');

INSERT INTO joined10
SELECT
  t0.tenant_id,
  t0.payload,
  t1.payload,
  t2.payload,
  t3.payload,
  t4.payload,
  t5.payload,
  t6.payload,
  t7.payload,
  t8.payload,
  t9.payload
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

INSERT INTO joined5
SELECT
  t0.tenant_id,
  t0.payload,
  t1.payload,
  t2.payload,
  t3.payload,
  t4.payload
FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id
LEFT JOIN t3 ON t0.tenant_id = t3.tenant_id
LEFT JOIN t4 ON t0.tenant_id = t4.tenant_id;

INSERT INTO joined3
SELECT
  t0.tenant_id,
  t0.payload,
  t1.payload,
  t2.payload
FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id;

INSERT INTO selective
SELECT s0.tenant_id, s0.row_id, s0.payload, s1.payload, s2.payload, s3.payload
FROM s0
JOIN s1 ON s0.tenant_id = s1.tenant_id AND s0.row_id = s1.row_id
JOIN s2 ON s0.tenant_id = s2.tenant_id AND s1.row_id = s2.row_id
JOIN s3 ON s0.tenant_id = s3.tenant_id AND s2.row_id = s3.row_id;
