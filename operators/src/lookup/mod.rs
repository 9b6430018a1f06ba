//! The index-lookup store a delta join reads instead of keeping join state
//! (the lab's stand-in for Apache Fluss), the source wrapper that writes it,
//! and the LRU map the join's caches use.

pub mod lru;
pub mod source;
pub mod store;

pub use lru::LruCache;
pub use source::StoreWritingSource;
pub use store::{
    Generation, IndexLookupStore, LookupResult, LookupStoreError, StoreStats, TableId, TableSchema,
};
