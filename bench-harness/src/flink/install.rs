//! `lab flink install`: the project's own Flink.
//!
//! One virtualenv, `.flink/venv`, with the `apache-flink` pinned in
//! `flink/requirements.txt` (PyFlink, which bundles Flink's distribution),
//! and `.flink/lib/lab-capture.jar`, the lab's capture sink
//! (`flink/capture/`, compiled with `javac` against that distribution).
//! A marker file written last records what was installed, so an
//! interrupted install is redone and a finished one is reused until the
//! requirements or the capture sink's sources change.
//!
//! The tools are looked up on a `PATH` given to [`Tools`] rather than the
//! process's own, so tests can check the errors for a machine without
//! Java or Python.

use super::{repo_dir, write_atomic, FlinkError, FlinkHome};
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Oldest Java that Flink 2.x runs on.
pub const MIN_JAVA: u32 = 17;
/// Oldest Python that apache-flink 2.x installs on.
pub const MIN_PYTHON: (u32, u32) = (3, 9);

/// Where to look for `java`, `javac`, `jar` and `python3`.
#[derive(Clone, Debug)]
pub struct Tools {
    pub path: OsString,
}

impl Tools {
    pub fn from_env() -> Tools {
        Tools {
            path: std::env::var_os("PATH").unwrap_or_default(),
        }
    }

    /// The first executable `name` on the path.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        std::env::split_paths(&self.path)
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }

    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.env("PATH", &self.path);
        c
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The Java tools Flink and the capture sink's build need.
#[derive(Clone, Debug)]
pub struct Java {
    pub java: PathBuf,
    pub javac: PathBuf,
    pub jar: PathBuf,
    pub major: u32,
}

/// Finds Java 17+ with `javac` and `jar`, or says what is missing.
pub fn check_java(tools: &Tools) -> Result<Java, FlinkError> {
    let java = tools.find("java").ok_or_else(|| {
        FlinkError::execution(format!(
            "Java {MIN_JAVA}+ is needed to run Flink, and there is no `java` on PATH; \
             install a JDK {MIN_JAVA} (Debian: apt-get install openjdk-{MIN_JAVA}-jdk-headless)"
        ))
    })?;
    let out = tools
        .command(&java)
        .arg("-version")
        .output()
        .map_err(|e| FlinkError::execution(format!("cannot run {}: {e}", java.display())))?;
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let major = parse_java_major(&text).ok_or_else(|| {
        FlinkError::execution(format!(
            "cannot read the version of {} from `java -version`: {}",
            java.display(),
            text.trim()
        ))
    })?;
    if major < MIN_JAVA {
        return Err(FlinkError::execution(format!(
            "Flink 2.x needs Java {MIN_JAVA}+; {} is Java {major}",
            java.display()
        )));
    }
    let tool = |name: &str| {
        tools.find(name).ok_or_else(|| {
            FlinkError::execution(format!(
                "`{name}` (from a JDK {MIN_JAVA}+) is needed to build the lab's capture sink and \
                 is not on PATH; install a JDK (Debian: apt-get install openjdk-{MIN_JAVA}-jdk-headless)"
            ))
        })
    };
    Ok(Java {
        javac: tool("javac")?,
        jar: tool("jar")?,
        java,
        major,
    })
}

/// The major version in `java -version` output: `"17.0.15"` is 17, `"1.8.0_292"` is 8.
pub fn parse_java_major(text: &str) -> Option<u32> {
    let start = text.find('"')? + 1;
    let end = start + text[start..].find('"')?;
    let mut parts = text[start..end].split(['.', '_', '-', '+']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// Finds Python 3.9+ with the `venv` module (and `ensurepip`, which Debian
/// ships separately), or says what is missing.
pub fn check_python(tools: &Tools) -> Result<PathBuf, FlinkError> {
    let python = tools.find("python3").ok_or_else(|| {
        FlinkError::execution(
            "Python 3 is needed for PyFlink and there is no `python3` on PATH; \
             install it (Debian: apt-get install python3 python3-venv)",
        )
    })?;
    let out = tools
        .command(&python)
        .args([
            "-c",
            "import sys; v = sys.version_info; print(v[0], v[1])\n\
             import venv, ensurepip",
        ])
        .output()
        .map_err(|e| FlinkError::execution(format!("cannot run {}: {e}", python.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let version: Vec<u32> = stdout
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    if let [major, minor] = version[..] {
        if (major, minor) < MIN_PYTHON {
            return Err(FlinkError::execution(format!(
                "apache-flink needs Python {}.{}+; {} is {major}.{minor}",
                MIN_PYTHON.0,
                MIN_PYTHON.1,
                python.display()
            )));
        }
    }
    if !out.status.success() {
        return Err(FlinkError::execution(format!(
            "{} cannot create virtualenvs (its `venv`/`ensurepip` modules are missing); \
             install them (Debian: apt-get install python3-venv): {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(python)
}

/// What a finished install recorded.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Marker {
    /// The requirements file's text when installed.
    pub requirements: String,
    /// A hash of the capture sink's sources when built.
    pub capture_sources: String,
    /// PyFlink's folder: the Flink distribution (`bin/`, `lib/`, `conf/`).
    pub flink_home: PathBuf,
    pub flink_version: String,
}

fn marker_path(home: &FlinkHome) -> PathBuf {
    home.venv().join("joinlab-installed.json")
}

/// The install recorded under `home`, if it finished.
pub fn installed(home: &FlinkHome) -> Option<Marker> {
    let text = std::fs::read_to_string(marker_path(home)).ok()?;
    let m: Marker = serde_json::from_str(&text).ok()?;
    (home.python().exists() && m.flink_home.join("bin").is_dir()).then_some(m)
}

/// The install, or an error that says to run `lab flink install`.
pub fn require(home: &FlinkHome) -> Result<Marker, FlinkError> {
    match installed(home) {
        Some(m) if home.capture_jar().exists() => Ok(m),
        _ => Err(FlinkError::execution(format!(
            "Flink is not installed in {}: run `lab flink install` (or `make flink`)",
            home.dir.display()
        ))),
    }
}

pub fn requirements_path() -> PathBuf {
    repo_dir().join("flink").join("requirements.txt")
}

fn capture_sources_dir() -> PathBuf {
    repo_dir().join("flink").join("capture")
}

/// A stable hash (FNV-1a) of the capture sink's source files.
fn capture_sources_hash() -> Result<String, FlinkError> {
    let mut files = Vec::new();
    collect_files(&capture_sources_dir(), &mut files).map_err(|e| {
        FlinkError::execution(format!(
            "cannot read {}: {e}",
            capture_sources_dir().display()
        ))
    })?;
    files.sort();
    let mut h = Fnv::default();
    for f in &files {
        h.write(f.to_string_lossy().as_bytes());
        h.write(&std::fs::read(f).unwrap_or_default());
    }
    Ok(format!("{:016x}", h.0))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect_files(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// FNV-1a, 64 bits: stable across builds and platforms (cache keys, markers).
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// Installs (or reuses) the venv and the capture sink; returns what it did.
pub fn install(home: &FlinkHome, tools: &Tools) -> Result<String, FlinkError> {
    let java = check_java(tools)?;
    std::fs::create_dir_all(&home.dir)
        .map_err(|e| FlinkError::execution(format!("cannot create {}: {e}", home.dir.display())))?;
    // Concurrent installs (two test binaries) take turns.
    let lock = std::fs::File::create(home.dir.join("install.lock"))
        .map_err(|e| FlinkError::execution(format!("cannot lock {}: {e}", home.dir.display())))?;
    lock.lock()
        .map_err(|e| FlinkError::execution(format!("cannot lock {}: {e}", home.dir.display())))?;

    let requirements = std::fs::read_to_string(requirements_path()).map_err(|e| {
        FlinkError::execution(format!(
            "cannot read {}: {e}",
            requirements_path().display()
        ))
    })?;
    let sources = capture_sources_hash()?;
    let mut done = Vec::new();
    let marker = match installed(home) {
        Some(m) if m.requirements == requirements => {
            done.push(format!(
                "PyFlink {} already installed in {}",
                m.flink_version,
                home.venv().display()
            ));
            m
        }
        _ => {
            let python = check_python(tools)?;
            let m = install_venv(home, tools, &python, &requirements)?;
            done.push(format!(
                "installed PyFlink {} into {}",
                m.flink_version,
                home.venv().display()
            ));
            m
        }
    };
    if marker.capture_sources != sources || !home.capture_jar().exists() {
        build_capture_jar(home, tools, &java, &marker)?;
        let m = Marker {
            capture_sources: sources,
            ..marker
        };
        write_marker(home, &m)?;
        done.push(format!(
            "built the capture sink {}",
            home.capture_jar().display()
        ));
    } else {
        done.push(format!(
            "capture sink {} up to date",
            home.capture_jar().display()
        ));
    }
    done.push(format!("Java {} at {}", java.major, java.java.display()));
    Ok(done.join("\n"))
}

fn write_marker(home: &FlinkHome, m: &Marker) -> Result<(), FlinkError> {
    let text = serde_json::to_string_pretty(m).expect("a marker serialises");
    write_atomic(&marker_path(home), text.as_bytes())
        .map_err(|e| FlinkError::execution(format!("cannot write the install marker: {e}")))
}

/// Runs `cmd`, showing its latest output line on a spinner and keeping
/// everything in `log`; fails with the log's tail.
fn run_logged(mut cmd: Command, what: &str, log: &Path) -> Result<(), FlinkError> {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix} ({elapsed}) {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_prefix(what.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| FlinkError::execution(format!("cannot write {}: {e}", log.display())))?;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| FlinkError::execution(format!("cannot start {what}: {e}")))?;
    let stderr = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            s.push_str(&line);
            s.push('\n');
        }
        s
    });
    let mut tail: Vec<String> = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped"))
        .lines()
        .map_while(Result::ok)
    {
        let _ = writeln!(file, "{line}");
        bar.set_message(line.clone());
        tail.push(line);
        if tail.len() > 20 {
            tail.remove(0);
        }
    }
    let status = child
        .wait()
        .map_err(|e| FlinkError::execution(format!("{what}: {e}")))?;
    let err = err_thread.join().unwrap_or_default();
    let _ = write!(file, "{err}");
    bar.finish_and_clear();
    if status.success() {
        return Ok(());
    }
    let mut lines: Vec<&str> = tail.iter().map(String::as_str).collect();
    lines.extend(err.lines());
    let start = lines.len().saturating_sub(15);
    Err(FlinkError::execution(format!(
        "{what} failed ({status}); the end of its output (all of it in {}):\n{}",
        log.display(),
        lines[start..].join("\n")
    )))
}

fn install_venv(
    home: &FlinkHome,
    tools: &Tools,
    python: &Path,
    requirements: &str,
) -> Result<Marker, FlinkError> {
    let venv = home.venv();
    // A venv without a marker is an interrupted install: start over.
    if venv.exists() {
        std::fs::remove_dir_all(&venv)
            .map_err(|e| FlinkError::execution(format!("cannot remove {}: {e}", venv.display())))?;
    }
    let log = home.dir.join("install.log");
    let _ = std::fs::remove_file(&log);
    let mut c = tools.command(python);
    c.args([OsStr::new("-m"), OsStr::new("venv"), venv.as_os_str()]);
    run_logged(c, "creating the virtualenv", &log)?;
    let py = home.python();
    let mut c = tools.command(&py);
    c.args(["-m", "pip", "install", "--upgrade", "pip"]);
    run_logged(c, "upgrading pip", &log)?;
    let mut c = tools.command(&py);
    c.args([
        OsStr::new("-m"),
        OsStr::new("pip"),
        OsStr::new("install"),
        OsStr::new("-r"),
        requirements_path().as_os_str(),
    ]);
    run_logged(c, "installing apache-flink (a few minutes)", &log)?;
    let out = tools
        .command(&py)
        .args([
            "-c",
            "import os, pyflink, pyflink.version as v\n\
             print(os.path.dirname(pyflink.__file__)); print(v.__version__)",
        ])
        .output()
        .map_err(|e| FlinkError::execution(format!("cannot run {}: {e}", py.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(dir), Some(version)) = (lines.next(), lines.next()) else {
        return Err(FlinkError::execution(format!(
            "PyFlink installed but cannot be imported: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    };
    let m = Marker {
        requirements: requirements.to_string(),
        capture_sources: String::new(),
        flink_home: PathBuf::from(dir),
        flink_version: version.trim().to_string(),
    };
    if !m.flink_home.join("bin").join("jobmanager.sh").exists() {
        return Err(FlinkError::execution(format!(
            "PyFlink in {} carries no Flink distribution (bin/jobmanager.sh)",
            m.flink_home.display()
        )));
    }
    write_marker(home, &m)?;
    Ok(m)
}

fn build_capture_jar(
    home: &FlinkHome,
    tools: &Tools,
    java: &Java,
    marker: &Marker,
) -> Result<(), FlinkError> {
    let build = home.dir.join("lib").join("build");
    let _ = std::fs::remove_dir_all(&build);
    let classes = build.join("classes");
    std::fs::create_dir_all(&classes)
        .map_err(|e| FlinkError::execution(format!("cannot create {}: {e}", classes.display())))?;
    let mut sources = Vec::new();
    collect_files(&capture_sources_dir().join("src"), &mut sources)
        .map_err(|e| FlinkError::execution(format!("cannot read the capture sources: {e}")))?;
    sources.retain(|p| p.extension().is_some_and(|e| e == "java"));
    sources.sort();
    let log = home.dir.join("install.log");
    let mut c = tools.command(&java.javac);
    c.args(["--release", "17", "-nowarn", "-cp"])
        .arg(marker.flink_home.join("lib").join("*"))
        .arg("-d")
        .arg(&classes)
        .args(&sources);
    run_logged(c, "compiling the capture sink", &log)?;
    copy_dir(&capture_sources_dir().join("resources"), &classes)
        .map_err(|e| FlinkError::execution(format!("cannot copy the capture resources: {e}")))?;
    let tmp_jar = build.join("lab-capture.jar");
    let mut c = tools.command(&java.jar);
    c.arg("cf").arg(&tmp_jar).arg("-C").arg(&classes).arg(".");
    run_logged(c, "packing the capture sink", &log)?;
    std::fs::rename(&tmp_jar, home.capture_jar())
        .map_err(|e| FlinkError::execution(format!("cannot place the capture sink: {e}")))?;
    let _ = std::fs::remove_dir_all(&build);
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let p = e?.path();
        let dest = to.join(p.file_name().expect("a directory entry has a name"));
        if p.is_dir() {
            copy_dir(&p, &dest)?;
        } else {
            std::fs::copy(&p, &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes an executable script. Another test's thread may fork while
    /// the file is open for writing, and its child holds the descriptor
    /// until it execs: running the script meanwhile fails with "Text file
    /// busy". So the script is run once here until it no longer does.
    fn fake_tool(dir: &Path, name: &str, script: &str) {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        for _ in 0..200 {
            match std::process::Command::new(&p).output() {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                _ => break,
            }
        }
    }

    fn tools_in(dir: &Path) -> Tools {
        Tools {
            path: dir.as_os_str().to_owned(),
        }
    }

    #[test]
    fn java_versions_parse() {
        assert_eq!(
            parse_java_major("openjdk version \"17.0.15\" 2025-04-15"),
            Some(17)
        );
        assert_eq!(parse_java_major("java version \"1.8.0_292\""), Some(8));
        assert_eq!(
            parse_java_major("openjdk version \"21\" 2023-09-19"),
            Some(21)
        );
        assert_eq!(parse_java_major("nonsense"), None);
    }

    #[test]
    fn a_path_without_java_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_java(&tools_in(dir.path())).unwrap_err();
        assert_eq!(e.code, crate::exit_code::EXECUTION_FAILED);
        assert!(e.message.contains("no `java` on PATH"), "{}", e.message);
    }

    #[test]
    fn an_old_java_or_a_jre_without_javac_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        fake_tool(dir.path(), "java", "echo 'java version \"1.8.0_292\"' >&2");
        let e = check_java(&tools_in(dir.path())).unwrap_err();
        assert!(e.message.contains("needs Java 17+"), "{}", e.message);
        assert!(e.message.contains("Java 8"), "{}", e.message);

        fake_tool(
            dir.path(),
            "java",
            "echo 'openjdk version \"17.0.1\" 2021-10-19' >&2",
        );
        let e = check_java(&tools_in(dir.path())).unwrap_err();
        assert!(e.message.contains("`javac`"), "{}", e.message);
        fake_tool(dir.path(), "javac", "true");
        fake_tool(dir.path(), "jar", "true");
        assert_eq!(check_java(&tools_in(dir.path())).unwrap().major, 17);
    }

    #[test]
    fn a_path_without_python_or_venv_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_python(&tools_in(dir.path())).unwrap_err();
        assert!(e.message.contains("no `python3` on PATH"), "{}", e.message);

        // A Python whose venv/ensurepip import fails (Debian without python3-venv).
        fake_tool(
            dir.path(),
            "python3",
            "echo 3 11; echo 'ModuleNotFoundError: No module named ensurepip' >&2; exit 1",
        );
        let e = check_python(&tools_in(dir.path())).unwrap_err();
        assert!(e.message.contains("python3-venv"), "{}", e.message);

        fake_tool(dir.path(), "python3", "echo 3 7");
        let e = check_python(&tools_in(dir.path())).unwrap_err();
        assert!(e.message.contains("3.9+"), "{}", e.message);
    }

    #[test]
    fn a_recorded_install_is_reused_and_a_partial_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let home = FlinkHome {
            dir: dir.path().to_path_buf(),
        };
        assert!(installed(&home).is_none());
        // A venv without the marker: an interrupted install.
        std::fs::create_dir_all(home.venv().join("bin")).unwrap();
        std::fs::write(home.python(), "").unwrap();
        assert!(installed(&home).is_none());
        let flink = dir.path().join("pyflink");
        std::fs::create_dir_all(flink.join("bin")).unwrap();
        let m = Marker {
            requirements: "apache-flink==2.3.0\n".into(),
            capture_sources: "x".into(),
            flink_home: flink,
            flink_version: "2.3.0".into(),
        };
        write_marker(&home, &m).unwrap();
        assert_eq!(installed(&home), Some(m));
        // The jar is missing, so the install is not usable yet.
        let e = require(&home).unwrap_err();
        assert!(e.message.contains("lab flink install"), "{}", e.message);
        std::fs::create_dir_all(home.capture_jar().parent().unwrap()).unwrap();
        std::fs::write(home.capture_jar(), "").unwrap();
        assert!(require(&home).is_ok());
    }

    #[test]
    fn fnv_separates_fields() {
        let h = |parts: &[&str]| {
            let mut f = Fnv::default();
            for p in parts {
                f.write(p.as_bytes());
            }
            f.0
        };
        assert_ne!(h(&["ab", "c"]), h(&["a", "bc"]));
        assert_eq!(h(&["ab", "c"]), h(&["ab", "c"]));
    }
}
