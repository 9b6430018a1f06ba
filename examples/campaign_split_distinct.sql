-- The script of campaigns/split-distinct.toml: Flink's split-distinct
-- example (Performance Tuning, "Split Distinct Aggregation"), unique
-- visitors per day where day 1 carries half of the page views.
--
--   SELECT day, COUNT(DISTINCT user_id) FROM T GROUP BY day
--
-- Without the split, every row of the hot day goes to one subtask. With
-- table.optimizer.distinct-agg.split.enabled, the planner rewrites it into
-- an inner aggregate over (day, hash(user_id) % bucket_num) and an outer SUM
-- per day, spreading the hot day over bucket_num keys. The campaign fills
-- ${rows} and sweeps the bucket number and parallelism; run it with
-- `lab campaign campaigns/split-distinct.toml`, not as it is.

-- (`day` is a reserved word in Flink SQL: the backquotes let Flink run the
-- script as it is, e.g. with `lab compare`.)

CREATE TABLE T (
  `day`     INT,
  user_id BIGINT,
  flag    STRING
) WITH (
  'connector'          = 'uv',
  'number-of-rows'     = '${rows}',
  'days'               = '7',
  'hot-day-share'      = '0.5',
  'users'              = '100000',
  'user-zipf-exponent' = '1.1',
  'seed'               = '1'
);

CREATE TABLE uv_per_day (
  `day` INT,
  uv  BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO uv_per_day
SELECT `day`, COUNT(DISTINCT user_id) AS uv
FROM T
GROUP BY `day`;
