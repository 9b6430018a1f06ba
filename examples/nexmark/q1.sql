-- Nexmark q1, projection: bid prices converted from dollars to euros.
-- Flink's query writes DECIMAL(23, 3); the lab has no DECIMAL, so the
-- price is a DOUBLE here (docs/nexmark.md). 50,000 events.

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

CREATE TABLE nexmark_q1 (
  auction    BIGINT,
  bidder     BIGINT,
  price      DOUBLE,
  `dateTime` TIMESTAMP(3),
  extra      STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q1
SELECT
    auction,
    bidder,
    0.908 * price AS price, -- convert dollar to euro
    `dateTime`,
    extra
FROM bid;
