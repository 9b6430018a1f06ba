-- Flink's "Dynamic Tables" example: 120 clicks by 11 users, counted per user.
-- A sink without a key receives the retract changelog (11 +I, 109 -U/+U
-- pairs: 229 rows); an upsert sink keyed by user receives 120 rows.
-- Counting users per click count (an aggregate over an aggregate) emits -D
-- when a count group empties.

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

CREATE TABLE clicks_per_user (
  user_id STRING,
  cnt     BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE clicks_per_user_upsert (
  user_id STRING,
  cnt     BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

CREATE TABLE users_per_click_count (
  cnt   BIGINT,
  users BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO clicks_per_user
SELECT user_id, COUNT(*) AS cnt FROM clicks GROUP BY user_id;

INSERT INTO clicks_per_user_upsert
SELECT user_id, COUNT(*) AS cnt FROM clicks GROUP BY user_id;

INSERT INTO users_per_click_count
SELECT cnt, COUNT(*) AS users
FROM (SELECT user_id, COUNT(*) AS cnt FROM clicks GROUP BY user_id) AS per_user
GROUP BY cnt;
