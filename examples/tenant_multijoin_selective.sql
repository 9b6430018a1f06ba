-- The regime where MultiJoin loses: many rows per common key (50 per
-- tenant per table) and joins that add a second, selective condition
-- (row_id equality). The binary chain's intermediate result stays small
-- (one row per (tenant, row)), while MultiJoin, partitioned by tenant_id
-- only, walks the other inputs' rows of the tenant for every record.
-- Compare:
--   lab run examples/tenant_multijoin_selective.sql
--   lab run examples/tenant_multijoin_selective.sql --set table.optimizer.multi-join.enabled=true
-- and read "state rows visited per input record" and the throughput.

CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING, PRIMARY KEY (tenant_id, row_id) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'tenants' = '400', 'rows-per-tenant' = '50', 'table-index' = '0');
CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING, PRIMARY KEY (tenant_id, row_id) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'tenants' = '400', 'rows-per-tenant' = '50', 'table-index' = '1');
CREATE TABLE t2 (tenant_id BIGINT, row_id BIGINT, payload STRING, PRIMARY KEY (tenant_id, row_id) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'tenants' = '400', 'rows-per-tenant' = '50', 'table-index' = '2');
CREATE TABLE t3 (tenant_id BIGINT, row_id BIGINT, payload STRING, PRIMARY KEY (tenant_id, row_id) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'tenants' = '400', 'rows-per-tenant' = '50', 'table-index' = '3');

CREATE TABLE joined (tenant_id BIGINT, row_id BIGINT, p0 STRING, p1 STRING, p2 STRING, p3 STRING)
  WITH ('connector' = 'blackhole');

INSERT INTO joined
SELECT t0.tenant_id, t0.row_id, t0.payload, t1.payload, t2.payload, t3.payload
FROM t0
JOIN t1 ON t0.tenant_id = t1.tenant_id AND t0.row_id = t1.row_id
JOIN t2 ON t0.tenant_id = t2.tenant_id AND t1.row_id = t2.row_id
JOIN t3 ON t0.tenant_id = t3.tenant_id AND t2.row_id = t3.row_id;
