-- Nexmark q20, expand bid with auction: every bid on a category-10
-- auction, joined with its auction's columns (a regular join). 50,000
-- events.

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

CREATE TABLE nexmark_q20 (
  auction          BIGINT,
  bidder           BIGINT,
  price            BIGINT,
  channel          STRING,
  url              STRING,
  bid_dateTime     TIMESTAMP(3),
  bid_extra        STRING,
  itemName         STRING,
  description      STRING,
  initialBid       BIGINT,
  reserve          BIGINT,
  auction_dateTime TIMESTAMP(3),
  expires          TIMESTAMP(3),
  seller           BIGINT,
  category         BIGINT,
  auction_extra    STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q20
SELECT
    auction, bidder, price, channel, url, B.`dateTime`, B.extra,
    itemName, description, initialBid, reserve, A.`dateTime`, expires, seller, category, A.extra
FROM
    bid AS B INNER JOIN auction AS A ON B.auction = A.id
WHERE A.category = 10;
