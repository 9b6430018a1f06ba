-- The script of campaigns/topn-strategies.toml: Top-N (ROW_NUMBER() OVER
-- (PARTITION BY p ORDER BY ..) kept where rn <= ${n}) over ${rows} events
-- of ${partitions} partitions (Zipf 1.0: a few partitions get most events)
-- and 100 items, one query per strategy of the Top-N, each its own INSERT:
--
-- - top_events: the N highest-scored events per partition, over the
--   events themselves (insert-only): AppendFastStrategy, keeping N rows
--   per partition (N = 1: the fast Top-1);
-- - top_by_count: the N most frequent items per partition, over
--   COUNT(*) per (p, item): a count only grows, so UpdateFastStrategy;
-- - top_by_score: the N items per partition with the highest total
--   score, over SUM(score) per (p, item) where a score may be negative: a
--   total may fall, so RetractStrategy, which keeps every (p, item).
--
-- Run it with `lab campaign campaigns/topn-strategies.toml`, not as it is.

CREATE TABLE ev (
  id    BIGINT,
  p     BIGINT,
  item  BIGINT,
  score BIGINT
) WITH (
  'connector'                = 'datagen',
  'number-of-rows'           = '${rows}',
  'fields.id.kind'           = 'sequence',
  'fields.id.start'          = '1',
  'fields.id.end'            = '${rows}',
  'fields.p.min'             = '1',
  'fields.p.max'             = '${partitions}',
  'fields.p.distribution'    = 'zipf',
  'fields.p.zipf-exponent'   = '1.0',
  'fields.item.min'          = '1',
  'fields.item.max'          = '100',
  'fields.score.min'         = '-500',
  'fields.score.max'         = '499',
  'seed'                     = '1'
);

CREATE TABLE top_events (
  p     BIGINT,
  id    BIGINT,
  item  BIGINT,
  score BIGINT,
  rn    BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE top_by_count (
  p      BIGINT,
  item   BIGINT,
  cnt    BIGINT,
  rn     BIGINT
) WITH ('connector' = 'blackhole');

CREATE TABLE top_by_score (
  p      BIGINT,
  item   BIGINT,
  total  BIGINT,
  rn     BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO top_events
SELECT * FROM (
  SELECT p, id, item, score,
    ROW_NUMBER() OVER (PARTITION BY p ORDER BY score DESC, id) AS rn
  FROM ev
) WHERE rn <= ${n};

INSERT INTO top_by_count
SELECT * FROM (
  SELECT p, item, cnt,
    ROW_NUMBER() OVER (PARTITION BY p ORDER BY cnt DESC, item) AS rn
  FROM (SELECT p, item, COUNT(*) AS cnt FROM ev GROUP BY p, item)
) WHERE rn <= ${n};

INSERT INTO top_by_score
SELECT * FROM (
  SELECT p, item, total,
    ROW_NUMBER() OVER (PARTITION BY p ORDER BY total DESC, item) AS rn
  FROM (SELECT p, item, SUM(score) AS total FROM ev GROUP BY p, item)
) WHERE rn <= ${n};
