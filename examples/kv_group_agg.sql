-- The end-to-end measure of the foundation: COUNT(*) and SUM(v) per key
-- over a 2M-row CSV with 100k keys (examples/kv_csv_gen.sql writes it),
-- one record at a time on the heap backend at parallelism 1. CSV parsing
-- is part of the cost. scripts/e2e_group_agg.sh runs it three times.

CREATE TABLE kv (
  k BIGINT,
  v BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'data/kv.csv', 'format' = 'csv');

CREATE TABLE per_key (
  k     BIGINT,
  cnt   BIGINT,
  total BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO per_key SELECT k, COUNT(*), SUM(v) FROM kv GROUP BY k;
