//! Which process listens on a TCP port, read from Linux's `/proc`: how
//! `lab flink status` ties a TaskManager the REST API names to the process
//! `lab flink start` started for it.
//!
//! A standalone TaskManager's resource id is `host:port-suffix`, the port
//! being its RPC port (Flink's `TaskManagerRunner`), on which its JVM
//! listens. A socket listed in `/proc/net/tcp` (or `tcp6`) in state `0A`
//! (LISTEN) on that port has an inode; the process holding it has a file
//! descriptor linking to `socket:[inode]`.

use std::collections::BTreeSet;
use std::path::Path;

/// The RPC port in a TaskManager's resource id (`localhost:36541-8b1c2f`).
pub fn port_of_taskmanager_id(id: &str) -> Option<u16> {
    let (_, rest) = id.rsplit_once(':')?;
    rest.split('-').next()?.parse().ok()
}

/// The one of `candidates` that listens on TCP `port`, if any.
pub fn listening_on(port: u16, candidates: &[u32]) -> Option<u32> {
    listening_on_in(Path::new("/proc"), port, candidates)
}

fn listening_on_in(proc: &Path, port: u16, candidates: &[u32]) -> Option<u32> {
    let inodes = listening_inodes(proc, port);
    if inodes.is_empty() {
        return None;
    }
    candidates.iter().copied().find(|pid| {
        std::fs::read_dir(proc.join(pid.to_string()).join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter_map(|target| socket_inode(&target.to_string_lossy()))
            .any(|inode| inodes.contains(&inode))
    })
}

/// The inodes of the sockets listening on `port` (IPv4 and IPv6).
fn listening_inodes(proc: &Path, port: u16) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for table in ["net/tcp", "net/tcp6"] {
        let text = std::fs::read_to_string(proc.join(table)).unwrap_or_default();
        for line in text.lines().skip(1) {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || f[3] != "0A" {
                continue;
            }
            let local_port = f[1]
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) {
                if let Ok(inode) = f[9].parse() {
                    out.insert(inode);
                }
            }
        }
    }
    out
}

/// `socket:[12345]` -> 12345.
fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taskmanager_id_gives_its_rpc_port() {
        assert_eq!(
            port_of_taskmanager_id("localhost:36541-8b1c2f"),
            Some(36541)
        );
        assert_eq!(port_of_taskmanager_id("10.0.0.7:6122-abcdef"), Some(6122));
        assert_eq!(port_of_taskmanager_id("a-container-id"), None);
    }

    #[test]
    fn this_process_is_found_by_the_port_it_listens_on() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        assert_eq!(listening_on(port, &[me]), Some(me));
        drop(listener);
        assert_eq!(listening_on(port, &[me]), None);
    }
}
