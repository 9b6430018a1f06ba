//! `examples/campaign_nexmark.sql` holds every Nexmark query of
//! `examples/nexmark/` in one script (a campaign runs one sink of it at a
//! time), so the two must not drift apart: each query's statements appear
//! in the campaign script as written, its source tables too with the
//! event count left to the campaign (`${events}`), and every sink of the
//! campaign script is run by `campaigns/nexmark.toml`.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The statements of a script, comments dropped and white space collapsed.
fn statements(sql: &str) -> Vec<String> {
    let code: String = sql
        .lines()
        .map(|l| l.split_once("--").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n");
    code.split(';')
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

/// A source table's statement with its event count replaced by the
/// campaign's parameter.
fn with_events_parameter(statement: &str) -> String {
    let key = "'events.num' = '";
    let Some(at) = statement.find(key) else {
        return statement.to_string();
    };
    let start = at + key.len();
    let end = start + statement[start..].find('\'').unwrap();
    format!("{}${{events}}{}", &statement[..start], &statement[end..])
}

#[test]
fn the_campaign_script_holds_every_query_as_shipped() {
    let campaign = std::fs::read_to_string(root().join("examples/campaign_nexmark.sql")).unwrap();
    let campaign = statements(&campaign);
    let mut queries: Vec<PathBuf> = std::fs::read_dir(root().join("examples/nexmark"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    queries.sort();
    assert!(queries.len() >= 10, "{queries:?}");
    let mut missing = Vec::new();
    for q in &queries {
        let sql = std::fs::read_to_string(q).unwrap();
        for s in statements(&sql) {
            let s = with_events_parameter(&s);
            if !campaign.contains(&s) {
                missing.push(format!("{}: {s}", q.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "statements of examples/nexmark/ not in examples/campaign_nexmark.sql:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_sink_of_the_campaign_script_is_run_by_the_campaign() {
    let campaign = std::fs::read_to_string(root().join("examples/campaign_nexmark.sql")).unwrap();
    let spec = std::fs::read_to_string(root().join("campaigns/nexmark.toml")).unwrap();
    let sinks: Vec<String> = statements(&campaign)
        .iter()
        .filter_map(|s| s.strip_prefix("INSERT INTO "))
        .map(|s| s.split_whitespace().next().unwrap().to_string())
        .collect();
    assert!(sinks.len() >= 10, "{sinks:?}");
    let unrun: Vec<&String> = sinks
        .iter()
        .filter(|s| !spec.contains(&format!("sinks = [\"{s}\"]")))
        .collect();
    assert!(
        unrun.is_empty(),
        "sinks no variant of campaigns/nexmark.toml runs: {unrun:?}"
    );
}
