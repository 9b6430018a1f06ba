//! Input generators, one per category ([`generate`]): grammar-based (what
//! the lab reads, typed so that much of it runs) and mutation-based (the
//! shipped examples and campaigns, and generated inputs, edited as a
//! hostile user would).

pub mod config;
pub mod csv;
pub mod plan;
pub mod results;
pub mod seeds;
pub mod spec;
pub mod sql;

use crate::case::{Category, Input};
use crate::rng::Rng;

/// Input `index` of `category` in a run seeded `seed`: the same triple
/// always gives the same input.
pub fn generate(category: Category, seed: u64, index: u64) -> Input {
    let mut rng = Rng::for_input(seed, category.id(), index);
    match category {
        Category::Sql => sql::input(&mut rng),
        Category::Csv => csv::input(&mut rng),
        Category::Config => config::input(&mut rng),
        Category::Spec => spec::input(&mut rng),
        Category::Plan => plan::input(&mut rng),
        Category::Results => results::input(&mut rng),
    }
}
