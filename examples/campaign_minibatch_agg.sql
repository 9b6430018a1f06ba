-- The script of campaigns/minibatch-agg.toml: Flink's MiniBatch aggregation
-- (Performance Tuning, "MiniBatch Aggregation"). A group aggregate
--
--   SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k
--
-- over a key that follows a Zipf distribution. One record at a time, every
-- record is a state read and a state write of its key's accumulator; with
-- mini-batch, a bundle is folded per key first, so a key that occurs n times
-- in a bundle costs one read and one write instead of n. The campaign fills
-- ${rows} and ${skew} (the Zipf exponent of k; higher = fewer, hotter keys)
-- and sets mini-batch and the state backend per variant, so run it with
-- `lab campaign campaigns/minibatch-agg.toml`, not as it is.

CREATE TABLE src (
  k BIGINT,
  v BIGINT
) WITH (
  'connector'              = 'datagen',
  'number-of-rows'         = '${rows}',
  'fields.k.kind'          = 'random',
  'fields.k.min'           = '1',
  'fields.k.max'           = '100000',
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
