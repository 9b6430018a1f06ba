-- The legacy group windows (GROUP BY TUMBLE/HOP/SESSION, Flink's
-- GroupWindowAggregate) over the Bid table of Flink's window TVF page (six
-- bids between 08:05 and 08:17), without lateness: each window fires once,
-- as an insert, when the watermark passes its end; the same windows as the
-- window TVFs of window_tumble.sql, window_hop.sql and window_session.sql.
--   TUMBLE 10 min:           08:00-08:10 3 bids 11.0, 08:10-08:20 3 bids 10.0
--   HOP 10 min every 5 min:  08:00-08:10 3 bids 11.0, 08:05-08:15 5 bids 15.0,
--                            08:10-08:20 3 bids 10.0, 08:15-08:25 1 bid 6.0
--   SESSION gap 5 min:       08:05-08:22 6 bids 21.0 (no gap of 5 minutes)

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
  w_start TIMESTAMP(3),
  w_end   TIMESTAMP(3),
  bids    BIGINT,
  total   DOUBLE
) WITH ('connector' = 'blackhole');

CREATE TABLE hop_totals (
  w_start TIMESTAMP(3),
  w_end   TIMESTAMP(3),
  bids    BIGINT,
  total   DOUBLE
) WITH ('connector' = 'blackhole');

CREATE TABLE session_totals (
  w_start TIMESTAMP(3),
  w_end   TIMESTAMP(3),
  bids    BIGINT,
  total   DOUBLE
) WITH ('connector' = 'blackhole');

INSERT INTO tumble_totals
SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE), TUMBLE_END(bidtime, INTERVAL '10' MINUTE),
       COUNT(*), SUM(price)
FROM Bid
GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE);

INSERT INTO hop_totals
SELECT HOP_START(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE),
       HOP_END(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE),
       COUNT(*), SUM(price)
FROM Bid
GROUP BY HOP(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE);

INSERT INTO session_totals
SELECT SESSION_START(bidtime, INTERVAL '5' MINUTE), SESSION_END(bidtime, INTERVAL '5' MINUTE),
       COUNT(*), SUM(price)
FROM Bid
GROUP BY SESSION(bidtime, INTERVAL '5' MINUTE);
