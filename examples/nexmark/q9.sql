-- Nexmark q9, winning bids: the highest bid of each auction made before
-- it expired (the earliest one among equal prices), with the auction's
-- columns; a regular join, then a Top-1 ordered by the bid's price and
-- time. The subquery selects the bid's time only as bid_dateTime: the
-- row number orders by B.`dateTime` all the same. 50,000 events.

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

CREATE TABLE nexmark_q9 (
  id           BIGINT,
  itemName     STRING,
  description  STRING,
  initialBid   BIGINT,
  reserve      BIGINT,
  `dateTime`   TIMESTAMP(3),
  expires      TIMESTAMP(3),
  seller       BIGINT,
  category     BIGINT,
  extra        STRING,
  auction      BIGINT,
  bidder       BIGINT,
  price        BIGINT,
  bid_dateTime TIMESTAMP(3),
  bid_extra    STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q9
SELECT
    id, itemName, description, initialBid, reserve, `dateTime`, expires, seller, category, extra,
    auction, bidder, price, bid_dateTime, bid_extra
FROM (
   SELECT A.*, B.auction, B.bidder, B.price, B.`dateTime` AS bid_dateTime, B.extra AS bid_extra,
     ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.`dateTime` ASC) AS rownum
   FROM auction A, bid B
   WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
)
WHERE rownum <= 1;
