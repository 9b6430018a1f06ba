//! What lookups read and cache: the index-lookup store a delta join reads
//! instead of keeping join state (the lab's stand-in for Apache Fluss), the
//! in-memory dimension table a lookup join queries (the stand-in for a JDBC
//! or HBase table), the lookup join's partial cache and the LRU map the
//! caches use. The source wrapper that writes the store is the delta
//! join's ([`crate::join::StoreWritingSource`]).

pub mod dimension;
pub mod lru;
pub mod partial_cache;
pub mod store;

pub use dimension::DimensionTable;
pub use lru::LruCache;
pub use partial_cache::{PartialCache, PartialCacheOptions};
pub use store::{
    Generation, IndexLookupStore, LookupResult, LookupStoreError, StoreStats, TableId, TableSchema,
};
