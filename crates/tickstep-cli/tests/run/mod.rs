//! Running the real `tickstep` binary from a test, as a user would, and reading what it printed.
#![allow(dead_code)] // each test binary uses a part of it

use std::process::{Command, Output};

/// Runs `tickstep` with `args` to completion.
pub(crate) fn tickstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickstep"))
        .args(args)
        .output()
        .expect("the tickstep binary runs")
}

/// What the run printed on stdout.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the run printed on stderr.
pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A `tickstep demo` running on the real clock for 3 s, read up to its first status line (so
/// its store is live): the child, the rest of its stdout, and the lines read so far.
pub(crate) struct LiveDemo {
    pub(crate) child: std::process::Child,
    pub(crate) lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    pub(crate) seen: Vec<String>,
}

/// Starts a 3 s demo on store `db` and waits, by reading (never sleeping), for its first
/// status line.
pub(crate) fn live_demo(db: &str) -> LiveDemo {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickstep"))
        .args(["demo", "--duration", "3s", "--db", db])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the demo starts");
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("the demo's stdout reads");
        let first_second = line.starts_with("[   1s]");
        seen.push(line);
        if first_second {
            break;
        }
    }
    LiveDemo { child, lines, seen }
}

impl LiveDemo {
    /// Reads the rest of the demo's output, checks it exits successfully, and returns all it
    /// printed.
    pub(crate) fn finish(mut self) -> String {
        self.seen.extend(self.lines.map(Result::unwrap));
        assert!(self.child.wait().expect("the demo ends").success());
        self.seen.join("\n")
    }
}
