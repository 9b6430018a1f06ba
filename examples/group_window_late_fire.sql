-- A legacy group window with allowed lateness and late firings: Flink's
-- GroupWindowITCase.testEventTimeTumblingWindowWithAllowLateness (its
-- rows in group_window_late_fire.csv: event time in ms, a number, a
-- string), per string and 5 ms tumbling window, the watermark at the
-- greatest event time so far after every row.
--
-- A window fires when the watermark passes its end and is kept 10 ms
-- longer: a record for it within that time fires it again (-U old, +U
-- new), one after it is dropped as late.
--   [0, 5)   Hi:    +I                        (the 3 ms Hi comes at watermark 16: dropped)
--   [0, 5)   Hello: +I, then -U/+U for the out-of-order 4 ms row
--   [5, 10)  Hello world: +I at watermark 16, then -U/+U for the 9 ms row
--   [15, 20) Hello world: +I at the end of input
-- (The test's weighted-average UDF is left out: the lab runs no UDFs.)

SET 'table.exec.emit.allow-lateness' = '10 ms';
SET 'table.exec.emit.late-fire.enabled' = 'true';
SET 'table.exec.emit.late-fire.delay' = '0 s';
SET 'lab.source.batch-size' = '1';
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'lab.clock' = 'deterministic';

CREATE TABLE T1 (
  ts_ms BIGINT,
  num   INT,
  str   STRING,
  rowtime AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR rowtime AS rowtime
) WITH (
  'connector' = 'filesystem',
  'path'      = 'group_window_late_fire.csv',
  'format'    = 'csv'
);

CREATE TABLE late_fired (
  str        STRING,
  w_start    TIMESTAMP(3),
  w_end      TIMESTAMP(3),
  ts_values  BIGINT,
  nums       BIGINT,
  avg_num    INT,
  min_num    INT,
  max_num    INT,
  sum_num    BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO late_fired
SELECT
  str,
  TUMBLE_START(rowtime, INTERVAL '0.005' SECOND) AS w_start,
  TUMBLE_END(rowtime, INTERVAL '0.005' SECOND),
  COUNT(DISTINCT ts_ms),
  COUNT(num),
  CAST(AVG(num) AS INT),
  MIN(num),
  MAX(num),
  SUM(num)
FROM T1
GROUP BY str, TUMBLE(rowtime, INTERVAL '0.005' SECOND);
