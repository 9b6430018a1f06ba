-- A skewed group aggregate: COUNT(*) and SUM(v) per key over a Zipf-skewed
-- key column. The ${...} below are template parameters: campaigns/demo.toml
-- fills them with its sweep (rows, keys, skew); `lab run`, `lab explain`
-- and `lab tune` with --param, e.g.
--   lab run examples/demo_agg.sql --param rows=1000000 --param keys=10000 --param skew=1.2

CREATE TABLE src (
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
  'seed'                   = '1'
);

CREATE TABLE per_key (
  k     BIGINT,
  cnt   BIGINT,
  total BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO per_key
SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
