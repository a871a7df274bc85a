//! Finding the Python with `WPILib`'s libraries and talking to a script line by line; a raw
//! NT4 client (`ws`).

#![allow(dead_code, unreachable_pub)]

pub mod ws;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The Python to run: `TICKSTEP_PYTHON`, else `python3`. `None` (the test then returns) when it
/// lacks `module` outside CI; under `CI` a missing module fails the test (docs/nt4.md §7.1).
pub fn python_with(module: &str) -> Option<String> {
    let python = std::env::var("TICKSTEP_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{python} lacks the Python module {module}: .ci/run installs it from .ci/requirements.txt (set TICKSTEP_PYTHON)"
    );
    eprintln!(
        "skipped: {python} lacks {module} (pip install -r .ci/requirements.txt, then set TICKSTEP_PYTHON)"
    );
    None
}

pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

/// A running script: its stdout lines arrive on a channel, parsed as JSON.
pub struct Script {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<serde_json::Value>,
    pub seen: Vec<serde_json::Value>,
}

impl Script {
    pub fn start(python: &str, name: &str, args: &[String]) -> Self {
        let mut child = Command::new(python)
            .arg(script(name))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the Python script");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
        }
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to the script");
        stdin.flush().expect("flush");
    }

    /// Waits (at most `limit`, real time: the script is another process) for a line matching
    /// `pred`, keeping every line read in `seen`.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        what: &str,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return v.clone();
        }
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!(
                        "the script never reported {what}; it reported: {:#?}",
                        self.seen
                    )
                }
            }
        }
    }

    /// Reads what the script reports for up to `limit` (into `seen`).
    pub fn pump(&mut self, limit: Duration) {
        if let Ok(v) = self.lines.recv_timeout(limit) {
            self.seen.push(v);
            while let Ok(v) = self.lines.try_recv() {
                self.seen.push(v);
            }
        }
    }

    /// The latest value the script saw on `topic`, among what it has reported so far.
    pub fn latest(&self, topic: &str) -> Option<&serde_json::Value> {
        self.seen
            .iter()
            .rev()
            .find(|v| v["topic"] == topic)
            .map(|v| &v["value"])
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "quit");
        }
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long a test waits for the other process to report something (real time, bounded).
pub const WAIT: Duration = Duration::from_secs(30);

/// Matches a script line reporting `value` on `topic`.
pub fn topic_is(
    topic: &'static str,
    value: serde_json::Value,
) -> impl Fn(&serde_json::Value) -> bool {
    move |v| v["topic"] == topic && v["value"] == value
}
