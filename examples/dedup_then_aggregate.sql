-- Deduplication, then an aggregate, each with its own state TTL: the
-- example of Flink's per-operator TTL guide (a ROW_NUMBER deduplication
-- followed by a GROUP BY), on the clicks of clicks_per_user.sql. Each
-- user's first click on each page is kept (keep-first on processing time:
-- inserts only), then the pages are counted per user.
--
--   lab explain examples/dedup_then_aggregate.sql
--   lab compile-plan examples/dedup_then_aggregate.sql --out plan.json
--
-- The plan has two states: the Deduplicate's `deduplicateState` and the
-- GroupAggregate's `groupAggregateState`. Edit each "ttl" in plan.json
-- (a short one for the deduplication, a long one for the counts, as the
-- guide does) and run it with `lab execute-plan plan.json`: a page seen
-- again after the deduplication's TTL counts again.

CREATE TABLE clicks (
  user_id STRING,
  url     STRING,
  dwell   INT,
  ts      BIGINT,
  pt AS PROCTIME()
) WITH (
  'connector' = 'filesystem',
  'path'      = 'clicks.csv',
  'format'    = 'csv'
);

CREATE TABLE pages_per_user (
  user_id STRING,
  pages   BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO pages_per_user
SELECT user_id, COUNT(*) AS pages
FROM (
  SELECT user_id, url FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id, url ORDER BY pt) AS rn
    FROM clicks
  ) WHERE rn = 1
)
GROUP BY user_id;
