//! The index-lookup store a delta join reads instead of keeping join state
//! (the lab's stand-in for Apache Fluss) and the LRU map the join's caches
//! use. The source wrapper that writes the store is the delta join's
//! ([`crate::join::StoreWritingSource`]).

pub mod lru;
pub mod store;

pub use lru::LruCache;
pub use store::{
    Generation, IndexLookupStore, LookupResult, LookupStoreError, StoreStats, TableId, TableSchema,
};
