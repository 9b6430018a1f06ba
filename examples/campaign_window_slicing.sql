-- The script of campaigns/window-slicing.toml: a HOP window aggregate of
-- 10 s sliding by 1 s (each record in 10 windows), per key,
--
--   SELECT k, window_start, window_end, COUNT(*), SUM(v)
--   FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND))
--   GROUP BY k, window_start, window_end
--
-- over ${rows} events one millisecond of event time apart, in order, with
-- a uniform key among ${keys}. The campaign compares Flink's slicing with
-- the lab's per-window state (`lab.window.slicing`), so run it with
-- `lab campaign campaigns/window-slicing.toml`, not as it is.
--
-- The deterministic clock makes the watermarks, and so the peak state,
-- the same on every run: the source emits its watermark after every batch
-- of 1024 rows (about 1 s of event time).

SET 'lab.clock' = 'deterministic';

CREATE TABLE ev (
  n  BIGINT,
  k  BIGINT,
  v  BIGINT,
  ts AS TO_TIMESTAMP_LTZ(n, 3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector'      = 'datagen',
  'number-of-rows' = '${rows}',
  'fields.n.kind'  = 'sequence',
  'fields.n.start' = '0',
  'fields.n.end'   = '${rows}',
  'fields.k.min'   = '1',
  'fields.k.max'   = '${keys}',
  'fields.v.min'   = '1',
  'fields.v.max'   = '100',
  'seed'           = '1'
);

CREATE TABLE per_key (
  k            BIGINT,
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  cnt          BIGINT,
  total        BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO per_key
SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
