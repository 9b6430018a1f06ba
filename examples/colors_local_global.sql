-- Flink's local-global aggregation example (Performance Tuning,
-- "Local-Global Aggregation"): SUM(id) per colour, where most rows are red.
--
--   SELECT color, SUM(id) FROM T GROUP BY color
--
-- One-phase, every red row crosses the shuffle to the one subtask that owns
-- 'red'. Two-phase, a local aggregate before the shuffle folds each bundle
-- into one partial sum per colour, so the shuffle carries a handful of rows
-- per bundle and the hot subtask merges partials. Local-global needs
-- mini-batch; with mini-batch on, agg-phase-strategy AUTO picks two phases:
--
--   lab run examples/colors_local_global.sql --set parallelism.default=4
--   lab run examples/colors_local_global.sql --set parallelism.default=4 \
--       --set table.exec.mini-batch.enabled=true \
--       --set table.exec.mini-batch.allow-latency='5 s' \
--       --set table.exec.mini-batch.size=5000
--   ... and add --set table.optimizer.agg-phase-strategy=ONE_PHASE to see
--   mini-batch alone.
--
-- The skew knob is the table's 'hot-color-share' (fraction of rows that are
-- red; the other colours share the rest evenly). id counts 1, 2, 3, ..., so
-- the sums over all colours add up to n (n + 1) / 2.

CREATE TABLE T (
  color STRING,
  id    BIGINT
) WITH (
  'connector'       = 'colors',
  'number-of-rows'  = '1000000',
  'colors'          = '10',
  'hot-color-share' = '0.8',
  'seed'            = '1'
);

CREATE TABLE sum_per_color (
  color STRING,
  total BIGINT,
  PRIMARY KEY (color) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO sum_per_color
SELECT color, SUM(id) AS total
FROM T
GROUP BY color;
