-- The script of campaigns/minibatch-join.toml: Flink's MiniBatch regular
-- join (Performance Tuning, "MiniBatch Regular Joins").
--
-- Three `tenant` tables (upsert streams keyed by (tenant_id, row_id), one
-- row per tenant, no deletes) LEFT JOINed on tenant_id into a retract sink.
-- Each table emits ${changes} changes: first one insert per row, then
-- updates (-U old, +U new) of random live rows, a fraction ${update_ratio}
-- of the changes; so the input volume is the same at every ratio, and the
-- higher the ratio, the fewer rows (changes * (1 - update_ratio)) and the
-- more updates each of them gets.
--
-- One record at a time, every update runs through both joins and reaches
-- the sink as a -U/+U pair, and a left row that arrives before its match
-- is emitted NULL-padded and then retracted. With mini-batch, each join
-- buffers a bundle per input and folds it before joining: successive
-- updates of one row keep the last, an insert followed by updates becomes
-- one insert, and a retraction followed by its accumulate is processed as a
-- pair, which suppresses the redundant -D/+I of NULL-padded rows. The
-- campaign fills ${...} and sets mini-batch per variant; run it with
-- `lab campaign campaigns/minibatch-join.toml`, not as it is.

CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${changes}', 'number-of-changes' = '${changes}',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '0', 'seed' = '1');

CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${changes}', 'number-of-changes' = '${changes}',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '1', 'seed' = '1');

CREATE TABLE t2 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${changes}', 'number-of-changes' = '${changes}',
  'update-ratio' = '${update_ratio}', 'payload-length' = '16', 'table-index' = '2', 'seed' = '1');

CREATE TABLE joined (
  tenant_id BIGINT,
  p0 STRING,
  p1 STRING,
  p2 STRING
) WITH ('connector' = 'blackhole');

INSERT INTO joined
SELECT t0.tenant_id, t0.payload, t1.payload, t2.payload
FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id;
