CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '200',
  'fields.k.min' = '1', 'fields.k.max' = '20', 'seed' = '1');
CREATE TABLE o (k BIGINT, n BIGINT, d BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT k, COUNT(*), COUNT(DISTINCT v) FROM src GROUP BY k;
