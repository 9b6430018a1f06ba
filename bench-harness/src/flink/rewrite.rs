//! Turning a lab script into the statements Flink runs.
//!
//! The script is what runs: its statements keep their text, hints and
//! order, with these changes only:
//!
//! - `${name}` parameters are filled (`--param name=value`);
//! - a `CREATE TABLE` read by an INSERT whose connector is the lab's gets a
//!   new `WITH (...)`: Flink's `filesystem` connector over the file
//!   [`super::data`] wrote with the lab's own rows; a lab source table that
//!   no INSERT reads is left out;
//! - a statement set (`EXECUTE STATEMENT SET BEGIN ... END`, or the SQL
//!   client's `BEGIN STATEMENT SET; ... END;`) becomes one driver step that
//!   runs its INSERTs as one job with Flink's `StatementSet`, as the lab
//!   runs them; an `EXPLAIN` (of a statement set too) is passed whole to
//!   Flink, which prints its own plan;
//! - every sink table gets `'connector' = 'lab-capture'` (the lab's capture
//!   sink, `flink/capture/`), which keeps the table's meaning: with a
//!   primary key an upsert sink (no `-U`), without one a retract sink that
//!   receives `-U` too (Flink's `blackhole` drops `-U` whatever the key);
//!   [`SinkRewrite::Keep`] leaves sinks as written (for `lab export`);
//! - the lab's default parallelism (1) is set first, since a client
//!   otherwise picks its own;
//! - `SET key = value` becomes Flink's `SET 'key' = 'value'` (as a driver
//!   configuration step); `--set` overrides come first and win over the
//!   script's SETs of the same key, as on the lab; `lab.*` keys mean
//!   nothing to Flink and are left out.
//!
//! The lab's front end parses the script first, so what it rejects is
//! reported the same way on both engines (exit code 2).

use super::data::{self, Materialized};
use super::FlinkError;
use operators::DataType;
use optimizer::logical::TableDef;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One step of the driver (`flink/driver.py`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DriverStatement {
    Set {
        key: String,
        value: String,
    },
    Sql {
        sql: String,
    },
    Insert {
        sql: String,
        sink: String,
    },
    /// The INSERTs of a statement set: one job.
    #[serde(rename = "statement_set")]
    StatementSet {
        inserts: Vec<SetInsert>,
    },
    Explain {
        sql: String,
    },
}

/// One INSERT of a statement set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SetInsert {
    pub sql: String,
    pub sink: String,
}

impl DriverStatement {
    /// The statement as Flink SQL text.
    pub fn text(&self) -> String {
        match self {
            DriverStatement::Set { key, value } => {
                format!("SET '{}' = '{}'", quote(key), quote(value))
            }
            DriverStatement::Sql { sql }
            | DriverStatement::Insert { sql, .. }
            | DriverStatement::Explain { sql } => sql.clone(),
            DriverStatement::StatementSet { inserts } => {
                let mut s = String::from("EXECUTE STATEMENT SET BEGIN\n");
                for i in inserts {
                    s.push_str(&i.sql);
                    s.push_str(";\n");
                }
                s.push_str("END");
                s
            }
        }
    }

    /// The sinks this step's job writes (none for steps that run no job).
    #[cfg(test)]
    pub fn sinks(&self) -> Vec<&str> {
        match self {
            DriverStatement::Insert { sink, .. } => vec![sink.as_str()],
            DriverStatement::StatementSet { inserts } => {
                inserts.iter().map(|i| i.sink.as_str()).collect()
            }
            _ => Vec::new(),
        }
    }
}

fn quote(s: &str) -> String {
    s.replace('\'', "''")
}

/// What happens to sink tables.
#[derive(Clone, Debug)]
pub enum SinkRewrite {
    /// Each sink becomes a `lab-capture` sink; `rows`: every row is
    /// printed, otherwise counts by kind only.
    Capture { run_id: String, rows: bool },
    /// Sinks stay as the script declares them.
    Keep,
}

/// A sink of the rewritten script.
#[derive(Clone, Debug)]
pub struct SinkSpec {
    pub name: String,
    /// The capture sink's identifier (`run/sink`).
    pub identifier: String,
    pub columns: Vec<String>,
    pub types: Vec<DataType>,
    /// Column positions of the primary key: an upsert sink.
    pub key: Option<Vec<usize>>,
}

/// The statements for Flink and what they read and write.
#[derive(Clone, Debug)]
pub struct Rewritten {
    pub statements: Vec<DriverStatement>,
    pub sinks: Vec<SinkSpec>,
    /// Materialised source tables, by table name.
    pub data: Vec<(String, Materialized)>,
    /// Configuration keys left out (`lab.*`).
    pub dropped_keys: Vec<String>,
}

impl Rewritten {
    /// The statements as one Flink SQL script.
    pub fn script(&self) -> String {
        let mut out = String::new();
        for s in &self.statements {
            if let DriverStatement::Explain { .. } = s {
                continue;
            }
            out.push_str(&s.text());
            out.push_str(";\n\n");
        }
        out
    }
}

pub struct RewriteOptions<'a> {
    pub params: &'a [(String, String)],
    pub overrides: &'a [(String, String)],
    /// Relative paths of the script resolve here.
    pub base_dir: &'a Path,
    /// Where materialised tables go.
    pub data_dir: &'a Path,
    pub sinks: SinkRewrite,
    /// The path Flink reads a materialised table from.
    pub data_path: &'a dyn Fn(&Materialized) -> String,
    /// Runs only the INSERTs into these sinks (a campaign variant's
    /// `sinks`); `None`: all.
    pub only_sinks: Option<&'a [String]>,
}

/// The script with its `${name}` templates filled (see `crate::template`).
pub fn fill_params(sql: &str, params: &[(String, String)]) -> Result<String, FlinkError> {
    crate::template::fill_script("script", sql, params).map_err(FlinkError::input)
}

/// A statement of the script: its text and tokens (positions in `text`).
struct RawStatement {
    text: String,
    /// Byte range of `text` in the script.
    start: usize,
    end: usize,
    /// Significant tokens with byte ranges in `text`.
    tokens: Vec<(Token, usize, usize)>,
}

impl RawStatement {
    fn words_at(&self, at: usize, words: &[&str]) -> bool {
        words.iter().enumerate().all(|(i, w)| {
            matches!(self.tokens.get(at + i), Some((Token::Word(x), _, _))
                if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
        })
    }

    /// Where `STATEMENT SET BEGIN` starts, for `EXECUTE STATEMENT SET BEGIN
    /// INSERT ...` and `EXPLAIN [details] STATEMENT SET BEGIN INSERT ...`.
    fn set_begin(&self) -> Option<usize> {
        (0..self.tokens.len()).find(|&i| self.words_at(i, &["STATEMENT", "SET", "BEGIN"]))
    }
}

/// A statement, or a statement set's statements up to its `END`.
enum Piece {
    One(RawStatement),
    /// `EXECUTE STATEMENT SET BEGIN ... END` or `BEGIN STATEMENT SET; ... END`:
    /// the INSERTs' texts.
    Set(Vec<String>),
    /// `EXPLAIN ... STATEMENT SET BEGIN ... END`: the whole statement's text.
    ExplainSet(String),
}

/// Gathers the statements of each statement set (the lab's front end
/// checked the script's shape already).
fn pieces(sql: &str, raws: Vec<RawStatement>) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut raws = raws.into_iter();
    while let Some(raw) = raws.next() {
        let explain = is_keyword(&raw.tokens[0].0, Keyword::EXPLAIN);
        let client_form = raw.tokens.len() == 3 && raw.words_at(0, &["BEGIN", "STATEMENT", "SET"]);
        let begin = raw.set_begin();
        let opens = client_form
            || begin.is_some_and(|b| explain || raw.words_at(0, &["EXECUTE"]) && b == 1);
        if !opens {
            out.push(Piece::One(raw));
            continue;
        }
        let mut inserts = Vec::new();
        if !client_form {
            // The first INSERT follows BEGIN in the same piece.
            let first = begin.unwrap_or(0) + 3;
            if let Some((_, from, _)) = raw.tokens.get(first) {
                inserts.push(raw.text[*from..].to_string());
            }
        }
        let mut end = raw.end;
        for next in raws.by_ref() {
            if next.tokens.len() == 1 && next.words_at(0, &["END"]) {
                end = next.end;
                break;
            }
            inserts.push(next.text);
        }
        out.push(if explain {
            Piece::ExplainSet(sql[raw.start..end].to_string())
        } else {
            Piece::Set(inserts)
        });
    }
    out
}

/// Maps (line, column) to byte offsets.
struct LineIndex<'a> {
    sql: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(sql: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { sql, starts }
    }

    fn offset(&self, loc: Location) -> usize {
        let line = (loc.line.max(1) - 1) as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.sql.len();
        };
        let end = self.starts.get(line + 1).copied().unwrap_or(self.sql.len());
        let text = &self.sql[start..end];
        let col = (loc.column.max(1) - 1) as usize;
        start
            + text
                .char_indices()
                .nth(col)
                .map(|(i, _)| i)
                .unwrap_or(text.len())
    }
}

/// Splits `sql` at `;` tokens; statements with no significant token go.
fn split(sql: &str) -> Result<Vec<RawStatement>, FlinkError> {
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| FlinkError::input(format!("{e}")))?;
    let index = LineIndex::new(sql);
    let mut out = Vec::new();
    let mut current: Vec<&TokenWithSpan> = Vec::new();
    let mut flush = |current: &mut Vec<&TokenWithSpan>| {
        let significant: Vec<&TokenWithSpan> = current
            .iter()
            .copied()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .collect();
        current.clear();
        let (Some(first), Some(last)) = (significant.first(), significant.last()) else {
            return;
        };
        let start = index.offset(first.span.start);
        let end = index.offset(last.span.end).max(start);
        let text = sql[start..end].to_string();
        let tokens = significant
            .iter()
            .map(|t| {
                (
                    t.token.clone(),
                    index.offset(t.span.start) - start,
                    index.offset(t.span.end) - start,
                )
            })
            .collect();
        out.push(RawStatement {
            text,
            start,
            end,
            tokens,
        });
    };
    for t in &tokens {
        match t.token {
            Token::SemiColon | Token::EOF => flush(&mut current),
            // Hints are comments to the tokenizer: they stay in the text.
            _ => current.push(t),
        }
    }
    flush(&mut current);
    Ok(out)
}

fn is_keyword(t: &Token, kw: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == kw && w.quote_style.is_none())
}

fn word_value(t: &Token) -> Option<&str> {
    match t {
        Token::Word(w) => Some(&w.value),
        _ => None,
    }
}

/// The table name of `CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name`.
fn created_table(raw: &RawStatement) -> Option<String> {
    let toks: Vec<&Token> = raw.tokens.iter().map(|(t, _, _)| t).collect();
    if !toks.first().is_some_and(|t| is_keyword(t, Keyword::CREATE)) {
        return None;
    }
    let at = toks.iter().position(|t| is_keyword(t, Keyword::TABLE))?;
    let mut i = at + 1;
    if toks.get(i).is_some_and(|t| is_keyword(t, Keyword::IF)) {
        i += 3;
    }
    // A dotted name ends with the table's own name.
    let mut name = word_value(toks.get(i)?)?.to_string();
    while toks.get(i + 1) == Some(&&Token::Period) {
        i += 2;
        name = word_value(toks.get(i)?)?.to_string();
    }
    Some(name)
}

/// The byte range of `WITH ( ... )` at parenthesis depth 0.
fn with_clause(raw: &RawStatement) -> Option<(usize, usize)> {
    let mut depth = 0i32;
    let mut with_at = None;
    for (t, start, end) in &raw.tokens {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    if let Some(w) = with_at {
                        return Some((w, *end));
                    }
                }
            }
            t if depth == 0 && is_keyword(t, Keyword::WITH) => with_at = Some(*start),
            _ => {}
        }
    }
    None
}

fn with_text(options: &BTreeMap<String, String>) -> String {
    let mut s = String::from("WITH (\n");
    let n = options.len();
    for (i, (k, v)) in options.iter().enumerate() {
        s.push_str(&format!("  '{}' = '{}'", quote(k), quote(v)));
        s.push_str(if i + 1 < n { ",\n" } else { "\n" });
    }
    s.push(')');
    s
}

/// `SET key = value` with or without quotes: the key and value.
fn set_pair(raw: &RawStatement) -> Result<(String, String), FlinkError> {
    let body = raw.text[3..].trim();
    let Some((k, v)) = body.split_once('=') else {
        return Err(FlinkError::input(format!(
            "'{}': expected SET 'key' = 'value'",
            raw.text
        )));
    };
    let unquote = |s: &str| {
        let s = s.trim();
        match s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
            Some(inner) => inner.replace("''", "'"),
            None => s.to_string(),
        }
    };
    Ok((unquote(k), unquote(v)))
}

/// Rewrites `sql` for Flink.
pub fn rewrite(sql: &str, o: &RewriteOptions) -> Result<Rewritten, FlinkError> {
    let sql = fill_params(sql, o.params)?;
    let script =
        optimizer::sql::parse_script(&sql).map_err(|e| FlinkError::input(e.to_string()))?;
    let keep = |sink: &str| {
        o.only_sinks
            .is_none_or(|only| only.iter().any(|s| s.eq_ignore_ascii_case(sink)))
    };
    // Tables the INSERTs (and EXPLAINs) read and write.
    let mut read = BTreeSet::new();
    let mut sinks_set = BTreeSet::new();
    for i in script.inserts().filter(|i| keep(&i.sink)) {
        collect_scans(&i.query, &mut read);
        sinks_set.insert(i.sink.to_lowercase());
    }
    for s in &script.statements {
        if let optimizer::logical::Statement::Explain {
            target: optimizer::logical::ExplainTarget::Query(q),
            ..
        } = s
        {
            collect_scans(q, &mut read);
        }
    }
    // The sinks of each job, in order: an INSERT's, or a statement set's.
    let runs: Vec<Vec<&str>> = script
        .statements
        .iter()
        .filter_map(|s| match s {
            optimizer::logical::Statement::Insert(i) => Some(vec![i.sink.as_str()]),
            optimizer::logical::Statement::StatementSet(set) => {
                Some(set.iter().map(|i| i.sink.as_str()).collect())
            }
            _ => None,
        })
        .collect();

    let mut statements = Vec::new();
    let mut dropped_keys = Vec::new();
    let overridden: BTreeSet<&str> = o.overrides.iter().map(|(k, _)| k.as_str()).collect();
    // The lab's defaults where they differ from a cluster's (a client picks
    // its own parallelism otherwise; with checkpoints on, Flink restarts a
    // failed job without end, where the lab's `restart-strategy.type`
    // defaults to `none`: a job that fails, say out of memory, ends the
    // run with Flink's error instead of restarting forever); the script
    // and --set come after.
    for (key, value) in [
        ("parallelism.default", "1"),
        ("restart-strategy.type", "none"),
    ] {
        statements.push(DriverStatement::Set {
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    for (k, v) in o.overrides {
        if k.starts_with("lab.") {
            dropped_keys.push(k.clone());
        } else {
            statements.push(DriverStatement::Set {
                key: k.clone(),
                value: v.clone(),
            });
        }
    }
    let mut sinks = Vec::new();
    let mut data = Vec::new();
    let mut jobs = runs.iter();
    let mut next_job = |what: &str| {
        jobs.next().ok_or_else(|| {
            FlinkError::input(format!(
                "cannot match '{}' with the script's INSERTs",
                first_line(what)
            ))
        })
    };
    for piece in pieces(&sql, split(&sql)?) {
        let raw = match piece {
            Piece::One(raw) => raw,
            Piece::Set(texts) => {
                let job = next_job(texts.first().map_or("", String::as_str))?;
                if job.len() != texts.len() {
                    return Err(FlinkError::input(format!(
                        "cannot match the statement set of {} with the script's",
                        job.join(", ")
                    )));
                }
                let inserts: Vec<SetInsert> = texts
                    .into_iter()
                    .zip(job)
                    .filter(|(_, sink)| keep(sink))
                    .map(|(sql, sink)| SetInsert {
                        sql,
                        sink: sink.to_string(),
                    })
                    .collect();
                match inserts.len() {
                    0 => {}
                    // One INSERT left runs as one, as the lab runs it.
                    1 => {
                        let i = inserts.into_iter().next().expect("one");
                        statements.push(DriverStatement::Insert {
                            sql: i.sql,
                            sink: i.sink,
                        });
                    }
                    _ => statements.push(DriverStatement::StatementSet { inserts }),
                }
                continue;
            }
            Piece::ExplainSet(sql) => {
                statements.push(DriverStatement::Explain { sql });
                continue;
            }
        };
        let first = &raw.tokens[0].0;
        if is_keyword(first, Keyword::SET) {
            let (key, value) = set_pair(&raw)?;
            if key.starts_with("lab.") {
                dropped_keys.push(key);
            } else if !overridden.contains(key.as_str()) {
                statements.push(DriverStatement::Set { key, value });
            }
            continue;
        }
        let executes_insert = raw.words_at(0, &["EXECUTE", "INSERT"]);
        if is_keyword(first, Keyword::INSERT) || executes_insert {
            let job = next_job(&raw.text)?;
            let sink = job.first().copied().unwrap_or_default();
            if keep(sink) {
                let sql = if executes_insert {
                    raw.text[raw.tokens[1].1..].to_string()
                } else {
                    raw.text.clone()
                };
                statements.push(DriverStatement::Insert {
                    sql,
                    sink: sink.to_string(),
                });
            }
            continue;
        }
        if is_keyword(first, Keyword::EXPLAIN) {
            // Its INSERT is planned, not run: it takes no place among the INSERTs.
            statements.push(DriverStatement::Explain {
                sql: raw.text.clone(),
            });
            continue;
        }
        if matches!(word_value(first), Some(w) if w.eq_ignore_ascii_case("COMPILE") || w.eq_ignore_ascii_case("EXECUTE"))
        {
            return Err(FlinkError::input(format!(
                "'{}': COMPILE PLAN / EXECUTE PLAN run on the lab's engine only (its plan files \
                 are not Flink's)",
                first_line(&raw.text)
            )));
        }
        let Some(name) = created_table(&raw) else {
            statements.push(DriverStatement::Sql {
                sql: raw.text.clone(),
            });
            continue;
        };
        let table = script.catalog.get(&name).ok_or_else(|| {
            FlinkError::input(format!("table '{name}' is not in the script's catalog"))
        })?;
        let is_sink = sinks_set.contains(&name.to_lowercase());
        let new_options = if is_sink {
            match &o.sinks {
                SinkRewrite::Capture { run_id, rows } => {
                    let identifier = format!("{run_id}/{}", table.name);
                    sinks.push(sink_spec(table, &identifier));
                    let mut opts = BTreeMap::new();
                    opts.insert("connector".to_string(), "lab-capture".to_string());
                    opts.insert("identifier".to_string(), identifier);
                    opts.insert(
                        "mode".to_string(),
                        if *rows { "rows" } else { "counts" }.to_string(),
                    );
                    Some(opts)
                }
                SinkRewrite::Keep => {
                    sinks.push(sink_spec(table, &table.name));
                    None
                }
            }
        } else if data::is_lab_source(&table.options) {
            if !read.contains(&table.name.to_lowercase()) {
                continue;
            }
            let m = data::materialize(table, o.base_dir, o.data_dir)?;
            let opts = m.flink_options(&(o.data_path)(&m));
            data.push((table.name.clone(), m));
            Some(opts)
        } else {
            None
        };
        let sql = match new_options {
            Some(opts) => {
                let (start, end) = with_clause(&raw).ok_or_else(|| {
                    FlinkError::input(format!("table '{name}': no WITH (...) clause"))
                })?;
                format!(
                    "{}{}{}",
                    &raw.text[..start],
                    with_text(&opts),
                    &raw.text[end..]
                )
            }
            None => raw.text.clone(),
        };
        statements.push(DriverStatement::Sql { sql });
    }
    Ok(Rewritten {
        statements,
        sinks,
        data,
        dropped_keys,
    })
}

/// The script with only the INSERTs into `only` (a campaign variant's
/// `sinks`): other INSERTs are left out, a statement set keeps its INSERTs
/// into `only` (one left runs as a plain INSERT); every other statement
/// stays. What the lab runs for such a variant; Flink's rewrite does the
/// same ([`RewriteOptions::only_sinks`]).
pub fn keep_sinks(sql: &str, only: &[String]) -> Result<String, FlinkError> {
    let script = optimizer::sql::parse_script(sql).map_err(|e| FlinkError::input(e.to_string()))?;
    let keep = |sink: &str| only.iter().any(|s| s.eq_ignore_ascii_case(sink));
    let mut jobs = script.statements.iter().filter_map(|s| match s {
        optimizer::logical::Statement::Insert(i) => Some(vec![i.sink.as_str()]),
        optimizer::logical::Statement::StatementSet(set) => {
            Some(set.iter().map(|i| i.sink.as_str()).collect())
        }
        _ => None,
    });
    let mut out = String::new();
    for piece in pieces(sql, split(sql)?) {
        let text = match piece {
            Piece::One(raw) => {
                let insert = is_keyword(&raw.tokens[0].0, Keyword::INSERT)
                    || raw.words_at(0, &["EXECUTE", "INSERT"]);
                if insert {
                    let job = jobs.next().unwrap_or_default();
                    if !job.first().is_some_and(|s| keep(s)) {
                        continue;
                    }
                }
                raw.text
            }
            Piece::Set(texts) => {
                let job = jobs.next().unwrap_or_default();
                let kept: Vec<&String> = texts
                    .iter()
                    .zip(&job)
                    .filter(|(_, s)| keep(s))
                    .map(|(t, _)| t)
                    .collect();
                match kept.len() {
                    0 => continue,
                    1 => kept[0].clone(),
                    _ => {
                        let mut t = String::from("EXECUTE STATEMENT SET BEGIN\n");
                        for k in kept {
                            t.push_str(k);
                            t.push_str(";\n");
                        }
                        t.push_str("END");
                        t
                    }
                }
            }
            Piece::ExplainSet(text) => text,
        };
        out.push_str(&text);
        out.push_str(";\n\n");
    }
    Ok(out)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn sink_spec(table: &TableDef, identifier: &str) -> SinkSpec {
    SinkSpec {
        name: table.name.clone(),
        identifier: identifier.to_string(),
        columns: table.schema.names(),
        types: table.schema.types(),
        key: table.primary_key.clone(),
    }
}

fn collect_scans(plan: &optimizer::logical::LogicalPlan, out: &mut BTreeSet<String>) {
    if let optimizer::logical::LogicalPlan::Scan { table, .. } = plan {
        out.insert(table.to_lowercase());
    }
    for c in plan.children() {
        collect_scans(c, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "-- a comment with ${not_a_param}\n\
        SET table.exec.mini-batch.enabled = true;\n\
        SET 'lab.clock' = 'deterministic';\n\
        SET 'parallelism.default' = '2';\n\
        CREATE TABLE src (k BIGINT, v BIGINT) WITH (\n\
          'connector' = 'datagen', 'number-of-rows' = '${rows}', 'seed' = '1',\n\
          'fields.k.min' = '1', 'fields.k.max' = '5');\n\
        CREATE TABLE unused (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n\
        CREATE TABLE out1 (k BIGINT, cnt BIGINT, PRIMARY KEY (k) NOT ENFORCED)\n\
          WITH ('connector' = 'blackhole');\n\
        INSERT INTO out1 SELECT /*+ STATE_TTL('src' = '1d') */ k, COUNT(*) FROM src GROUP BY k;\n";

    fn run(sinks: SinkRewrite, overrides: &[(String, String)]) -> (Rewritten, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let r = rewrite(
            SCRIPT,
            &RewriteOptions {
                params: &[("rows".to_string(), "10".to_string())],
                overrides,
                base_dir: dir.path(),
                data_dir: &data_dir,
                sinks,
                data_path: &|m: &Materialized| m.path.display().to_string(),
                only_sinks: None,
            },
        )
        .unwrap();
        (r, dir)
    }

    #[test]
    fn sources_are_materialised_and_sinks_captured() {
        let (r, _dir) = run(
            SinkRewrite::Capture {
                run_id: "r1".into(),
                rows: true,
            },
            &[("parallelism.default".into(), "4".into())],
        );
        let texts: Vec<String> = r.statements.iter().map(DriverStatement::text).collect();
        assert_eq!(texts[0], "SET 'parallelism.default' = '1'");
        assert_eq!(texts[1], "SET 'restart-strategy.type' = 'none'");
        let texts = &texts[2..];
        assert_eq!(texts[0], "SET 'parallelism.default' = '4'");
        assert_eq!(texts[1], "SET 'table.exec.mini-batch.enabled' = 'true'");
        // The script's parallelism loses to the override; lab.clock goes.
        assert_eq!(r.dropped_keys, vec!["lab.clock".to_string()]);
        assert!(
            texts[2].starts_with(
                "CREATE TABLE src (k BIGINT, v BIGINT) WITH (\n  'connector' = 'filesystem',"
            ),
            "{}",
            texts[2]
        );
        assert!(texts[2].contains("'format' = 'csv'"));
        assert_eq!(r.data.len(), 1);
        let rows = std::fs::read_to_string(&r.data[0].1.path).unwrap();
        assert_eq!(rows.lines().count(), 10);
        // The unused table is left out; the sink is captured with its key.
        assert!(texts[3].starts_with("CREATE TABLE out1"));
        assert!(texts[3].contains("'connector' = 'lab-capture'"));
        assert!(texts[3].contains("'identifier' = 'r1/out1'"));
        assert!(texts[3].contains("PRIMARY KEY (k) NOT ENFORCED"));
        assert_eq!(
            r.statements[6],
            DriverStatement::Insert {
                sql: "INSERT INTO out1 SELECT /*+ STATE_TTL('src' = '1d') */ k, COUNT(*) FROM src GROUP BY k".into(),
                sink: "out1".into()
            }
        );
        assert_eq!(r.statements.len(), 7);
        assert_eq!(r.sinks[0].key, Some(vec![0]));
    }

    #[test]
    fn kept_sinks_stay_as_written() {
        let (r, _dir) = run(SinkRewrite::Keep, &[]);
        assert!(r.script().contains("WITH ('connector' = 'blackhole')"));
        assert!(r.script().contains("SET 'parallelism.default' = '2';"));
    }

    #[test]
    fn parameters_are_filled_outside_comments() {
        let p = [("rows".to_string(), "7".to_string())];
        assert_eq!(
            fill_params("a '${rows}' -- ${x}\n", &p).unwrap(),
            "a '7' -- ${x}\n"
        );
        let e = fill_params("a ${skew}\n", &p).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("--param skew="), "{}", e.message);
        assert!(fill_params("a ${rows\n", &p).is_err());
    }

    const SET_SCRIPT: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (\n\
          'connector' = 'datagen', 'number-of-rows' = '10', 'seed' = '1');\n\
        CREATE TABLE a (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');\n\
        CREATE TABLE b (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');\n\
        CREATE TABLE c (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');\n\
        EXPLAIN STATEMENT SET BEGIN\n\
        INSERT INTO a SELECT k, COUNT(*) FROM src GROUP BY k;\n\
        INSERT INTO b SELECT k, SUM(v) FROM src GROUP BY k;\n\
        END;\n\
        EXECUTE STATEMENT SET BEGIN\n\
        INSERT INTO a SELECT k, COUNT(*) FROM src GROUP BY k;\n\
        INSERT INTO b SELECT k, SUM(v) FROM src GROUP BY k;\n\
        END;\n\
        BEGIN STATEMENT SET;\n\
        INSERT INTO b SELECT k, MAX(v) FROM src GROUP BY k;\n\
        INSERT INTO c SELECT k, MIN(v) FROM src GROUP BY k;\n\
        END;\n\
        EXECUTE INSERT INTO c SELECT k, COUNT(*) FROM src GROUP BY k;\n";

    fn rewrite_set(only: Option<&[String]>) -> Rewritten {
        let dir = tempfile::tempdir().unwrap();
        rewrite(
            SET_SCRIPT,
            &RewriteOptions {
                params: &[],
                overrides: &[],
                base_dir: dir.path(),
                data_dir: &dir.path().join("data"),
                sinks: SinkRewrite::Capture {
                    run_id: "r".into(),
                    rows: false,
                },
                data_path: &|m: &Materialized| m.path.display().to_string(),
                only_sinks: only,
            },
        )
        .unwrap()
    }

    #[test]
    fn statement_sets_are_one_step_and_explains_pass_whole() {
        let r = rewrite_set(None);
        let steps: Vec<&DriverStatement> = r
            .statements
            .iter()
            .filter(|s| !matches!(s, DriverStatement::Set { .. } | DriverStatement::Sql { .. }))
            .collect();
        assert_eq!(steps.len(), 4, "{steps:?}");
        let DriverStatement::Explain { sql } = steps[0] else {
            panic!("{steps:?}")
        };
        assert!(
            sql.starts_with("EXPLAIN STATEMENT SET BEGIN\nINSERT INTO a"),
            "{sql}"
        );
        assert!(sql.ends_with("GROUP BY k;\nEND"), "{sql}");
        assert_eq!(
            steps[1],
            &DriverStatement::StatementSet {
                inserts: vec![
                    SetInsert {
                        sql: "INSERT INTO a SELECT k, COUNT(*) FROM src GROUP BY k".into(),
                        sink: "a".into()
                    },
                    SetInsert {
                        sql: "INSERT INTO b SELECT k, SUM(v) FROM src GROUP BY k".into(),
                        sink: "b".into()
                    },
                ]
            }
        );
        assert_eq!(steps[2].sinks(), vec!["b", "c"]);
        assert_eq!(
            steps[3],
            &DriverStatement::Insert {
                sql: "INSERT INTO c SELECT k, COUNT(*) FROM src GROUP BY k".into(),
                sink: "c".into()
            }
        );
        assert!(steps[1]
            .text()
            .starts_with("EXECUTE STATEMENT SET BEGIN\nINSERT INTO a"));
        assert!(steps[1].text().ends_with(";\nEND"));
        // Every sink of a set is captured.
        let names: Vec<&str> = r.sinks.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["a", "b", "c"]);
    }

    #[test]
    fn only_some_sinks() {
        let only = vec!["c".to_string()];
        let r = rewrite_set(Some(&only));
        let sinks: Vec<Vec<&str>> = r
            .statements
            .iter()
            .map(DriverStatement::sinks)
            .filter(|s| !s.is_empty())
            .collect();
        // The client-form set keeps its INSERT into c, as a plain INSERT.
        assert_eq!(sinks, vec![vec!["c"], vec!["c"]]);
        let text = keep_sinks(SET_SCRIPT, &only).unwrap();
        let script = optimizer::sql::parse_script(&text).unwrap();
        let runs: Vec<&str> = script
            .statements
            .iter()
            .filter_map(|s| match s {
                optimizer::logical::Statement::Insert(i) => Some(i.sink.as_str()),
                optimizer::logical::Statement::StatementSet(_) => Some("set"),
                _ => None,
            })
            .collect();
        assert_eq!(runs, vec!["c", "c"]);
        assert!(text.contains("EXPLAIN STATEMENT SET BEGIN"), "{text}");
        let both = vec!["a".to_string(), "b".to_string()];
        let text = keep_sinks(SET_SCRIPT, &both).unwrap();
        assert_eq!(
            text.matches("EXECUTE STATEMENT SET BEGIN").count(),
            1,
            "{text}"
        );
        assert!(!text.contains("INSERT INTO c"), "{text}");
    }

    #[test]
    fn compile_plan_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = rewrite(
            "EXECUTE PLAN 'p.json';",
            &RewriteOptions {
                params: &[],
                overrides: &[],
                base_dir: dir.path(),
                data_dir: dir.path(),
                sinks: SinkRewrite::Keep,
                data_path: &|m: &Materialized| m.path.display().to_string(),
                only_sinks: None,
            },
        )
        .unwrap_err();
        assert_eq!(e.code, 2);
    }
}
