-- The MultiJoin benchmark shape (Flink 2.x Performance Tuning, "MultiJoin"):
-- ten upsert tables keyed by (tenant_id, row_id), LEFT JOINed on tenant_id.
--
-- A chain of binary joins keeps both inputs of every join, including the
-- eight intermediate results; one MultiJoin keeps only the ten inputs and
-- recomputes the join per record from their state. Compare the state
-- entries, bytes and accesses per operator:
--
--   lab run examples/tenant_multijoin_10way.sql
--   lab run examples/tenant_multijoin_10way.sql \
--       --set table.optimizer.multi-join.enabled=true
--   ... and the mini-batch regular join:
--       --set table.exec.mini-batch.enabled=true \
--       --set table.exec.mini-batch.allow-latency='5 s' \
--       --set table.exec.mini-batch.size=5000
--
-- Knobs (each table's options): 'tenants' (join keys), 'rows-per-tenant'
-- (rows per key per table: the result has rows-per-tenant^10 rows per
-- tenant, and MultiJoin's recomputation grows with it, so raise it
-- carefully), 'update-ratio' (fraction of changes that are -U/+U updates
-- of a live row), 'payload-length' (row width; declaring extra columns
-- c1 BIGINT, c2 BIGINT, ... widens rows further), 'insert-order'
-- ('tenant-major' or 'random'). Sizes are small by default: raise 'tenants'
-- for the benchmark's scale.

CREATE TABLE t0 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '0',
  'seed'            = '1'
);

CREATE TABLE t1 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '1',
  'seed'            = '1'
);

CREATE TABLE t2 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '2',
  'seed'            = '1'
);

CREATE TABLE t3 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '3',
  'seed'            = '1'
);

CREATE TABLE t4 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '4',
  'seed'            = '1'
);

CREATE TABLE t5 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '5',
  'seed'            = '1'
);

CREATE TABLE t6 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '6',
  'seed'            = '1'
);

CREATE TABLE t7 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '7',
  'seed'            = '1'
);

CREATE TABLE t8 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '8',
  'seed'            = '1'
);

CREATE TABLE t9 (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '1000',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '16',
  'table-index'     = '9',
  'seed'            = '1'
);

CREATE TABLE joined (
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

INSERT INTO joined
SELECT
  t0.tenant_id,
  t0.payload AS p0,
  t1.payload AS p1,
  t2.payload AS p2,
  t3.payload AS p3,
  t4.payload AS p4,
  t5.payload AS p5,
  t6.payload AS p6,
  t7.payload AS p7,
  t8.payload AS p8,
  t9.payload AS p9
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
