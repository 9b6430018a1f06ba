-- Nexmark q0, pass-through: every bid, unchanged (Flink's nexmark
-- repository, queries/q0.sql). The tables are Nexmark's three views as
-- tables of the nexmark connector (docs/nexmark.md); 50,000 events.

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

CREATE TABLE nexmark_q0 (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  `dateTime` TIMESTAMP(3),
  extra      STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q0
SELECT auction, bidder, price, `dateTime`, extra FROM bid;
