-- Window join (WindowJoin): the FULL OUTER JOIN of Flink's window join
-- page, two tables in 5-minute tumbling windows joined on their windows
-- and `num`. Each window's rows are joined once, when the watermark passes
-- the window's end, and emitted as inserts; a row without a partner in its
-- window is padded with NULLs. L3 arrives after L2 but its window is still
-- open (the watermarks lag 5 minutes), so it meets R3.
--   L1   1 | NULL NULL  12:00-12:05
--   NULL   | R2   2     12:00-12:05
--   L3   3 | R3   3     12:00-12:05
--   L2   2 | NULL NULL  12:05-12:10
--   NULL   | R4   4     12:05-12:10

CREATE TABLE LeftTable (
  row_time TIMESTAMP(3),
  num      INT,
  id       STRING,
  WATERMARK FOR row_time AS row_time - INTERVAL '5' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path'      = 'window_join_left.csv',
  'format'    = 'csv'
);

CREATE TABLE RightTable (
  row_time TIMESTAMP(3),
  num      INT,
  id       STRING,
  WATERMARK FOR row_time AS row_time - INTERVAL '5' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path'      = 'window_join_right.csv',
  'format'    = 'csv'
);

CREATE TABLE joined (
  l_num          INT,
  l_id           STRING,
  r_num          INT,
  r_id           STRING,
  l_window_start TIMESTAMP(3),
  r_window_start TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO joined
SELECT L.num, L.id, R.num, R.id, L.window_start, R.window_start
FROM (
  SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
) L
FULL JOIN (
  SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
) R
ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end;
