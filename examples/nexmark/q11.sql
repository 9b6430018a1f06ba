-- Nexmark q11, user sessions: how many bids each bidder makes in a
-- session of activity, sessions ending after 10 seconds without a bid.
-- Flink's query uses the legacy group window (GROUP BY bidder,
-- SESSION(`dateTime`, INTERVAL '10' SECOND) with SESSION_START and
-- SESSION_END); the lab writes the same windows as the SESSION table-valued
-- function partitioned by bidder, which Flink 2.x runs too. 50,000 events.

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

CREATE TABLE nexmark_q11 (
  bidder    BIGINT,
  bid_count BIGINT,
  starttime TIMESTAMP(3),
  endtime   TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q11
SELECT
    bidder,
    count(*) AS bid_count,
    window_start AS starttime,
    window_end AS endtime
FROM TABLE(
        SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
