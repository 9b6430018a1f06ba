-- Window deduplication on Flink's Bid table (examples/bids.csv): the row
-- number over each window's rows kept where it is 1, emitted once per
-- window as an insert when the watermark passes the window's end
-- (WindowDeduplicate).
-- The last bid of each 10-minute tumbling window, as Flink's window
-- deduplication page has it:
--   08:09  5.0  D   08:00-08:10
--   08:17  6.0  F   08:10-08:20
-- The second INSERT keeps the first bid of each 10-minute window sliding
-- by 5 minutes (a bid lands in two windows):
--   08:05  4.0  C   08:00-08:10
--   08:05  4.0  C   08:05-08:15
--   08:11  3.0  B   08:10-08:20
--   08:17  6.0  F   08:15-08:25

CREATE TABLE Bid (
  bidtime TIMESTAMP(3),
  price   DOUBLE,
  item    STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path'      = 'bids.csv',
  'format'    = 'csv'
);

CREATE TABLE last_bids (
  bidtime      TIMESTAMP(3),
  price        DOUBLE,
  item         STRING,
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

CREATE TABLE first_bids (
  bidtime      TIMESTAMP(3),
  price        DOUBLE,
  item         STRING,
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO last_bids
SELECT bidtime, price, item, window_start, window_end
FROM (
  SELECT bidtime, price, item, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bidtime DESC) AS rownum
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rownum <= 1;

INSERT INTO first_bids
SELECT bidtime, price, item, window_start, window_end
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bidtime ASC) AS rownum
  FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
) WHERE rownum = 1;
