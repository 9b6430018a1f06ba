//! Where and on what a campaign ran: git revision, cores, CPU model, and
//! the process's peak resident set size.

use std::path::Path;
use std::process::Command;

/// The machine a campaign runs on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Cores available to the process.
    pub cores: usize,
    /// The CPU model from `/proc/cpuinfo` (`unknown` elsewhere).
    pub model: String,
}

impl Machine {
    pub fn detect() -> Machine {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.trim() == "model name")
                    .map(|(_, v)| v.trim().to_string())
            })
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "unknown".to_string());
        Machine { cores, model }
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `git rev-parse --short HEAD` of the lab's source tree (where this binary
/// was built from; else the current directory), with `-dirty` when tracked
/// files have uncommitted changes; `unknown` without git.
pub fn git_revision() -> String {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in [built_from, Path::new(".")] {
        if let Some(rev) = git(dir, &["rev-parse", "--short", "HEAD"]).filter(|r| !r.is_empty()) {
            let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            return if dirty { format!("{rev}-dirty") } else { rev };
        }
    }
    "unknown".to_string()
}

/// Resets the kernel's peak-RSS mark of this process to its current RSS
/// (`echo 5 > /proc/self/clear_refs`, Linux 4.0+); false where not allowed.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `VmHWM` of `/proc/self/status`: the process's peak resident set size in KiB.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The command line as typed (program shown as `lab`), shell-quoted.
pub fn command_line() -> String {
    let mut parts = vec!["lab".to_string()];
    for a in std::env::args().skip(1) {
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        parts.push(if plain {
            a
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        });
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_is_read() {
        if Path::new("/proc/self/status").exists() {
            assert!(peak_rss_kb().unwrap() > 0);
        }
        assert!(Machine::detect().cores >= 1);
    }
}
