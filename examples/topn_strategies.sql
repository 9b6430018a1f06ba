-- Top-N, as Flink plans ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)
-- kept where rn <= N, on the clicks of clicks_per_user.sql: one query per
-- strategy, chosen from the changelog of the Top-N's input.
--
--   lab explain examples/topn_strategies.sql
--   lab run examples/topn_strategies.sql --changelog out/
--
-- 1. The three longest visits per user over the clicks themselves
--    (insert-only): AppendFastStrategy, which keeps only the top rows.
-- 2. The two most clicked pages per user, COUNT(*) per page: the count
--    only grows, so a page only moves up (UpdateFastStrategy keyed by the
--    aggregate's key; the aggregate need not emit -U).
-- 3. The two pages per user with the longest total dwell minus a
--    penalty, SUM of a value that may be negative: a page may fall, so
--    every row is kept (RetractStrategy, fed -U by the aggregate).

CREATE TABLE clicks (
  user_id STRING,
  url     STRING,
  dwell   INT,
  ts      BIGINT
) WITH (
  'connector' = 'filesystem',
  'path'      = 'clicks.csv',
  'format'    = 'csv'
);

CREATE TABLE longest_visits (
  user_id STRING,
  url     STRING,
  dwell   INT,
  ts      BIGINT,
  rn      BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE top_pages (
  user_id STRING,
  url     STRING,
  clicks  BIGINT,
  rn      BIGINT,
  PRIMARY KEY (user_id, rn) NOT ENFORCED
) WITH ('connector' = 'blackhole');

CREATE TABLE top_scored_pages (
  user_id STRING,
  url     STRING,
  score   BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO longest_visits
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY dwell DESC, ts) AS rn
  FROM clicks
) WHERE rn <= 3;

INSERT INTO top_pages
SELECT * FROM (
  SELECT user_id, url, clicks,
    ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY clicks DESC, url) AS rn
  FROM (SELECT user_id, url, COUNT(*) AS clicks FROM clicks GROUP BY user_id, url)
) WHERE rn <= 2;

INSERT INTO top_scored_pages
SELECT user_id, url, score FROM (
  SELECT user_id, url, score,
    ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, url) AS rn
  FROM (SELECT user_id, url, SUM(dwell - 40) AS score FROM clicks GROUP BY user_id, url)
) WHERE rn <= 2;
