//! What one fuzz input is: a category and the files it consists of, and
//! how a case is kept on disk (a directory holding those files) in the
//! corpus and among findings.

use std::path::{Path, PathBuf};

/// The six kinds of input, each run against its own entry point
/// ([`crate::target`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// A SQL script: `lab explain`, then `lab run`.
    Sql,
    /// A CSV file read by a script: `lab run` with its result written.
    Csv,
    /// Configuration values: `SET` statements, `--set` and `--try` flags.
    Config,
    /// A campaign spec and its script: the checks `lab campaign` makes
    /// before the first run.
    Spec,
    /// A compiled plan: `lab execute-plan` (load, EXPLAIN, run).
    Plan,
    /// A report's `results.csv`, `run.toml` and `spec.toml`: `lab plot`.
    Results,
}

pub const CATEGORIES: [Category; 6] = [
    Category::Sql,
    Category::Csv,
    Category::Config,
    Category::Spec,
    Category::Plan,
    Category::Results,
];

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Sql => "sql",
            Category::Csv => "csv",
            Category::Config => "config",
            Category::Spec => "spec",
            Category::Plan => "plan",
            Category::Results => "results",
        }
    }

    pub fn from_name(name: &str) -> Option<Category> {
        CATEGORIES.iter().copied().find(|c| c.name() == name)
    }

    pub fn id(self) -> u64 {
        CATEGORIES.iter().position(|c| *c == self).expect("listed") as u64
    }
}

/// One input: its files, by name (`script.sql`, `input.csv`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub category: Category,
    pub files: Vec<(String, Vec<u8>)>,
}

impl Input {
    pub fn new(category: Category) -> Input {
        Input {
            category,
            files: Vec::new(),
        }
    }

    pub fn with(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Input {
        self.files.push((name.to_string(), bytes.into()));
        self
    }

    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    }

    pub fn size(&self) -> usize {
        self.files.iter().map(|(_, b)| b.len()).sum()
    }

    /// Writes the input's files into `dir` (created).
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (name, bytes) in &self.files {
            std::fs::write(dir.join(name), bytes)?;
        }
        Ok(())
    }

    /// A case saved by [`Input::save`]: `dir` is `<category>/<name>/` or
    /// any directory whose parent is named after the category.
    pub fn load(dir: &Path) -> Result<Input, String> {
        let category = dir
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .and_then(Category::from_name)
            .ok_or_else(|| {
                format!(
                    "{}: a case lives in a folder named after its category ({})",
                    dir.display(),
                    CATEGORIES.map(|c| c.name()).join(", ")
                )
            })?;
        let mut files = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == NOTE || !e.path().is_file() {
                continue;
            }
            let bytes = std::fs::read(e.path()).map_err(|e| format!("{name}: {e}"))?;
            files.push((name, bytes));
        }
        files.sort();
        Ok(Input { category, files })
    }

    /// Saves the input as `root/<category>/<name>/`, with `note` (what it
    /// found, how it was made) beside its files.
    pub fn save(&self, root: &Path, name: &str, note: &str) -> std::io::Result<PathBuf> {
        let dir = root.join(self.category.name()).join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        self.write_to(&dir)?;
        std::fs::write(dir.join(NOTE), note)?;
        Ok(dir)
    }
}

/// The file beside a saved case that says what it found; not part of the
/// input.
pub const NOTE: &str = "NOTE.txt";

/// Every case under `root` (`root/<category>/<case>/`, or `root` is a
/// category's folder itself), sorted.
pub fn cases_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let is_category = root
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(Category::from_name)
        .is_some();
    let folders: Vec<PathBuf> = if is_category {
        vec![root.to_path_buf()]
    } else {
        CATEGORIES.iter().map(|c| root.join(c.name())).collect()
    };
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        out.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    out.sort();
    out
}
