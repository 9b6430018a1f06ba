-- Nexmark q3, local item suggestion: who sells in category 10 in Oregon,
-- Idaho or California; a regular join of auctions with their sellers.
-- 50,000 events.

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
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'person', 'events.num' = '50000');

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
