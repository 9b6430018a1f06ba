-- Window Top-N on Flink's Bid table with suppliers
-- (examples/supplier_bids.csv): the row number over each window's rows
-- kept in a range, emitted once per window as inserts when the watermark
-- passes the window's end (WindowRank).
-- The three suppliers with the highest sales in each 10-minute tumbling
-- window, a Top-N of a window aggregate, as Flink's window Top-N page has
-- it:
--   08:00-08:10  supplier1  6.0  2  1
--   08:00-08:10  supplier4  5.0  1  2
--   08:00-08:10  supplier2  4.0  1  3
--   08:10-08:20  supplier5  6.0  1  1
--   08:10-08:20  supplier2  3.0  1  2
--   08:10-08:20  supplier3  2.0  1  3
-- The second INSERT ranks the bids of each window directly (a Top-N of
-- the window TVF); the two 4.0 bids tie, and the one that came first ranks
-- first:
--   08:09  5.0  D  supplier4  08:00-08:10  1
--   08:05  4.0  A  supplier1  08:00-08:10  2
--   08:06  4.0  C  supplier2  08:00-08:10  3
--   08:17  6.0  F  supplier5  08:10-08:20  1
--   08:15  3.0  H  supplier2  08:10-08:20  2
--   08:11  2.0  B  supplier3  08:10-08:20  3

CREATE TABLE Bid (
  bidtime     TIMESTAMP(3),
  price       DOUBLE,
  item        STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path'      = 'supplier_bids.csv',
  'format'    = 'csv'
);

CREATE TABLE top_suppliers (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  supplier_id  STRING,
  price        DOUBLE,
  cnt          BIGINT,
  rownum       BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE top_bids (
  bidtime      TIMESTAMP(3),
  price        DOUBLE,
  item         STRING,
  supplier_id  STRING,
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  rownum       BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO top_suppliers
SELECT *
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
  FROM (
    SELECT window_start, window_end, supplier_id, SUM(price) AS price, COUNT(*) AS cnt
    FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
    GROUP BY window_start, window_end, supplier_id
  )
) WHERE rownum <= 3;

INSERT INTO top_bids
SELECT *
FROM (
  SELECT bidtime, price, item, supplier_id, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rownum <= 3;
