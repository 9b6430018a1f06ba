-- The Bid table of Flink's window TVF page (six bids between 08:05 and
-- 08:17), summed per 10-minute tumbling window: each window is emitted once,
-- as an insert, when the watermark passes its end.
--   08:00-08:10  11.0   (C 4, A 2, D 5)
--   08:10-08:20  10.0   (B 3, E 1, F 6)

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

CREATE TABLE tumble_totals (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  total_price  DOUBLE
) WITH ('connector' = 'blackhole');

INSERT INTO tumble_totals
SELECT window_start, window_end, SUM(price) AS total_price
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
