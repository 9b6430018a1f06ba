//! The `orders` connector: order lines whose orders stay open for a while,
//! for the state TTL example.
//!
//! Semantics. Each row is one line of an order (as in TPC-H's `lineitem`),
//! all `+I`, with exactly the columns
//!
//! ```sql
//! order_id BIGINT, customer_id BIGINT, amount BIGINT
//! ```
//!
//! Orders open one after another: at row `i` (0-based) the newest order is
//! `i / lines-per-order + 1`, and the row belongs to the newest order minus
//! a lag drawn uniformly from `0..=max-lag` (never below order 1). So an
//! order's lines arrive over roughly `(max-lag + 1) * lines-per-order` rows
//! and then stop: state kept per `order_id` (`SUM(amount) GROUP BY
//! order_id`, or a join on `order_id`) is dead once the order is old, which
//! is what `table.exec.state.ttl` or a `STATE_TTL` hint reclaims, and a TTL
//! shorter than an order's life forgets lines (the result then differs from
//! the batch answer, as Flink's does).
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `number-of-rows` | required | lines to emit |
//! | `lines-per-order` | `4` | rows per order on average (at least 1) |
//! | `max-lag` | `0` | how many orders back a line may go; `0` gives each order its lines consecutively |
//! | `customers` | `1000` | `customer_id` is in `1..=customers`, one per order (all its lines agree) |
//! | `customer-zipf-exponent` | `0` | Zipf exponent of an order's customer (customer 1 is the most active); `0` means uniform |
//! | `amount-min`, `amount-max` | `1`, `100` | each line's `amount` is uniform in `amount-min..=amount-max` (non-negative) |
//! | `seed` | `0` | |
//!
//! Speed: a few draws and the row `Vec` per row.

use std::collections::BTreeMap;

use operators::{Change, DataType, Value};
use rand::RngCore;

use super::draw::{below, mix};
use super::options::{check_schema, Options};
use crate::error::DatasetError;
use crate::rng::LabRng;
use crate::zipf::Zipf;
use operators::exec::ChangeSource;
use operators::operator::OpResult;

/// The connector's name.
pub const CONNECTOR: &str = "orders";

/// The columns an `orders` table must declare.
pub const SCHEMA: [(&str, DataType); 3] = [
    ("order_id", DataType::BigInt),
    ("customer_id", DataType::BigInt),
    ("amount", DataType::BigInt),
];

const OPTIONS: [&str; 9] = [
    "connector",
    "number-of-rows",
    "lines-per-order",
    "max-lag",
    "customers",
    "customer-zipf-exponent",
    "amount-min",
    "amount-max",
    "seed",
];

/// Random streams of the connector (`'or'` in the high bits).
const STREAM: u64 = 0x6f72 << 32;

/// A bounded, seeded stream of order lines.
#[derive(Debug)]
pub struct OrdersSource {
    row: u64,
    total: u64,
    lines_per_order: u64,
    max_lag: u64,
    customers: CustomerDist,
    customer_key: u64,
    amount_min: u64,
    amount_span: u64,
    rng: LabRng,
}

#[derive(Debug)]
enum CustomerDist {
    Uniform(u64),
    Zipf(Zipf),
}

impl OrdersSource {
    /// Validates the options and the declared columns.
    pub fn new(
        options: &BTreeMap<String, String>,
        column_names: &[String],
        types: &[DataType],
    ) -> Result<OrdersSource, DatasetError> {
        let opts = Options::new(options, &OPTIONS)?;
        check_schema(CONNECTOR, &SCHEMA, "", column_names, types)?;
        let total = opts.number_of_rows()?;
        let lines_per_order = opts.int_in("lines-per-order", Some(4), 1, i64::MAX as u64)?;
        let max_lag = opts.int_in("max-lag", Some(0), 0, i64::MAX as u64 - 1)?;
        let customers = opts.int_in("customers", Some(1000), 1, i64::MAX as u64)?;
        let exponent = opts.number_in(
            "customer-zipf-exponent",
            0.0,
            0.0,
            f64::INFINITY,
            true,
            "a number >= 0 (0 means uniform)",
        )?;
        let customers = if exponent == 0.0 {
            CustomerDist::Uniform(customers)
        } else {
            CustomerDist::Zipf(Zipf::new(customers, exponent)?)
        };
        let amount_min = opts.int_in("amount-min", Some(1), 0, i64::MAX as u64)?;
        let amount_max = opts.int_in("amount-max", Some(100), 0, i64::MAX as u64)?;
        if amount_max < amount_min {
            return Err(DatasetError::bad_option(
                "amount-max",
                opts.get("amount-max").unwrap_or_default(),
                format!("an integer >= 'amount-min' ({amount_min})"),
            ));
        }
        let seed = opts.seed()?;
        Ok(OrdersSource {
            row: 0,
            total,
            lines_per_order,
            max_lag,
            customers,
            customer_key: mix(seed, &[STREAM]),
            amount_min,
            amount_span: amount_max - amount_min + 1,
            rng: LabRng::seed_from(seed, STREAM),
        })
    }

    /// The number of rows the source emits in all.
    pub fn total_rows(&self) -> u64 {
        self.total
    }

    /// The customer of an order: a pure function of the order, so all its
    /// lines agree.
    fn customer(&self, order: u64) -> u64 {
        match &self.customers {
            CustomerDist::Uniform(n) => 1 + below(mix(self.customer_key, &[order]), *n),
            CustomerDist::Zipf(z) => z.sample(&mut LabRng::seed_from(self.customer_key, order)),
        }
    }
}

impl ChangeSource for OrdersSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let n = (max as u64).min(self.total - self.row) as usize;
        out.reserve(n);
        for _ in 0..n {
            let newest = self.row / self.lines_per_order + 1;
            let lag = if self.max_lag == 0 {
                0
            } else {
                below(self.rng.next_u64(), self.max_lag + 1)
            };
            let order = newest.saturating_sub(lag).max(1);
            let amount = self.amount_min + below(self.rng.next_u64(), self.amount_span);
            out.push(Change::insert(vec![
                Value::Int(order as i64),
                Value::Int(self.customer(order) as i64),
                Value::Int(amount as i64),
            ]));
            self.row += 1;
        }
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}
