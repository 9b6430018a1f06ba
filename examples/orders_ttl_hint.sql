-- State TTL per input with Flink's STATE_TTL hint, small enough for the
-- lab-vs-Flink test: revenue per order over 20,000 order lines.
--
--   lab run examples/orders_ttl_hint.sql
--   lab compare examples/orders_ttl_hint.sql
--
-- The hint's TTL (one hour) outlives the run on both engines, so no state
-- expires and the result is the batch answer: this is the deterministic
-- case of TTL. A TTL shorter than an order's life forgets lines and makes
-- the outcome depend on timing (processing time on Flink; the lab's
-- lab.clock = deterministic makes its own runs reproducible, see
-- examples/orders_state_ttl.sql).

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id BIGINT,
  amount      BIGINT
) WITH (
  'connector'       = 'orders',
  'number-of-rows'  = '20000',
  'lines-per-order' = '4',
  'max-lag'         = '50',
  'customers'       = '1000',
  'amount-min'      = '1',
  'amount-max'      = '100',
  'seed'            = '1'
);

CREATE TABLE revenue_per_order (
  order_id BIGINT,
  revenue  BIGINT,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO revenue_per_order
SELECT /*+ STATE_TTL('o' = '1h') */ o.order_id, SUM(o.amount) AS revenue
FROM orders AS o
GROUP BY o.order_id;
