-- The Nexmark queries the lab runs (examples/nexmark/), in one script for
-- campaigns/nexmark.toml: the three generated tables once, with ${events}
-- events in total, and each query's blackhole sink and INSERT; a campaign
-- variant runs one query through its sink.

CREATE TABLE person (
  id           BIGINT,
  name         STRING,
  emailAddress STRING,
  creditCard   STRING,
  city         STRING,
  state        STRING,
  `dateTime`   TIMESTAMP(3),
  extra        STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'person', 'events.num' = '${events}');

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
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'auction', 'events.num' = '${events}');

CREATE TABLE bid (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  channel    STRING,
  url        STRING,
  `dateTime` TIMESTAMP(3),
  extra      STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '${events}');

CREATE TABLE nexmark_q0 (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  `dateTime` TIMESTAMP(3),
  extra      STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q0
SELECT auction, bidder, price, `dateTime`, extra FROM bid;

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

CREATE TABLE nexmark_q2 (
  auction BIGINT,
  price   BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;

CREATE TABLE nexmark_q3 (
  name  STRING,
  city  STRING,
  state STRING,
  id    BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q3
SELECT
    P.name, P.city, P.state, A.id
FROM
    auction AS A INNER JOIN person AS P ON A.seller = P.id
WHERE
    A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');

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

CREATE TABLE nexmark_q5 (
  auction BIGINT,
  num     BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM TABLE(
             HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM TABLE(
                HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn;

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

CREATE TABLE nexmark_q8 (
  id    BIGINT,
  name  STRING,
  stime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q8
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name,
        window_start AS starttime,
        window_end AS endtime
  FROM TABLE(
            TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller,
        window_start AS starttime,
        window_end AS endtime
  FROM TABLE(
        TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;

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

CREATE TABLE nexmark_q15 (
  `day` STRING,
  total_bids BIGINT,
  rank1_bids BIGINT,
  rank2_bids BIGINT,
  rank3_bids BIGINT,
  total_bidders BIGINT,
  rank1_bidders BIGINT,
  rank2_bidders BIGINT,
  rank3_bidders BIGINT,
  total_auctions BIGINT,
  rank1_auctions BIGINT,
  rank2_auctions BIGINT,
  rank3_auctions BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q15
SELECT
     DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') as `day`,
     count(*) AS total_bids,
     count(*) filter (where price < 10000) AS rank1_bids,
     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
     count(*) filter (where price >= 1000000) AS rank3_bids,
     count(distinct bidder) AS total_bidders,
     count(distinct bidder) filter (where price < 10000) AS rank1_bidders,
     count(distinct bidder) filter (where price >= 10000 and price < 1000000) AS rank2_bidders,
     count(distinct bidder) filter (where price >= 1000000) AS rank3_bidders,
     count(distinct auction) AS total_auctions,
     count(distinct auction) filter (where price < 10000) AS rank1_auctions,
     count(distinct auction) filter (where price >= 10000 and price < 1000000) AS rank2_auctions,
     count(distinct auction) filter (where price >= 1000000) AS rank3_auctions
FROM bid
GROUP BY DATE_FORMAT(`dateTime`, 'yyyy-MM-dd');

CREATE TABLE nexmark_q16 (
  channel  STRING,
  `day`    STRING,
  `minute` STRING,
  total_bids BIGINT,
  rank1_bids BIGINT,
  rank2_bids BIGINT,
  rank3_bids BIGINT,
  total_bidders BIGINT,
  rank1_bidders BIGINT,
  rank2_bidders BIGINT,
  rank3_bidders BIGINT,
  total_auctions BIGINT,
  rank1_auctions BIGINT,
  rank2_auctions BIGINT,
  rank3_auctions BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q16
SELECT
    channel,
    DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') as `day`,
    max(DATE_FORMAT(`dateTime`, 'HH:mm')) as `minute`,
    count(*) AS total_bids,
    count(*) filter (where price < 10000) AS rank1_bids,
    count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
    count(*) filter (where price >= 1000000) AS rank3_bids,
    count(distinct bidder) AS total_bidders,
    count(distinct bidder) filter (where price < 10000) AS rank1_bidders,
    count(distinct bidder) filter (where price >= 10000 and price < 1000000) AS rank2_bidders,
    count(distinct bidder) filter (where price >= 1000000) AS rank3_bidders,
    count(distinct auction) AS total_auctions,
    count(distinct auction) filter (where price < 10000) AS rank1_auctions,
    count(distinct auction) filter (where price >= 10000 and price < 1000000) AS rank2_auctions,
    count(distinct auction) filter (where price >= 1000000) AS rank3_auctions
FROM bid
GROUP BY channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd');

CREATE TABLE nexmark_q17 (
  auction    BIGINT,
  `day`      STRING,
  total_bids BIGINT,
  rank1_bids BIGINT,
  rank2_bids BIGINT,
  rank3_bids BIGINT,
  min_price  BIGINT,
  max_price  BIGINT,
  avg_price  BIGINT,
  sum_price  BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q17
SELECT
     auction,
     DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') as `day`,
     count(*) AS total_bids,
     count(*) filter (where price < 10000) AS rank1_bids,
     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
     count(*) filter (where price >= 1000000) AS rank3_bids,
     min(price) AS min_price,
     max(price) AS max_price,
     avg(price) AS avg_price,
     sum(price) AS sum_price
FROM bid
GROUP BY auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd');

CREATE TABLE nexmark_q18 (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  channel    STRING,
  url        STRING,
  `dateTime` TIMESTAMP(3),
  extra      STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q18
SELECT auction, bidder, price, channel, url, `dateTime`, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rank_number
       FROM bid)
 WHERE rank_number <= 1;

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

CREATE TABLE nexmark_q21 (
  auction    BIGINT,
  bidder     BIGINT,
  price      BIGINT,
  channel    STRING,
  channel_id STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q21
SELECT
    auction, bidder, price, channel,
    CASE
        WHEN lower(channel) = 'apple' THEN '0'
        WHEN lower(channel) = 'google' THEN '1'
        WHEN lower(channel) = 'facebook' THEN '2'
        WHEN lower(channel) = 'baidu' THEN '3'
        ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
        END
    AS channel_id FROM bid
    where REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or
          lower(channel) in ('apple', 'google', 'facebook', 'baidu');

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
