-- A join feeding an upsert sink emits no -U (Flink's upsert-key rule): the
-- sink asks for update-after only, and both join inputs (aggregates per
-- user) have a unique key holding the join key, so each +U replaces its
-- old version in the join's state and the joined +U replaces the old row
-- in the sink. The same query into a sink without a key gets the -U rows.

CREATE TABLE activity (
  user_id STRING,
  url     STRING,
  dwell   INT
) WITH (
  'connector' = 'filesystem',
  'path'      = 'user_activity_log.csv',
  'format'    = 'changelog-csv'
);

CREATE TABLE user_activity (
  user_id   STRING,
  clicks    BIGINT,
  max_dwell INT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

CREATE TABLE user_activity_retract (
  user_id   STRING,
  clicks    BIGINT,
  max_dwell INT
) WITH ('connector' = 'blackhole');

INSERT INTO user_activity
SELECT c.user_id, c.clicks, d.max_dwell
FROM (SELECT user_id, COUNT(*) AS clicks FROM activity GROUP BY user_id) AS c
JOIN (SELECT user_id, MAX(dwell) AS max_dwell FROM activity GROUP BY user_id) AS d
ON c.user_id = d.user_id;

INSERT INTO user_activity_retract
SELECT c.user_id, c.clicks, d.max_dwell
FROM (SELECT user_id, COUNT(*) AS clicks FROM activity GROUP BY user_id) AS c
JOIN (SELECT user_id, MAX(dwell) AS max_dwell FROM activity GROUP BY user_id) AS d
ON c.user_id = d.user_id;
