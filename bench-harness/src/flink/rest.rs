//! The JobManager's REST API (Flink's "REST API" page): cluster overview,
//! TaskManagers and their standard output, jobs, vertices and metrics.
//!
//! Every error names the address it was talking to.

use super::FlinkError;
use serde_json::Value as Json;
use std::time::Duration;

/// Checks that `address` is `HOST:PORT`.
pub fn check_address(address: &str) -> Result<(), FlinkError> {
    let ok = address
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
    if ok {
        Ok(())
    } else {
        Err(FlinkError::input(format!(
            "--flink-rest '{address}': expected HOST:PORT (e.g. localhost:8081)"
        )))
    }
}

/// A client of one cluster's REST API.
pub struct Rest {
    pub address: String,
    agent: ureq::Agent,
}

impl Rest {
    pub fn new(address: &str) -> Rest {
        Rest {
            address: address.to_string(),
            agent: ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_secs(3))
                .timeout(Duration::from_secs(60))
                .build(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// The body of `GET path`.
    pub fn get_text(&self, path: &str) -> Result<String, FlinkError> {
        let resp = self
            .agent
            .get(&self.url(path))
            .call()
            .map_err(|e| match e {
                ureq::Error::Status(code, r) => FlinkError::execution(format!(
                    "Flink REST API at {}: GET {path}: HTTP {code}: {}",
                    self.address,
                    r.into_string().unwrap_or_default().trim()
                )),
                ureq::Error::Transport(t) => FlinkError::execution(format!(
                    "no Flink REST API answers at {} (GET {path}: {t})",
                    self.address
                )),
            })?;
        resp.into_string().map_err(|e| {
            FlinkError::execution(format!(
                "Flink REST API at {}: GET {path}: {e}",
                self.address
            ))
        })
    }

    /// `GET path` as JSON.
    pub fn get(&self, path: &str) -> Result<Json, FlinkError> {
        let text = self.get_text(path)?;
        serde_json::from_str(&text).map_err(|e| {
            FlinkError::execution(format!(
                "Flink REST API at {}: GET {path}: not JSON ({e})",
                self.address
            ))
        })
    }

    /// `/overview`: Flink's version, TaskManagers, slots and job counts.
    pub fn overview(&self) -> Result<Json, FlinkError> {
        self.get("/overview")
    }

    /// The ids of the TaskManagers (`/taskmanagers`).
    pub fn taskmanager_ids(&self) -> Result<Vec<String>, FlinkError> {
        let tms = self.get("/taskmanagers")?;
        Ok(tms["taskmanagers"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["id"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The lines of a TaskManager's standard output
    /// (`/taskmanagers/<id>/stdout`) that `keep` accepts, read as a stream
    /// (the file holds every job's output since the TaskManager started).
    pub fn taskmanager_stdout_lines(
        &self,
        id: &str,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<String>, FlinkError> {
        use std::io::BufRead;
        let path = format!("/taskmanagers/{}/stdout", encode(id));
        let resp = self.agent.get(&self.url(&path)).call().map_err(|e| {
            FlinkError::execution(format!(
                "Flink REST API at {}: GET {path}: {e}",
                self.address
            ))
        })?;
        let mut out = Vec::new();
        for line in std::io::BufReader::with_capacity(1 << 16, resp.into_reader()).lines() {
            let line = line.map_err(|e| {
                FlinkError::execution(format!(
                    "Flink REST API at {}: GET {path}: {e}",
                    self.address
                ))
            })?;
            if keep(&line) {
                out.push(line);
            }
        }
        Ok(out)
    }

    /// `/jobs/<id>`: state, times and per-vertex I/O metrics.
    pub fn job(&self, id: &str) -> Result<Json, FlinkError> {
        self.get(&format!("/jobs/{id}"))
    }
}

/// Percent-encodes what a path segment cannot hold (TaskManager ids hold `:`).
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked() {
        assert!(check_address("localhost:8081").is_ok());
        assert!(check_address("10.0.0.1:1").is_ok());
        for bad in [
            "localhost",
            ":8081",
            "localhost:0",
            "localhost:http",
            "h:70000",
        ] {
            let e = check_address(bad).unwrap_err();
            assert_eq!(e.code, 2);
            assert!(e.message.contains(bad), "{}", e.message);
        }
    }

    #[test]
    fn nothing_listening_names_the_address() {
        // A port just bound and released: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let e = Rest::new(&address).overview().unwrap_err();
        assert_eq!(e.code, crate::exit_code::EXECUTION_FAILED);
        assert!(e.message.contains(&address), "{}", e.message);
    }

    #[test]
    fn taskmanager_ids_are_encoded() {
        assert_eq!(encode("localhost:33655-8a284d"), "localhost%3A33655-8a284d");
    }
}
