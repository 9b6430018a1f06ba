-- The script of campaigns/window-strategies.toml: a HOP window aggregate
-- whose windows overlap more and more. ${rows} events 1 ms of event time
-- apart, in order (watermark 2 s behind), keys uniform among ${keys};
-- HOP windows sliding by 1 s and ${windows} s long, so each event is in
-- ${windows} windows (1: a tumbling window). Parallelism 2.
--
-- The campaign's variants choose Flink's strategy
-- (`table.optimizer.agg-phase-strategy`: one phase, or a local half per
-- input subtask and a global half per key after the shuffle) and the
-- lab's comparison state (`lab.window.slicing`: Flink's slices, or an
-- accumulator per window).
--
-- Run it with `lab campaign campaigns/window-strategies.toml`, not as it is.

SET 'lab.clock' = 'deterministic';
SET 'parallelism.default' = '2';

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
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '${windows}' SECOND))
GROUP BY k, window_start, window_end;
