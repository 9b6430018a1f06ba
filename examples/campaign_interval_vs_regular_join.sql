-- The script of campaigns/interval-vs-regular-join.toml: the same join
-- answered by an interval join and by a regular join, with their state
-- side by side. Two tables of ${rows} rows each, 1 ms of event time apart
-- in the order they arrive (watermark 1 s behind), where key k = n / 2
-- has two rows in each table, 1 ms apart: every match is within
-- milliseconds, so the interval join (times within 5 s of each other) and
-- the regular join (the keys alone) find the same pairs. What differs is
-- how long each keeps a row: the interval join until the watermark
-- passes the row's time plus the interval; the regular join for ever,
-- or, with `table.exec.state.ttl`, until the key has been idle that long
-- (the deterministic clock: 1 ms per row read). Two sinks, one per join.
--
-- Run it with `lab campaign campaigns/interval-vs-regular-join.toml`, not as it is.

SET 'lab.clock' = 'deterministic';

CREATE TABLE a (
  n  BIGINT,
  v  BIGINT,
  k  AS n / 2,
  ts AS TO_TIMESTAMP_LTZ(n, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector'      = 'datagen',
  'number-of-rows' = '${rows}',
  'fields.n.kind'  = 'sequence',
  'fields.n.start' = '0',
  'fields.n.end'   = '${rows}',
  'fields.v.min'   = '1',
  'fields.v.max'   = '100',
  'seed'           = '1'
);

CREATE TABLE b (
  n  BIGINT,
  w  BIGINT,
  k  AS n / 2,
  ts AS TO_TIMESTAMP_LTZ(n, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector'      = 'datagen',
  'number-of-rows' = '${rows}',
  'fields.n.kind'  = 'sequence',
  'fields.n.start' = '0',
  'fields.n.end'   = '${rows}',
  'fields.w.min'   = '1',
  'fields.w.max'   = '100',
  'seed'           = '2'
);

CREATE TABLE interval_joined (
  k BIGINT,
  v BIGINT,
  w BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE regular_joined (
  k BIGINT,
  v BIGINT,
  w BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO interval_joined
SELECT a.k, a.v, b.w
FROM a, b
WHERE a.k = b.k
  AND a.ts BETWEEN b.ts - INTERVAL '5' SECOND AND b.ts + INTERVAL '5' SECOND;

INSERT INTO regular_joined
SELECT a.k, a.v, b.w
FROM a JOIN b ON a.k = b.k;
