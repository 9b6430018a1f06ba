-- The script of campaigns/filter-vs-case-when.toml: Flink's "Use FILTER
-- Modifier on Distinct Aggregates" (Performance Tuning). The same three
-- unique-visitor counts per day, written twice over the same page views:
--
-- - uv_case_when: COUNT(DISTINCT CASE WHEN ... THEN user_id END) gives each
--   aggregate its own distinct argument, so each keeps its own distinct map
--   (three maps: all users, app users, web users);
-- - uv_filter: COUNT(DISTINCT user_id) FILTER (WHERE ...) keeps the argument
--   user_id for all three, so they share one distinct map from user_id to
--   one count per aggregate.
--
-- Both INSERTs compute the same rows. The campaign fills ${rows} and
-- ${users} (the number of distinct user ids; more users = more distinct
-- state); run it with `lab campaign campaigns/filter-vs-case-when.toml`,
-- not as it is.

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
  'users'              = '${users}',
  'user-zipf-exponent' = '1.1',
  'flag-weights'       = '40,40,15,5',
  'seed'               = '1'
);

CREATE TABLE uv_case_when (
  `day`      INT,
  total_uv BIGINT,
  app_uv   BIGINT,
  web_uv   BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE uv_filter (
  `day`      INT,
  total_uv BIGINT,
  app_uv   BIGINT,
  web_uv   BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO uv_case_when
SELECT
  `day`,
  COUNT(DISTINCT user_id) AS total_uv,
  COUNT(DISTINCT CASE WHEN flag IN ('android', 'iphone') THEN user_id ELSE NULL END) AS app_uv,
  COUNT(DISTINCT CASE WHEN flag IN ('web', 'other') THEN user_id ELSE NULL END) AS web_uv
FROM T
GROUP BY `day`;

INSERT INTO uv_filter
SELECT
  `day`,
  COUNT(DISTINCT user_id) AS total_uv,
  COUNT(DISTINCT user_id) FILTER (WHERE flag IN ('android', 'iphone')) AS app_uv,
  COUNT(DISTINCT user_id) FILTER (WHERE flag IN ('web', 'other')) AS web_uv
FROM T
GROUP BY `day`;
