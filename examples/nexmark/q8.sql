-- Nexmark q8, monitor new users: the people who registered and created an
-- auction in the same 10-second tumbling window; both sides grouped per
-- window (a window aggregate without aggregate calls), then joined on the
-- window and the person's id (a window join, emitted when the watermark
-- passes each window's end). 50,000 events.

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
