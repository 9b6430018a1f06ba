-- The script of campaigns/local-global-skew.toml: Flink's local-global
-- aggregation example (Performance Tuning, "Local-Global Aggregation").
--
--   SELECT color, SUM(id) FROM T GROUP BY color
--
-- where a share ${hot_share} of the rows are 'red' and the rest are spread
-- evenly over 99 other colours (so 0.01 is no skew at all). One-phase, every
-- row crosses the shuffle to the subtask that owns its colour, and the one
-- that owns 'red' receives that share of all rows. Two-phase, a local
-- aggregate before the shuffle folds each mini-batch bundle into one partial
-- sum per colour, and the global aggregate merges partials. The campaign
-- fills ${rows} and ${hot_share}; run it with
-- `lab campaign campaigns/local-global-skew.toml`, not as it is.

CREATE TABLE T (
  color STRING,
  id    BIGINT
) WITH (
  'connector'       = 'colors',
  'number-of-rows'  = '${rows}',
  'colors'          = '100',
  'hot-color-share' = '${hot_share}',
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
