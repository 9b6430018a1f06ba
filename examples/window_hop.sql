-- Flink's Bid table in 10-minute windows sliding by 5 minutes: every bid
-- lands in two windows (C at 08:05 in 08:00-08:10 and 08:05-08:15).
--   08:00-08:10  11.0
--   08:05-08:15  15.0
--   08:10-08:20  10.0
--   08:15-08:25   6.0
-- The second INSERT is the cumulating window of the same page: windows
-- growing by 2 minutes up to 10 (08:00-08:06 4.0, ..., 08:10-08:20 10.0).

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

CREATE TABLE hop_totals (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  total_price  DOUBLE
) WITH ('connector' = 'blackhole');

CREATE TABLE cumulate_totals (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  total_price  DOUBLE
) WITH ('connector' = 'blackhole');

INSERT INTO hop_totals
SELECT window_start, window_end, SUM(price) AS total_price
FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;

INSERT INTO cumulate_totals
SELECT window_start, window_end, SUM(price) AS total_price
FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
