-- Nexmark q22, get URL directories: the first three directories of each
-- bid's URL (SPLIT_INDEX). 50,000 events.

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

CREATE TABLE nexmark_q22 (
  auction BIGINT,
  bidder  BIGINT,
  price   BIGINT,
  channel STRING,
  dir1    STRING,
  dir2    STRING,
  dir3    STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q22
SELECT
    auction, bidder, price, channel,
    SPLIT_INDEX(url, '/', 3) as dir1,
    SPLIT_INDEX(url, '/', 4) as dir2,
    SPLIT_INDEX(url, '/', 5) as dir3 FROM bid;
