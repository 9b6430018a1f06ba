-- The script of campaigns/lateness.toml: how out of order the events come
-- against how long windows wait for them. ${rows} events, 1 ms of event
-- time apart in the order they arrive, each moved back by a uniform
-- random 0..${disorder} ms: a record is as much as ${disorder} ms behind
-- the latest one. The watermark trails the greatest time by 1 s, so once
-- the disorder passes 1 s some records come behind it.
--
-- Per key (uniform among ${keys}) and 1 s tumbling window, COUNT and SUM
-- in a legacy group window (GROUP BY TUMBLE), whose emit strategy the
-- campaign's variants set: no lateness (a window fires once, a record
-- behind its end is dropped), or an allowed lateness with late firings (a
-- fired window is kept that much longer and updated with -U/+U).
--
-- Run it with `lab campaign campaigns/lateness.toml`, not as it is.

SET 'lab.clock' = 'deterministic';

CREATE TABLE ev (
  n      BIGINT,
  k      BIGINT,
  v      BIGINT,
  back   BIGINT,
  ts AS TO_TIMESTAMP_LTZ(n + 100000 - back, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector'         = 'datagen',
  'number-of-rows'    = '${rows}',
  'fields.n.kind'     = 'sequence',
  'fields.n.start'    = '0',
  'fields.n.end'      = '${rows}',
  'fields.k.min'      = '1',
  'fields.k.max'      = '${keys}',
  'fields.v.min'      = '1',
  'fields.v.max'      = '100',
  'fields.back.min'   = '0',
  'fields.back.max'   = '${disorder}',
  'seed'              = '1'
);

CREATE TABLE per_key (
  k       BIGINT,
  w_start TIMESTAMP(3),
  cnt     BIGINT,
  total   BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO per_key
SELECT k, TUMBLE_START(ts, INTERVAL '1' SECOND), COUNT(*), SUM(v)
FROM ev
GROUP BY k, TUMBLE(ts, INTERVAL '1' SECOND);
