-- Flink's Bid table in session windows: a bid at t opens [t, t + gap),
-- and windows that touch or overlap merge into one session.
-- Per item with a 5-minute gap (each item bids once, so each session is
-- its bid's [t, t + 5 min)):
--   C 08:05-08:10 4.0, A 08:07-08:12 2.0, D 08:09-08:14 5.0,
--   B 08:11-08:16 3.0, E 08:13-08:18 1.0, F 08:17-08:22 6.0
-- Over all bids with a 2-minute gap: the bids two minutes apart from 08:05
-- to 08:13 touch and make one session, F at 08:17 starts another:
--   08:05-08:15 15.0, 08:17-08:19 6.0

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

CREATE TABLE item_sessions (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  item         STRING,
  total_price  DOUBLE
) WITH ('connector' = 'blackhole');

CREATE TABLE sessions (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  bids         BIGINT,
  total_price  DOUBLE
) WITH ('connector' = 'blackhole');

INSERT INTO item_sessions
SELECT window_start, window_end, item, SUM(price) AS total_price
FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
GROUP BY item, window_start, window_end;

INSERT INTO sessions
SELECT window_start, window_end, COUNT(*) AS bids, SUM(price) AS total_price
FROM TABLE(SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES))
GROUP BY window_start, window_end;
