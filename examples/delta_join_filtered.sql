-- Flink 2.2's delta join over a filter and a projection between each source
-- and the join (Performance Tuning, "Delta Joins": projection and filter
-- between the source and the delta join). Orders over 100 join their
-- customers outside the 'test' segment; both tables declare 'index.key',
-- the sink is an upsert sink on the join's unique key. The delta join reads
-- each side through its Calc and applies the other side's Calc to the rows
-- it looks up; it keeps no join state.

SET 'table.optimizer.delta-join.strategy' = 'FORCE';

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id BIGINT,
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
  'fields.amount.min'      = '1',
  'fields.amount.max'      = '1000',
  'seed'                   = '1',
  'index.key'              = 'customer_id'
);

CREATE TABLE customers (
  customer_id BIGINT,
  segment     INT,
  PRIMARY KEY (customer_id) NOT ENFORCED
) WITH (
  'connector'               = 'datagen',
  'number-of-rows'          = '200',
  'fields.customer_id.kind' = 'sequence',
  'fields.customer_id.start' = '1',
  'fields.customer_id.end'  = '200',
  'fields.segment.min'      = '0',
  'fields.segment.max'      = '3',
  'seed'                    = '2',
  'index.key'               = 'customer_id'
);

CREATE TABLE big_orders (
  order_id    BIGINT,
  customer_id BIGINT,
  cents       BIGINT,
  segment     INT,
  PRIMARY KEY (order_id, customer_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO big_orders
SELECT o.order_id, c.customer_id, o.cents, c.segment
FROM (SELECT order_id, customer_id, amount * 100 AS cents FROM orders WHERE amount > 100) AS o
JOIN (SELECT customer_id, segment FROM customers WHERE segment <> 0) AS c
ON o.customer_id = c.customer_id;
