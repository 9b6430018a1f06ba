-- The script of campaigns/delta-join.toml: Flink's delta join (Performance
-- Tuning, "Delta Joins") against a regular join.
--
-- An insert-only stream of ${rows} orders, each for a customer drawn from
-- ${customers} with a Zipf law of exponent ${skew} (a few customers place
-- most orders), INNER JOINed with the customers table, an upsert stream
-- without deletes (the `tenant` connector: one row per customer, 20% of its
-- changes updates). Both tables declare 'index.key', the column the
-- index-lookup store (the lab's stand-in for an Apache Fluss table) indexes
-- them by; the sink is an upsert sink on the join's unique key (order id,
-- customer key), so delta join applies (the campaign forces or disables it
-- per variant with table.optimizer.delta-join.strategy).
--
-- A regular join keeps both inputs in its state: every order (the state
-- grows with the stream) and every customer. A delta join keeps none; each
-- order looks its customer up in the store (or in the right-side cache,
-- table.exec.delta-join.right.cache-size, which the campaign sweeps), and
-- each customer change looks up the customer's orders (the left-side
-- cache). The campaign fills ${...}; run it with
-- `lab campaign campaigns/delta-join.toml`, not as it is.

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id BIGINT,
  amount      BIGINT,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector'                        = 'datagen',
  'number-of-rows'                   = '${rows}',
  'fields.order_id.kind'             = 'sequence',
  'fields.order_id.start'            = '1',
  'fields.order_id.end'              = '${rows}',
  'fields.customer_id.min'           = '1',
  'fields.customer_id.max'           = '${customers}',
  'fields.customer_id.distribution'  = 'zipf',
  'fields.customer_id.zipf-exponent' = '${skew}',
  'fields.amount.min'                = '1',
  'fields.amount.max'                = '1000',
  'seed'                             = '1',
  'index.key'                        = 'customer_id'
);

CREATE TABLE customers (
  tenant_id BIGINT,
  row_id    BIGINT,
  payload   STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED
) WITH (
  'connector'       = 'tenant',
  'tenants'         = '${customers}',
  'rows-per-tenant' = '1',
  'update-ratio'    = '0.2',
  'payload-length'  = '32',
  'table-index'     = '1',
  'seed'            = '1',
  'index.key'       = 'tenant_id'
);

CREATE TABLE enriched (
  order_id    BIGINT,
  customer_id BIGINT,
  row_id      BIGINT,
  amount      BIGINT,
  payload     STRING,
  PRIMARY KEY (order_id, customer_id, row_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO enriched
SELECT o.order_id, c.tenant_id, c.row_id, o.amount, c.payload
FROM orders o
JOIN customers c ON o.customer_id = c.tenant_id;
