-- Nexmark q7, highest bid: the bids at the highest price of each
-- 10-second tumbling window (TUMBLE), found by joining the bids with the
-- windows' maxima. As in Flink's query, the sink's price and bidder columns
-- take bidder and price (the select list's order). 150,000 events: 15 seconds, two windows.

CREATE TABLE bid (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  channel    STRING,
  url        STRING,
  `dateTime` TIMESTAMP(3),
  extra      STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '150000');

CREATE TABLE nexmark_q7 (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  `dateTime` TIMESTAMP(3),
  extra      STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q7
SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra
FROM bid B
JOIN (
  SELECT MAX(price) AS maxprice, window_end AS `dateTime`
  FROM TABLE(
          TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.`dateTime` BETWEEN B1.`dateTime` - INTERVAL '10' SECOND AND B1.`dateTime`;
