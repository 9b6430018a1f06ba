-- The script of campaigns/checkpoint-cost.toml: what a checkpoint costs
-- when the state is large and each interval changes little of it.
-- ${rows} events numbered 0, 1, ...: the first ${keys} each create a key
-- of their own, every later one updates one of ${active} keys (spread over
-- them by a multiplicative step), so between two checkpoints after the
-- first ${keys} rows at most ${active} keys change.
--
-- Run it with `lab campaign campaigns/checkpoint-cost.toml`, not as it is.

SET 'lab.clock' = 'deterministic';

CREATE TABLE ev (
  n BIGINT,
  v BIGINT
) WITH (
  'connector'      = 'datagen',
  'number-of-rows' = '${rows}',
  'fields.n.kind'  = 'sequence',
  'fields.n.start' = '0',
  'fields.n.end'   = '${rows}',
  'fields.v.min'   = '1',
  'fields.v.max'   = '100',
  'seed'           = '1'
);

CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT) WITH ('connector' = 'blackhole');

INSERT INTO per_key
SELECT k, COUNT(*), SUM(v)
FROM (
  SELECT CASE WHEN n < ${keys} THEN n ELSE MOD(n * 7919, ${active}) END AS k, v
  FROM ev
)
GROUP BY k;
