//! The `lookup.*` options of a table a lookup join reads (Flink's
//! `LookupOptions`): whether lookups go through a partial cache and how
//! that cache behaves. They belong to the table (its `WITH` clause), not to
//! its connector: the connector never sees them. Read when a lookup join
//! is bound (an error points at the table there) and again when it is
//! planned (the result goes on the node).

use crate::config::parse_duration;
use operators::lookup::PartialCacheOptions;
use std::collections::BTreeMap;

pub const CACHE: &str = "lookup.cache";
pub const MAX_ROWS: &str = "lookup.partial-cache.max-rows";
pub const EXPIRE_AFTER_WRITE: &str = "lookup.partial-cache.expire-after-write";
pub const EXPIRE_AFTER_ACCESS: &str = "lookup.partial-cache.expire-after-access";
pub const CACHE_MISSING_KEY: &str = "lookup.partial-cache.cache-missing-key";

const KNOWN: [&str; 5] = [
    CACHE,
    MAX_ROWS,
    EXPIRE_AFTER_WRITE,
    EXPIRE_AFTER_ACCESS,
    CACHE_MISSING_KEY,
];

/// Whether `key` is one of the options read here (a connector does not
/// get them).
pub fn is_lookup_option(key: &str) -> bool {
    key.starts_with("lookup.")
}

/// The partial cache the options ask for (`None`: `lookup.cache` is
/// `NONE` or absent), or what is wrong with them.
pub fn partial_cache(
    options: &BTreeMap<String, String>,
) -> Result<Option<PartialCacheOptions>, String> {
    if let Some(k) = options
        .keys()
        .find(|k| is_lookup_option(k) && !KNOWN.contains(&k.as_str()))
    {
        return Err(format!(
            "unknown lookup option '{k}'; the lab knows {}",
            KNOWN.join(", ")
        ));
    }
    let cache = options.get(CACHE).map(|v| v.trim().to_ascii_uppercase());
    match cache.as_deref() {
        // The partial cache's options are read only for it (as Flink does):
        // with NONE they are checked, and ignored.
        None | Some("NONE") => {
            let mut partial = options.clone();
            partial.insert(CACHE.to_string(), "PARTIAL".to_string());
            return partial_cache(&partial).map(|_| None);
        }
        Some("PARTIAL") => {}
        Some("FULL") => {
            return Err(format!(
                "'{CACHE}' = 'FULL' is not supported yet; use 'NONE' or 'PARTIAL'"
            ))
        }
        Some(_) => {
            return Err(format!(
                "'{CACHE}' = '{}' is not a cache type; use 'NONE' or 'PARTIAL'",
                options[CACHE]
            ))
        }
    }
    let max_rows = match options.get(MAX_ROWS) {
        None => usize::MAX,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(0) | Err(_) => {
                return Err(format!(
                    "'{MAX_ROWS}' = '{v}' is not a positive whole number"
                ))
            }
            Ok(n) => usize::try_from(n).unwrap_or(usize::MAX),
        },
    };
    let duration = |key: &str| -> Result<Option<i64>, String> {
        options
            .get(key)
            .map(|v| {
                let d = parse_duration(v).map_err(|e| format!("'{key}' = '{v}': {e}"))?;
                if d.is_zero() {
                    return Err(format!("'{key}' = '{v}' must be above zero"));
                }
                Ok(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            })
            .transpose()
    };
    let cache_missing_key = match options.get(CACHE_MISSING_KEY).map(|v| v.trim()) {
        None => true,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => {
            return Err(format!(
                "'{CACHE_MISSING_KEY}' = '{v}' is not 'true' or 'false'"
            ))
        }
    };
    Ok(Some(PartialCacheOptions {
        max_rows,
        expire_after_write_ms: duration(EXPIRE_AFTER_WRITE)?,
        expire_after_access_ms: duration(EXPIRE_AFTER_ACCESS)?,
        cache_missing_key,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reads_a_partial_cache() {
        let c = partial_cache(&opts(&[
            (CACHE, "partial"),
            (MAX_ROWS, "100"),
            (EXPIRE_AFTER_WRITE, "10 s"),
            (CACHE_MISSING_KEY, "false"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(c.max_rows, 100);
        assert_eq!(c.expire_after_write_ms, Some(10_000));
        assert_eq!(c.expire_after_access_ms, None);
        assert!(!c.cache_missing_key);
        assert_eq!(partial_cache(&opts(&[])).unwrap(), None);
        assert_eq!(partial_cache(&opts(&[(CACHE, "NONE")])).unwrap(), None);
        assert_eq!(
            partial_cache(&opts(&[(CACHE, "none"), (MAX_ROWS, "10")])).unwrap(),
            None
        );
    }

    #[test]
    fn refuses_bad_values_and_unknown_keys() {
        for bad in [
            opts(&[(CACHE, "LRU")]),
            opts(&[(CACHE, "FULL")]),
            opts(&[(CACHE, "PARTIAL"), (MAX_ROWS, "-1")]),
            opts(&[(CACHE, "PARTIAL"), (EXPIRE_AFTER_ACCESS, "soon")]),
            opts(&[(CACHE, "PARTIAL"), (CACHE_MISSING_KEY, "yes")]),
            opts(&[(MAX_ROWS, "none")]),
            opts(&[("lookup.partial-cache.size", "10")]),
        ] {
            assert!(partial_cache(&bad).is_err(), "{bad:?}");
        }
    }
}
