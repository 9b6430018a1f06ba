-- Flink 2.2's cascaded delta join (Performance Tuning, "Delta Joins":
-- cascaded delta joins): orders shipped to their customer's home nation,
-- with the nation's region. Every table declares 'index.key' and the sink
-- is an upsert sink on the join's unique key, so both joins become delta
-- joins and neither keeps join state. The lower one joins orders and
-- customers; the upper one joins its rows with nations. A row of the
-- lower join looks nations up by its index key; a row of nations looks
-- customers up by their index key (nation_id), then the orders of those
-- customers by theirs (customer_id): a lookup chain through the tables of
-- the join below.

SET 'table.optimizer.delta-join.strategy' = 'FORCE';

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id BIGINT,
  nation_id   INT,
  amount      BIGINT,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector'              = 'datagen',
  'number-of-rows'         = '2000',
  'fields.order_id.kind'   = 'sequence',
  'fields.order_id.start'  = '1',
  'fields.order_id.end'    = '2000',
  'fields.customer_id.min' = '1',
  'fields.customer_id.max' = '200',
  'fields.nation_id.min'   = '1',
  'fields.nation_id.max'   = '5',
  'fields.amount.min'      = '1',
  'fields.amount.max'      = '1000',
  'seed'                   = '1',
  'index.key'              = 'customer_id'
);

CREATE TABLE customers (
  customer_id BIGINT,
  nation_id   INT,
  segment     INT,
  PRIMARY KEY (customer_id) NOT ENFORCED
) WITH (
  'connector'                = 'datagen',
  'number-of-rows'           = '200',
  'fields.customer_id.kind'  = 'sequence',
  'fields.customer_id.start' = '1',
  'fields.customer_id.end'   = '200',
  'fields.nation_id.min'     = '1',
  'fields.nation_id.max'     = '5',
  'fields.segment.min'       = '0',
  'fields.segment.max'       = '3',
  'seed'                     = '2',
  'index.key'                = 'nation_id'
);

CREATE TABLE nations (
  nation_id INT,
  region    INT,
  PRIMARY KEY (nation_id) NOT ENFORCED
) WITH (
  'connector'              = 'datagen',
  'number-of-rows'         = '5',
  'fields.nation_id.kind'  = 'sequence',
  'fields.nation_id.start' = '1',
  'fields.nation_id.end'   = '5',
  'fields.region.min'      = '1',
  'fields.region.max'      = '2',
  'seed'                   = '3',
  'index.key'              = 'nation_id'
);

CREATE TABLE home_orders (
  order_id    BIGINT,
  customer_id BIGINT,
  nation_id   INT,
  amount      BIGINT,
  region      INT,
  PRIMARY KEY (order_id, customer_id, nation_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO home_orders
SELECT o.order_id, c.customer_id, n.nation_id, o.amount, n.region
FROM orders AS o
JOIN customers AS c ON o.customer_id = c.customer_id AND o.nation_id = c.nation_id
JOIN nations AS n ON c.nation_id = n.nation_id;
