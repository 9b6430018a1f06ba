-- Nexmark q4, average price per category: the winning (highest) bid of
-- each auction while it was open, averaged per category: a join, then an
-- aggregate over an aggregate. Flink's query as written: a comma join
-- (`FROM auction A, bid B WHERE A.id = B.auction AND ...`). 50,000 events.

CREATE TABLE auction (
  id          BIGINT,
  itemName    STRING,
  description STRING,
  initialBid  BIGINT,
  reserve     BIGINT,
  `dateTime`  TIMESTAMP(3),
  expires     TIMESTAMP(3),
  seller      BIGINT,
  category    BIGINT,
  extra       STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'auction', 'events.num' = '50000');

CREATE TABLE bid (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  channel    STRING,
  url        STRING,
  `dateTime` TIMESTAMP(3),
  extra      STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '50000');

CREATE TABLE nexmark_q4 (
  id    BIGINT,
  final BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q4
SELECT
    Q.category,
    AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
