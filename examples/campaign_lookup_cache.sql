-- The script of campaigns/lookup-cache.toml: ${rows} orders, each looking
-- its user up by user_id in a table of ${users} users (a lookup join, FOR
-- SYSTEM_TIME AS OF the order's processing time). The user ids of the
-- orders follow a Zipf law with exponent ${skew} (1 is the hottest user).
-- `lookup.cache` is ${cache}: NONE, every lookup going to the table, or
-- PARTIAL, an LRU cache of the ${cache_rows} users looked up last (the
-- partial cache's size is ignored without it).
--
-- Run it with `lab campaign campaigns/lookup-cache.toml`, not as it is.

CREATE TABLE orders (
  order_id BIGINT,
  user_id  BIGINT,
  amount   BIGINT,
  pt AS PROCTIME()
) WITH (
  'connector'                    = 'datagen',
  'number-of-rows'               = '${rows}',
  'fields.order_id.kind'         = 'sequence',
  'fields.order_id.start'        = '1',
  'fields.order_id.end'          = '${rows}',
  'fields.user_id.min'           = '1',
  'fields.user_id.max'           = '${users}',
  'fields.user_id.distribution'  = 'zipf',
  'fields.user_id.zipf-exponent' = '${skew}',
  'fields.amount.min'            = '1',
  'fields.amount.max'            = '1000',
  'seed'                         = '1'
);

CREATE TABLE users (
  user_id BIGINT,
  tier    BIGINT
) WITH (
  'connector'                     = 'datagen',
  'number-of-rows'                = '${users}',
  'fields.user_id.kind'           = 'sequence',
  'fields.user_id.start'          = '1',
  'fields.user_id.end'            = '${users}',
  'fields.tier.min'               = '1',
  'fields.tier.max'               = '5',
  'seed'                          = '2',
  'lookup.cache'                  = '${cache}',
  'lookup.partial-cache.max-rows' = '${cache_rows}'
);

CREATE TABLE enriched (
  order_id BIGINT,
  user_id  BIGINT,
  amount   BIGINT,
  tier     BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, u.tier
FROM orders AS o
JOIN users FOR SYSTEM_TIME AS OF o.pt AS u ON o.user_id = u.user_id;
