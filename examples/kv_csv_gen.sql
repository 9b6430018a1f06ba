-- Writes examples/data/kv.csv: 2,000,000 rows `k,v`, k uniform over
-- 100,000 keys, v in 1..100 (seeded, so every run writes the same file).
-- The input of examples/kv_group_agg.sql; scripts/e2e_group_agg.sh runs both.

CREATE TABLE gen (
  k BIGINT,
  v BIGINT
) WITH (
  'connector'      = 'datagen',
  'number-of-rows' = '2000000',
  'fields.k.kind'  = 'random',
  'fields.k.min'   = '0',
  'fields.k.max'   = '99999',
  'fields.v.min'   = '1',
  'fields.v.max'   = '100',
  'seed'           = '7'
);

CREATE TABLE kv (
  k BIGINT,
  v BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'data/kv.csv', 'format' = 'csv');

INSERT INTO kv SELECT k, v FROM gen;
