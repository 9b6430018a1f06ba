-- The script of campaigns/checkpoint-cost-joins.toml: what checkpoints of
-- a 4-way LEFT join cost when it runs as a chain of binary joins, which
-- keeps every intermediate result in state, and as one MultiJoin, which
-- keeps its inputs only.
--
-- t0 holds one row per tenant, t1, t2 and t3 hold ${rows_per_tenant}
-- rows per tenant each, so a tenant's result has rows_per_tenant^3 rows
-- and the chain's intermediate results rows_per_tenant and
-- rows_per_tenant^2 rows. 20% of each table's changes are updates.
--
-- Run it with `lab campaign campaigns/checkpoint-cost-joins.toml`, not as
-- it is: the campaign fills ${...}, switches MultiJoin on per variant and
-- sets the checkpoint interval.

SET 'lab.clock' = 'deterministic';

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

CREATE TABLE joined4 (
  tenant_id BIGINT,
  p0 STRING,
  p1 STRING,
  p2 STRING,
  p3 STRING
) WITH ('connector' = 'blackhole');

INSERT INTO joined4
SELECT t0.tenant_id, t0.payload, t1.payload, t2.payload, t3.payload
FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id
LEFT JOIN t3 ON t0.tenant_id = t3.tenant_id;
