-- Flink's split-distinct example (Performance Tuning, "Split Distinct
-- Aggregation"): unique visitors per day, where day 1 is hot.
--
--   SELECT day, COUNT(DISTINCT user_id) FROM T GROUP BY day
--
-- One record at a time, every row of the hot day lands on one subtask and
-- one distinct-state map. Flip the split (inner aggregate over
-- (day, hash(user_id) % bucket_num), outer SUM) and compare the hotspot
-- factor and per-operator state:
--
--   lab run examples/uv_split_distinct.sql --set parallelism.default=4
--   lab run examples/uv_split_distinct.sql --set parallelism.default=4 \
--       --set table.optimizer.distinct-agg.split.enabled=true \
--       --set table.optimizer.distinct-agg.split.bucket-num=1024
--
-- Add mini-batch (and with it local-global) as Flink's guide does:
--       --set table.exec.mini-batch.enabled=true \
--       --set table.exec.mini-batch.allow-latency='5 s' \
--       --set table.exec.mini-batch.size=5000
--
-- The skew knobs are the table's options: 'hot-day-share' (fraction of
-- rows on day 1), 'user-zipf-exponent' (0 = uniform users), 'users', 'days'.
-- The second INSERT is the guide's FILTER variant, whose three distinct
-- aggregates on user_id share one distinct-state map.

-- (`day` is a reserved word in Flink SQL: the backquotes let Flink run the
-- script as it is, e.g. with `lab compare`.)

CREATE TABLE T (
  `day`     INT,
  user_id BIGINT,
  flag    STRING
) WITH (
  'connector'          = 'uv',
  'number-of-rows'     = '500000',
  'days'               = '7',
  'hot-day-share'      = '0.5',
  'users'              = '100000',
  'user-zipf-exponent' = '1.1',
  'flag-weights'       = '40,40,15,5',
  'seed'               = '1'
);

CREATE TABLE uv_per_day (
  `day` INT,
  uv  BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE uv_per_day_by_channel (
  `day`      INT,
  total_uv BIGINT,
  app_uv   BIGINT,
  web_uv   BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO uv_per_day
SELECT `day`, COUNT(DISTINCT user_id) AS uv
FROM T
GROUP BY `day`;

INSERT INTO uv_per_day_by_channel
SELECT
  `day`,
  COUNT(DISTINCT user_id) AS total_uv,
  COUNT(DISTINCT user_id) FILTER (WHERE flag IN ('android', 'iphone')) AS app_uv,
  COUNT(DISTINCT user_id) FILTER (WHERE flag IN ('web', 'other')) AS web_uv
FROM T
GROUP BY `day`;
