-- A skewed group aggregate: COUNT(*) and SUM(v) per key over a Zipf-skewed
-- key column. campaigns/demo.toml fills the ${...} placeholders below with
-- its sweep parameters (rows, keys, skew), so run it with `lab campaign`
-- (or `lab tune` after replacing them), not as it is.

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
