-- Interval join (IntervalJoin): Flink's IntervalJoinITCase rowtime inner
-- join. A left row joins the right rows of its key whose time is within
-- 5 seconds before to 6 seconds after its own; each pair is emitted once,
-- as an insert, and each side's rows are freed once the watermark passes
-- the last time a row of the other side could join them.
--   A  RIGHT6  LEFT1     (LEFT0.999 at 00:00:00.999 is 1 ms too early)
--   A  RIGHT6  LEFT2
--   A  RIGHT6  LEFT3
--   A  RIGHT6  LEFT5
--   A  RIGHT6  LEFT6
--   B  RIGHT7  LEFT4     (NULL keys join nothing)

CREATE TABLE T1 (
  `key`   STRING,
  id      STRING,
  ts_ms   BIGINT,
  rowtime AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path'      = 'interval_left.csv',
  'format'    = 'csv'
);

CREATE TABLE T2 (
  `key`   STRING,
  id      STRING,
  ts_ms   BIGINT,
  rowtime AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path'      = 'interval_right.csv',
  'format'    = 'csv'
);

CREATE TABLE joined (
  `key`    STRING,
  right_id STRING,
  left_id  STRING
) WITH ('connector' = 'blackhole');

INSERT INTO joined
SELECT t2.`key`, t2.id, t1.id
FROM T1 AS t1 JOIN T2 AS t2 ON
  t1.`key` = t2.`key` AND
  t1.rowtime BETWEEN t2.rowtime - INTERVAL '5' SECOND AND t2.rowtime + INTERVAL '6' SECOND;
