//! The `nexmark` connector: the Nexmark benchmark's Person, Auction and Bid
//! events, as the reference generator makes them.
//!
//! Semantics. The reference generator (Flink's nexmark repository, from
//! Beam's Nexmark) numbers events `0, 1, 2, ...`; event number `n` becomes
//! event id `e` (the same, unless out-of-order groups shuffle ids within a
//! group: `e = (n / g) * g + (n * 953) % g` for group size `g`), and the id
//! decides the kind: with proportions person `p`, auction `a`, bid `b`
//! (default 1/3/46) and `t = p + a + b`, `e % t < p` is a person,
//! `< p + a` an auction, the rest bids. Person and auction ids follow from
//! the event id (`1000 +` the count of that kind before it), so every id is
//! generated once, in order. A table declares one kind with `'nexmark.table'
//! = 'person' | 'auction' | 'bid'`; each table walks the same event stream
//! and keeps its own kind, so ids agree across the three tables.
//!
//! ```sql
//! CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,
//!   url STRING, `dateTime` TIMESTAMP(3), extra STRING,
//!   WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND)
//! WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '100000');
//! ```
//!
//! Columns (names and types exactly, in this order):
//! - person: `id BIGINT, name STRING, emailAddress STRING, creditCard STRING,
//!   city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING`;
//! - auction: `id BIGINT, itemName STRING, description STRING, initialBid
//!   BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3),
//!   seller BIGINT, category BIGINT, extra STRING`;
//! - bid: `auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url
//!   STRING, dateTime TIMESTAMP(3), extra STRING`.
//!
//! Options ([`OPTIONS`]; the reference's names where it has them):
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `nexmark.table` | required | `person`, `auction` or `bid` |
//! | `events.num` (or `number-of-rows`) | required | events in total, of all three kinds |
//! | `first-event.rate` | `10000` | events per second of event time: event `n` has `dateTime = base + floor(n * 1e6 / rate) / 1000` ms |
//! | `next-event.rate` | `10000` | accepted and ignored, as the reference generator does |
//! | `person.proportion`, `auction.proportion`, `bid.proportion` | `1`, `3`, `46` | the event mix |
//! | `bid.hot-ratio.auctions` | `2` | a bid goes to the hot auction with probability `1 - 1/r` |
//! | `bid.hot-ratio.bidders` | `4` | a bid is by the hot bidder with probability `1 - 1/r` |
//! | `auction.hot-ratio.sellers` | `4` | an auction is by the hot seller with probability `1 - 1/r` |
//! | `person.avg-size`, `auction.avg-size`, `bid.avg-size` | `200`, `500`, `100` | bytes (a trailing `b` is allowed); `extra` pads each event to about this size |
//! | `nexmark.seed` | `0` | |
//! | `nexmark.base-time` | `1436918400000` | `dateTime` of event 0, epoch ms (2015-07-15 00:00:00 UTC) |
//! | `nexmark.out-of-order-group-size` | `1` | events shuffled within groups of this size (1: in order) |
//! | `nexmark.active-people` | `1000` | people a non-hot seller or bidder is drawn from |
//! | `nexmark.in-flight-auctions` | `100` | auctions a non-hot bid is drawn from; also sets `expires` |
//!
//! The hot auction is the first of the last block of 100 auctions, the hot
//! seller the first of the last block of 100 people, the hot bidder the
//! second. A non-hot auction is uniform over the last `in-flight-auctions +
//! 1` auctions and the 10 not yet generated ("leads"); a non-hot person over
//! the last `active-people` people and 10 leads: a bid may name an auction
//! or a person up to 10 ids ahead of the last generated, as in the reference.
//! An auction lasts `1 + uniform(0, 2h)` ms, `h` being the event time until
//! `in-flight-auctions` more auctions are due. Prices are `round(10^(6u) *
//! 100)` cents; half the bids come from four hot channels, the rest from
//! 10,000 channels, each with its URL (nine in ten carrying a `channel_id`).
//!
//! Differences from the reference, all deliberate: each event draws from
//! its own [`LabRng`] stream, seeded by `nexmark.seed` and its event id
//! (the reference draws from one unseeded stream, so its runs differ), which
//! lets a table skip the other kinds' events without generating them;
//! events start at number 0 with id 0 (Beam's and nexmark-rs's choice;
//! Flink's table source starts at id 2, so person 1000 and auction 1000 are
//! never generated there); a bidder is `1000 +` its base-0 id (Flink's
//! generator adds 1000 twice, shifting every bidder 1000 people ahead of
//! the person ids); one generator timeline (Flink at parallelism 1; Flink
//! splits the ids between its source subtasks). Uniform draws use
//! `draw::below` for every range.
//!
//! Memory: a 1 MiB string `extra` is cut from, and for bids the 10,004
//! channel URLs; nothing grows with `events.num`. Speed: one generator seed
//! and a few strings per event of the table's kind, a few integer
//! operations per event of another kind.

use operators::value::SmolStr;
use std::collections::BTreeMap;

use operators::{Change, DataType, Value};
use rand::RngCore;

use super::draw::{below, mix, unit, SplitMix};
use super::options::{check_schema, Options};
use crate::error::DatasetError;
use crate::rng::LabRng;
use operators::exec::ChangeSource;
use operators::operator::OpResult;

/// The connector's name.
pub const CONNECTOR: &str = "nexmark";

/// The options a `nexmark` table takes.
pub const OPTIONS: [&str; 20] = [
    "connector",
    "nexmark.table",
    "events.num",
    "number-of-rows",
    "first-event.rate",
    "next-event.rate",
    "person.proportion",
    "auction.proportion",
    "bid.proportion",
    "bid.hot-ratio.auctions",
    "bid.hot-ratio.bidders",
    "auction.hot-ratio.sellers",
    "person.avg-size",
    "auction.avg-size",
    "bid.avg-size",
    "nexmark.seed",
    "nexmark.base-time",
    "nexmark.out-of-order-group-size",
    "nexmark.active-people",
    "nexmark.in-flight-auctions",
];

/// The person table's columns.
pub const PERSON_SCHEMA: [(&str, DataType); 8] = [
    ("id", DataType::BigInt),
    ("name", DataType::String),
    ("emailAddress", DataType::String),
    ("creditCard", DataType::String),
    ("city", DataType::String),
    ("state", DataType::String),
    ("dateTime", DataType::Timestamp),
    ("extra", DataType::String),
];

/// The auction table's columns.
pub const AUCTION_SCHEMA: [(&str, DataType); 10] = [
    ("id", DataType::BigInt),
    ("itemName", DataType::String),
    ("description", DataType::String),
    ("initialBid", DataType::BigInt),
    ("reserve", DataType::BigInt),
    ("dateTime", DataType::Timestamp),
    ("expires", DataType::Timestamp),
    ("seller", DataType::BigInt),
    ("category", DataType::BigInt),
    ("extra", DataType::String),
];

/// The bid table's columns.
pub const BID_SCHEMA: [(&str, DataType); 7] = [
    ("auction", DataType::BigInt),
    ("bidder", DataType::BigInt),
    ("price", DataType::BigInt),
    ("channel", DataType::String),
    ("url", DataType::String),
    ("dateTime", DataType::Timestamp),
    ("extra", DataType::String),
];

/// The reference's constants.
pub const FIRST_PERSON_ID: i64 = 1000;
pub const FIRST_AUCTION_ID: i64 = 1000;
pub const FIRST_CATEGORY_ID: i64 = 10;
pub const NUM_CATEGORIES: u64 = 5;
pub const PERSON_ID_LEAD: u64 = 10;
pub const AUCTION_ID_LEAD: u64 = 10;
/// Hot sellers, bidders and auctions are chosen in blocks of this many ids.
pub const HOT_BLOCK: u64 = 100;
/// 2015-07-15 00:00:00 UTC, Beam Nexmark's base time.
pub const DEFAULT_BASE_TIME_MS: i64 = 1_436_918_400_000;

const US_STATES: [&str; 6] = ["AZ", "CA", "ID", "OR", "WA", "WY"];
const US_CITIES: [&str; 10] = [
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
];
const FIRST_NAMES: [&str; 11] = [
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter",
];
const LAST_NAMES: [&str; 9] = [
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris",
];
const HOT_CHANNELS: [&str; 4] = ["Google", "Facebook", "Baidu", "Apple"];
const CHANNELS: u64 = 10_000;
const MIN_STRING_LENGTH: u64 = 3;
/// The reference cuts `extra` from one random string of this length.
const REUSABLE_EXTRA_LENGTH: usize = 1 << 20;
/// Largest `*.avg-size`: `extra` must stay shorter than half the reusable
/// string, where the reference cuts it from.
const MAX_AVG_SIZE: u64 = 1 << 18;
/// Random streams of the connector (`'nx'` in the high bits).
const STREAM: u64 = 0x6e78 << 32;

/// The kind of a Nexmark event, and the table of that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Person,
    Auction,
    Bid,
}

/// The generator's parameters, checked.
#[derive(Clone, Debug)]
pub struct NexmarkConfig {
    pub events: u64,
    pub person_proportion: u64,
    pub auction_proportion: u64,
    pub bid_proportion: u64,
    pub hot_auction_ratio: u64,
    pub hot_bidders_ratio: u64,
    pub hot_sellers_ratio: u64,
    pub avg_person_size: u64,
    pub avg_auction_size: u64,
    pub avg_bid_size: u64,
    pub seed: u64,
    pub base_time_ms: i64,
    /// Microseconds of event time between events.
    pub inter_event_delay_us: f64,
    pub out_of_order_group_size: u64,
    pub active_people: u64,
    pub in_flight_auctions: u64,
}

impl NexmarkConfig {
    fn total_proportion(&self) -> u64 {
        self.person_proportion + self.auction_proportion + self.bid_proportion
    }

    /// The event id of event number `n` (out-of-order groups shuffle ids).
    pub fn event_id(&self, n: u64) -> u64 {
        let g = self.out_of_order_group_size;
        (n / g) * g + ((n as u128 * 953) % g as u128) as u64
    }

    /// The kind of event id `e`.
    pub fn kind(&self, e: u64) -> EventKind {
        let rem = e % self.total_proportion();
        if rem < self.person_proportion {
            EventKind::Person
        } else if rem < self.person_proportion + self.auction_proportion {
            EventKind::Auction
        } else {
            EventKind::Bid
        }
    }

    /// The event time of the event with id (adjusted number) `e`, ms.
    pub fn timestamp(&self, e: u64) -> i64 {
        let us = (e as f64 * self.inter_event_delay_us) as i64;
        self.base_time_ms.saturating_add(us / 1000)
    }

    /// The last person id (base 0) generated at event id `e`: this one's
    /// when `e` is a person.
    pub fn last_base0_person_id(&self, e: u64) -> u64 {
        let t = self.total_proportion();
        let (epoch, offset) = (e / t, e % t);
        epoch * self.person_proportion + offset.min(self.person_proportion - 1)
    }

    /// The last auction id (base 0) generated at event id `e`: this one's
    /// when `e` is an auction. Before the first auction it is "-1"
    /// (`None`).
    pub fn last_base0_auction_id(&self, e: u64) -> Option<u64> {
        let t = self.total_proportion();
        let (epoch, offset) = (e / t, e % t);
        let (p, a) = (self.person_proportion, self.auction_proportion);
        if offset < p {
            (epoch * a).checked_sub(1)
        } else if offset >= p + a {
            Some(epoch * a + a - 1)
        } else {
            Some(epoch * a + offset - p)
        }
    }

    /// A person for a non-hot seller or bidder at event `e` (base 0).
    fn next_base0_person_id(&self, e: u64, rng: &mut LabRng) -> u64 {
        let people = self.last_base0_person_id(e) + 1;
        let active = people.min(self.active_people);
        people - active + below(rng.next_u64(), active + PERSON_ID_LEAD)
    }

    /// An auction for a non-hot bid at event `e` (base 0).
    fn next_base0_auction_id(&self, e: u64, rng: &mut LabRng) -> u64 {
        // The reference reads -1 as the last auction before the first one;
        // the range then starts at 0 all the same.
        let last = self.last_base0_auction_id(e);
        let max = last.map_or(-1, |l| l as i64);
        let min = (max - self.in_flight_auctions as i64).max(0);
        let span = (max - min + 1) as u64 + AUCTION_ID_LEAD;
        min as u64 + below(rng.next_u64(), span)
    }
}

/// The shared strings a table's events are made from.
struct Texts {
    /// The reference's reusable random string `extra` is cut from.
    extra: Box<str>,
    names: Vec<SmolStr>,
    cities: Vec<SmolStr>,
    states: Vec<SmolStr>,
    /// Channel name and URL: the four hot ones, then `channel-0..9999`
    /// (only for a bid table).
    channels: Vec<(SmolStr, SmolStr)>,
}

/// One Nexmark table: the events of one kind, in stream order.
pub struct NexmarkSource {
    config: NexmarkConfig,
    kind: EventKind,
    /// The next event number to look at.
    next: u64,
    key: u64,
    texts: Texts,
    text: String,
}

impl std::fmt::Debug for NexmarkSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NexmarkSource")
            .field("kind", &self.kind)
            .field("next", &self.next)
            .field("config", &self.config)
            .finish()
    }
}

/// Parses a byte size: an integer with an optional trailing `b`.
fn avg_size(opts: &Options, key: &str, default: u64) -> Result<u64, DatasetError> {
    let Some(value) = opts.get(key) else {
        return Ok(default);
    };
    let digits = value.trim().trim_end_matches(['b', 'B']).trim();
    match digits.parse::<u64>() {
        Ok(v) if v <= MAX_AVG_SIZE => Ok(v),
        _ => Err(DatasetError::bad_option(
            key,
            value,
            format!("a size in bytes from 0 to {MAX_AVG_SIZE} (e.g. '200' or '200b')"),
        )),
    }
}

impl NexmarkConfig {
    /// Reads and checks the options (all but `nexmark.table`).
    fn from_options(opts: &Options) -> Result<NexmarkConfig, DatasetError> {
        let events =
            match (opts.get("events.num"), opts.get("number-of-rows")) {
                (Some(_), Some(_)) => return Err(DatasetError::conflict(
                    "number-of-rows",
                    "give the number of events once: 'events.num' or 'number-of-rows', not both",
                )),
                (Some(_), None) => opts.int_in("events.num", None, 0, i64::MAX as u64)?,
                (None, Some(_)) => opts.int_in("number-of-rows", None, 0, i64::MAX as u64)?,
                (None, None) => {
                    return Err(DatasetError::missing(
                        "events.num",
                        "the number of events of all kinds: the lab needs bounded input",
                    ))
                }
            };
        const MAX_PROPORTION: u64 = 1_000_000;
        const MAX_RATIO: u64 = 1_000_000_000;
        let rate = opts.int_in("first-event.rate", Some(10_000), 1, 1_000_000_000)?;
        opts.int_in("next-event.rate", Some(10_000), 1, 1_000_000_000)?;
        let seed = match opts.get("nexmark.seed") {
            None => 0,
            Some(value) => {
                let v = value.trim();
                v.parse::<u64>()
                    .or_else(|_| v.parse::<i64>().map(|i| i as u64))
                    .map_err(|_| DatasetError::bad_option("nexmark.seed", value, "an integer"))?
            }
        };
        let base_time_ms = match opts.get("nexmark.base-time") {
            None => DEFAULT_BASE_TIME_MS,
            Some(value) => match value.trim().parse::<i64>() {
                Ok(v) if (0..=253_402_300_799_999).contains(&v) => v,
                _ => {
                    return Err(DatasetError::bad_option(
                        "nexmark.base-time",
                        value,
                        "milliseconds since 1970-01-01 00:00:00 UTC, before the year 10000",
                    ))
                }
            },
        };
        let group = opts.int_in("nexmark.out-of-order-group-size", Some(1), 1, 1_000_000_000)?;
        if group % 953 == 0 {
            return Err(DatasetError::bad_option(
                "nexmark.out-of-order-group-size",
                &group.to_string(),
                "a size that is not a multiple of 953 (the generator shuffles a group by \
                 multiplying by 953, which would repeat event ids)",
            ));
        }
        Ok(NexmarkConfig {
            events,
            person_proportion: opts.int_in("person.proportion", Some(1), 1, MAX_PROPORTION)?,
            auction_proportion: opts.int_in("auction.proportion", Some(3), 1, MAX_PROPORTION)?,
            bid_proportion: opts.int_in("bid.proportion", Some(46), 0, MAX_PROPORTION)?,
            hot_auction_ratio: opts.int_in("bid.hot-ratio.auctions", Some(2), 1, MAX_RATIO)?,
            hot_bidders_ratio: opts.int_in("bid.hot-ratio.bidders", Some(4), 1, MAX_RATIO)?,
            hot_sellers_ratio: opts.int_in("auction.hot-ratio.sellers", Some(4), 1, MAX_RATIO)?,
            avg_person_size: avg_size(opts, "person.avg-size", 200)?,
            avg_auction_size: avg_size(opts, "auction.avg-size", 500)?,
            avg_bid_size: avg_size(opts, "bid.avg-size", 100)?,
            seed,
            base_time_ms,
            inter_event_delay_us: 1_000_000.0 / rate as f64,
            out_of_order_group_size: group,
            active_people: opts.int_in("nexmark.active-people", Some(1000), 1, 1 << 40)?,
            in_flight_auctions: opts.int_in("nexmark.in-flight-auctions", Some(100), 1, 1 << 40)?,
        })
    }
}

fn arcs(items: impl Iterator<Item = String>) -> Vec<SmolStr> {
    items.map(|s| SmolStr::from(s.as_str())).collect()
}

impl NexmarkSource {
    /// Validates the options and the declared columns.
    pub fn new(
        options: &BTreeMap<String, String>,
        column_names: &[String],
        types: &[DataType],
    ) -> Result<NexmarkSource, DatasetError> {
        let opts = Options::new(options, &OPTIONS)?;
        let kind = match opts.get("nexmark.table").map(str::trim) {
            Some("person") => EventKind::Person,
            Some("auction") => EventKind::Auction,
            Some("bid") => EventKind::Bid,
            Some(other) => {
                return Err(DatasetError::bad_option(
                    "nexmark.table",
                    other,
                    "'person', 'auction' or 'bid'",
                ))
            }
            None => {
                return Err(DatasetError::missing(
                    "nexmark.table",
                    "'person', 'auction' or 'bid'",
                ))
            }
        };
        let (expected, note): (&[(&str, DataType)], &str) = match kind {
            EventKind::Person => (&PERSON_SCHEMA, "for 'nexmark.table' = 'person'"),
            EventKind::Auction => (&AUCTION_SCHEMA, "for 'nexmark.table' = 'auction'"),
            EventKind::Bid => (&BID_SCHEMA, "for 'nexmark.table' = 'bid'"),
        };
        check_schema(CONNECTOR, expected, note, column_names, types)?;
        let config = NexmarkConfig::from_options(&opts)?;
        Ok(NexmarkSource::with_config(config, kind))
    }

    /// A source of `kind` events under a checked configuration.
    pub fn with_config(config: NexmarkConfig, kind: EventKind) -> NexmarkSource {
        let key = mix(config.seed, &[STREAM]);
        let mut words = SplitMix(mix(key, &[1]));
        let mut extra = String::with_capacity(REUSABLE_EXTRA_LENGTH);
        push_lowercase(&mut extra, REUSABLE_EXTRA_LENGTH, &mut words);
        let channels = if kind == EventKind::Bid {
            let mut url_words = SplitMix(mix(key, &[2]));
            let mut channels: Vec<(SmolStr, SmolStr)> = HOT_CHANNELS
                .iter()
                .map(|c| {
                    (
                        SmolStr::from(*c),
                        SmolStr::from(base_url(&mut url_words).as_str()),
                    )
                })
                .collect();
            for i in 0..CHANNELS {
                let mut url = base_url(&mut url_words);
                if below(url_words.next_word(), 10) > 0 {
                    // Java's Math.abs(Integer.reverse(i)): channel 1 keeps
                    // Integer.MIN_VALUE.
                    let id = (i as i32).reverse_bits().wrapping_abs();
                    url.push_str(&format!("&channel_id={id}"));
                }
                channels.push((
                    SmolStr::from(format!("channel-{i}").as_str()),
                    SmolStr::from(url),
                ));
            }
            channels
        } else {
            Vec::new()
        };
        let texts = Texts {
            extra: extra.into_boxed_str(),
            names: arcs(
                FIRST_NAMES
                    .iter()
                    .flat_map(|f| LAST_NAMES.iter().map(move |l| format!("{f} {l}"))),
            ),
            cities: arcs(US_CITIES.iter().map(|s| s.to_string())),
            states: arcs(US_STATES.iter().map(|s| s.to_string())),
            channels,
        };
        NexmarkSource {
            config,
            kind,
            next: 0,
            key,
            texts,
            text: String::new(),
        }
    }

    /// The share of the event mix this table's kind has.
    fn proportion(&self) -> u64 {
        match self.kind {
            EventKind::Person => self.config.person_proportion,
            EventKind::Auction => self.config.auction_proportion,
            EventKind::Bid => self.config.bid_proportion,
        }
    }

    /// The generator's parameters.
    pub fn config(&self) -> &NexmarkConfig {
        &self.config
    }

    /// The row of event id `e` (of this table's kind), the `n`-th event.
    fn event(&mut self, n: u64, e: u64) -> Vec<Value> {
        let mut rng = LabRng::seed_from(self.key, e);
        let ts = self.config.timestamp(e);
        match self.kind {
            EventKind::Person => self.person(e, ts, &mut rng),
            EventKind::Auction => self.auction(n, e, ts, &mut rng),
            EventKind::Bid => self.bid(e, ts, &mut rng),
        }
    }

    fn person(&mut self, e: u64, ts: i64, rng: &mut LabRng) -> Vec<Value> {
        let c = &self.config;
        let id = c.last_base0_person_id(e) as i64 + FIRST_PERSON_ID;
        let name = pick(&self.texts.names, rng).clone();
        let mut email = next_string(rng, 7, ' ');
        email.push('@');
        email.push_str(&next_string(rng, 5, ' '));
        email.push_str(".com");
        let mut card = String::with_capacity(19);
        for i in 0..4 {
            if i > 0 {
                card.push(' ');
            }
            card.push_str(&format!("{:04}", below(rng.next_u64(), 10_000)));
        }
        let city = pick(&self.texts.cities, rng).clone();
        let state = pick(&self.texts.states, rng).clone();
        let size = 8 + name.len() + email.len() + card.len() + city.len() + state.len();
        let extra = self.extra(rng, size as u64, c.avg_person_size);
        vec![
            Value::Int(id),
            Value::Str(name),
            Value::str(&email),
            Value::str(&card),
            Value::Str(city),
            Value::Str(state),
            Value::Ts(ts),
            extra,
        ]
    }

    fn auction(&mut self, n: u64, e: u64, ts: i64, rng: &mut LabRng) -> Vec<Value> {
        let c = &self.config;
        let id = c.last_base0_auction_id(e).unwrap_or(0) as i64 + FIRST_AUCTION_ID;
        let seller = if below(rng.next_u64(), c.hot_sellers_ratio) > 0 {
            (c.last_base0_person_id(e) / HOT_BLOCK) * HOT_BLOCK
        } else {
            c.next_base0_person_id(e, rng)
        } as i64
            + FIRST_PERSON_ID;
        let category = FIRST_CATEGORY_ID + below(rng.next_u64(), NUM_CATEGORIES) as i64;
        let initial_bid = next_price(rng);
        // How long until in-flight-auctions more auctions are due.
        let now = c.event_id(n);
        let ahead = c.in_flight_auctions * c.total_proportion() / c.auction_proportion;
        let horizon = c.timestamp(now.saturating_add(ahead)) - ts;
        let length = 1 + below(rng.next_u64(), (horizon.max(0) as u64 * 2).max(1)) as i64;
        let expires = ts.saturating_add(length);
        let name = next_string(rng, 20, ' ');
        let description = next_string(rng, 100, ' ');
        let reserve = initial_bid + next_price(rng);
        let size = 8 + name.len() + description.len() + 40;
        let extra = self.extra(rng, size as u64, c.avg_auction_size);
        vec![
            Value::Int(id),
            Value::str(&name),
            Value::str(&description),
            Value::Int(initial_bid),
            Value::Int(reserve),
            Value::Ts(ts),
            Value::Ts(expires),
            Value::Int(seller),
            Value::Int(category),
            extra,
        ]
    }

    fn bid(&mut self, e: u64, ts: i64, rng: &mut LabRng) -> Vec<Value> {
        let c = &self.config;
        let auction = if below(rng.next_u64(), c.hot_auction_ratio) > 0 {
            (c.last_base0_auction_id(e).unwrap_or(0) / HOT_BLOCK) * HOT_BLOCK
        } else {
            c.next_base0_auction_id(e, rng)
        } as i64
            + FIRST_AUCTION_ID;
        let bidder = if below(rng.next_u64(), c.hot_bidders_ratio) > 0 {
            (c.last_base0_person_id(e) / HOT_BLOCK) * HOT_BLOCK + 1
        } else {
            c.next_base0_person_id(e, rng)
        } as i64
            + FIRST_PERSON_ID;
        let price = next_price(rng);
        let channel = if below(rng.next_u64(), 2) > 0 {
            below(rng.next_u64(), HOT_CHANNELS.len() as u64)
        } else {
            HOT_CHANNELS.len() as u64 + below(rng.next_u64(), CHANNELS)
        };
        let (channel, url) = self.texts.channels[channel as usize].clone();
        let extra = self.extra(rng, 32, c.avg_bid_size);
        vec![
            Value::Int(auction),
            Value::Int(bidder),
            Value::Int(price),
            Value::Str(channel),
            Value::Str(url),
            Value::Ts(ts),
            extra,
        ]
    }

    /// The reference's `nextExtra`: a string that brings the event to about
    /// `average` bytes (uniform within 20% of the missing size).
    fn extra(&mut self, rng: &mut LabRng, size: u64, average: u64) -> Value {
        if size > average {
            return Value::str("");
        }
        let desired = average - size;
        let delta = (desired as f64 * 0.2 + 0.5).floor() as u64;
        let length = desired - delta
            + if delta == 0 {
                0
            } else {
                below(rng.next_u64(), 2 * delta)
            };
        let length = length as usize;
        let offset = below(rng.next_u64(), (self.texts.extra.len() - length) as u64) as usize;
        self.text.clear();
        self.text
            .push_str(&self.texts.extra[offset..offset + length]);
        Value::str(&self.text)
    }
}

fn pick<'a, T>(items: &'a [T], rng: &mut LabRng) -> &'a T {
    &items[below(rng.next_u64(), items.len() as u64) as usize]
}

/// `round(10^(6u) * 100)`, rounding half up as Java's `Math.round`.
fn next_price(rng: &mut LabRng) -> i64 {
    (10f64.powf(unit(rng) * 6.0) * 100.0 + 0.5).floor() as i64
}

/// The reference's `nextString`: 3 to `max - 1` characters, each `special`
/// with probability 1/13, else a lowercase letter; trimmed of spaces.
fn next_string(rng: &mut LabRng, max: u64, special: char) -> String {
    let length = MIN_STRING_LENGTH + below(rng.next_u64(), max - MIN_STRING_LENGTH);
    let mut s = String::with_capacity(length as usize);
    for _ in 0..length {
        let word = rng.next_u64();
        if below(word, 13) == 0 {
            s.push(special);
        } else {
            // The low bits are independent of the high ones `below` used.
            s.push((b'a' + below(word << 32, 26) as u8) as char);
        }
    }
    s.trim_matches(' ').to_string()
}

/// `https://www.nexmark.com/xxx/xxx/xxx/item.htm?query=1`, each part 3 or 4
/// characters of `[a-z_]`.
fn base_url(words: &mut SplitMix) -> String {
    let mut url = String::from("https://www.nexmark.com/");
    for _ in 0..3 {
        let length = 3 + below(words.next_word(), 2);
        for _ in 0..length {
            let word = words.next_word();
            if below(word, 13) == 0 {
                url.push('_');
            } else {
                url.push((b'a' + below(word << 32, 26) as u8) as char);
            }
        }
        url.push('/');
    }
    url.push_str("item.htm?query=1");
    url
}

/// Appends `length` lowercase letters, four per word.
fn push_lowercase(text: &mut String, length: usize, words: &mut SplitMix) {
    let mut left = length;
    while left > 0 {
        let word = words.next_word();
        for shift in [0, 16, 32, 48] {
            if left == 0 {
                break;
            }
            let chunk = (word >> shift) & 0xffff;
            text.push((b'a' + ((chunk * 26) >> 16) as u8) as char);
            left -= 1;
        }
    }
}

impl ChangeSource for NexmarkSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let before = out.len();
        if self.proportion() == 0 {
            self.next = self.config.events;
        }
        while self.next < self.config.events && out.len() - before < max {
            let n = self.next;
            self.next += 1;
            let e = self.config.event_id(n);
            if self.config.kind(e) == self.kind {
                let row = self.event(n, e);
                out.push(Change::insert(row));
            }
        }
        Ok(out.len() - before)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}
