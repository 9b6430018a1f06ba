-- State TTL on a key space that keeps growing: revenue per order.
--
--   SELECT order_id, SUM(amount) FROM orders GROUP BY order_id
--
-- Orders open one after another and receive lines for a while (about
-- (max-lag + 1) * lines-per-order input rows), then never again; without
-- a TTL the aggregate keeps every order's accumulator forever. A state TTL
-- (Flink's table.exec.state.ttl, or per input with the hint
-- /*+ STATE_TTL('o' = '...') */ as in Flink's guide) reclaims closed orders;
-- a TTL shorter than an order's life forgets lines, so that order's sum
-- restarts (the one place where the result may differ from the batch
-- answer, as in Flink). lab.clock = deterministic makes TTL runs
-- reproducible:
--
--   lab run examples/orders_state_ttl.sql
--   lab run examples/orders_state_ttl.sql --set lab.clock=deterministic \
--       --set table.exec.state.ttl='1 s'
--
-- Compare the state entries of the GroupAggregate: the first run keeps
-- every order, the second only the orders written in the last second.
-- Knobs (table options):
-- 'lines-per-order', 'max-lag' (how many orders back a line may go),
-- 'customers', 'customer-zipf-exponent', 'amount-min', 'amount-max'.

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id BIGINT,
  amount      BIGINT
) WITH (
  'connector'       = 'orders',
  'number-of-rows'  = '1000000',
  'lines-per-order' = '4',
  'max-lag'         = '50',
  'customers'       = '10000',
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
SELECT o.order_id, SUM(o.amount) AS revenue
FROM orders AS o
GROUP BY o.order_id;
