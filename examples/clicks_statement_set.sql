-- A statement set: two INSERTs over the same clicks, run as one job that
-- reads the file once (Flink's source reuse), with a retract sink (no key:
-- 229 changelog rows) and an upsert sink keyed by user (120 rows). The
-- EXPLAIN before it prints the plan of the same set: one plan with a sink
-- per INSERT. `lab run` runs it on the lab, `lab run --engine flink` as
-- one Flink job (a StatementSet), and `lab compare` compares both.

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

CREATE TABLE dwell_per_user (
  user_id STRING,
  clicks  BIGINT,
  dwell   BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

EXPLAIN STATEMENT SET BEGIN
INSERT INTO clicks_per_user SELECT user_id, COUNT(*) FROM clicks GROUP BY user_id;
INSERT INTO dwell_per_user SELECT user_id, COUNT(*), SUM(dwell) FROM clicks GROUP BY user_id;
END;

EXECUTE STATEMENT SET BEGIN
INSERT INTO clicks_per_user SELECT user_id, COUNT(*) FROM clicks GROUP BY user_id;
INSERT INTO dwell_per_user SELECT user_id, COUNT(*), SUM(dwell) FROM clicks GROUP BY user_id;
END;
