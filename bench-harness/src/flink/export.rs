//! `lab export SCRIPT -o DIR`: a bundle any Flink 2.x cluster runs.
//!
//! The bundle holds the script rewritten for Flink with its sinks as
//! written (`script.sql`), the lab's sources materialised under `data/`,
//! the same statements as a job file for the PyFlink driver (`job.json`,
//! `driver.py`) and `run.sh`, which fills in the bundle's absolute path
//! (Flink's filesystem connector reads absolute paths) and runs it with
//! `$FLINK_HOME/bin/sql-client.sh -f` or, given `HOST:PORT`, with PyFlink
//! against that REST address. The bundle is written beside `DIR` and
//! renamed into place, so a `DIR` that exists is complete.

use super::rewrite::{self, RewriteOptions, SinkRewrite};
use super::{driver, FlinkError, FlinkHome};
use std::path::Path;

const PLACEHOLDER: &str = "@BUNDLE_DIR@";

const RUN_SH: &str = r#"#!/usr/bin/env bash
# Runs this bundle (written by `lab export`) on a Flink 2.x cluster:
#   ./run.sh              with $FLINK_HOME/bin/sql-client.sh -f (the cluster of $FLINK_HOME/conf)
#   ./run.sh HOST:PORT    with PyFlink (python3 with apache-flink 2.x) against that REST address
set -euo pipefail
DIR="$(cd "$(dirname "$0")" && pwd)"
sed "s|@BUNDLE_DIR@|$DIR|g" "$DIR/script.sql" > "$DIR/script.resolved.sql"
if [ $# -ge 1 ]; then
  sed "s|@BUNDLE_DIR@|$DIR|g; s|@REST@|$1|g" "$DIR/job.json" > "$DIR/job.resolved.json"
  exec "${PYTHON:-python3}" "$DIR/driver.py" "$DIR/job.resolved.json"
fi
exec "${FLINK_HOME:?set FLINK_HOME to a Flink 2.x distribution, or give HOST:PORT}/bin/sql-client.sh" \
  -f "$DIR/script.resolved.sql"
"#;

pub struct ExportArgs<'a> {
    pub script: &'a Path,
    pub out: &'a Path,
    pub sets: &'a [(String, String)],
    pub params: &'a [(String, String)],
}

/// Writes the bundle; returns a description of what it holds.
pub fn export(a: &ExportArgs) -> Result<String, FlinkError> {
    let sql = std::fs::read_to_string(a.script).map_err(|e| {
        FlinkError::input(format!("cannot read script {}: {e}", a.script.display()))
    })?;
    if a.out.exists() {
        return Err(FlinkError::input(format!(
            "-o {}: already exists; give a new folder",
            a.out.display()
        )));
    }
    let home = FlinkHome::from_env();
    let base_dir = a.script.parent().map(Path::to_path_buf).unwrap_or_default();
    let r = rewrite::rewrite(
        &sql,
        &RewriteOptions {
            params: a.params,
            overrides: a.sets,
            base_dir: &base_dir,
            data_dir: &home.data_dir(),
            sinks: SinkRewrite::Keep,
            data_path: &|m| {
                format!(
                    "{PLACEHOLDER}/data/{}",
                    m.path.file_name().unwrap_or_default().to_string_lossy()
                )
            },
            only_sinks: None,
        },
    )?;
    let name = a.out.file_name().ok_or_else(|| {
        FlinkError::input(format!("-o {}: expected a folder name", a.out.display()))
    })?;
    let parent = match a.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let tmp = parent.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let io = |what: &str, e: std::io::Error| FlinkError::execution(format!("{what}: {e}"));
    let written = (|| {
        std::fs::create_dir_all(tmp.join("data")).map_err(|e| io("cannot create the bundle", e))?;
        for (_, m) in &r.data {
            let dest = tmp
                .join("data")
                .join(m.path.file_name().unwrap_or_default());
            // A hard link when the data lives on the same file system.
            if std::fs::hard_link(&m.path, &dest).is_err() {
                std::fs::copy(&m.path, &dest)
                    .map_err(|e| io(&format!("cannot copy {}", m.path.display()), e))?;
            }
        }
        let header = format!(
            "-- {} rewritten for Flink by `lab export` (joinlab): the lab's sources read\n\
             -- the files in data/ with the same rows in the same order. Run it with run.sh.\n\n",
            a.script.display()
        );
        std::fs::write(tmp.join("script.sql"), header + &r.script())
            .map_err(|e| io("cannot write script.sql", e))?;
        let job = serde_json::json!({
            "rest": "@REST@",
            "jars": [],
            "config": {},
            "statements": r.statements,
        });
        std::fs::write(
            tmp.join("job.json"),
            serde_json::to_string_pretty(&job).expect("serialises"),
        )
        .map_err(|e| io("cannot write job.json", e))?;
        std::fs::copy(driver::driver_path(), tmp.join("driver.py"))
            .map_err(|e| io("cannot copy driver.py", e))?;
        let run = tmp.join("run.sh");
        std::fs::write(&run, RUN_SH).map_err(|e| io("cannot write run.sh", e))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io("cannot make run.sh executable", e))?;
        std::fs::rename(&tmp, a.out)
            .map_err(|e| io(&format!("cannot create {}", a.out.display()), e))
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let mut msg = format!(
        "bundle written to {}: script.sql ({} statements), {} data file(s), run.sh\n\
         run it: {}/run.sh               (with $FLINK_HOME/bin/sql-client.sh)\n\
         or:     {}/run.sh HOST:PORT     (with PyFlink against that REST address)",
        a.out.display(),
        r.statements.len(),
        r.data.len(),
        a.out.display(),
        a.out.display()
    );
    if !r.dropped_keys.is_empty() {
        msg.push_str(&format!(
            "\nlab-only keys left out: {}",
            r.dropped_keys.join(", ")
        ));
    }
    Ok(msg)
}
