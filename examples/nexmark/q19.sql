-- Nexmark q19, auction Top-10 by price: the ten highest bids of each
-- auction with their rank (a Top-N over an insert-only input: Flink's
-- AppendFastStrategy). 50,000 events.

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

CREATE TABLE nexmark_q19 (
  auction     BIGINT,
  bidder      BIGINT,
  price       BIGINT,
  channel     STRING,
  url         STRING,
  `dateTime`  TIMESTAMP(3),
  extra       STRING,
  rank_number BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q19
SELECT * FROM
(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
WHERE rank_number <= 10;
