//! Node processes for the multi-process tests: this test binary re-executed with one test as
//! its body (a no-op unless its environment is set), whose stdout lines from the first `@` on
//! are collected as the node says them. Used by `failover.rs` here and by the `tickstep`
//! crate's `job_node_failover.rs`.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a node may take to exit before the test gives up on it.
const EXIT_WITHIN: Duration = Duration::from_secs(60);

pub struct Node {
    pub child: Child,
    pub lines: Arc<Mutex<Vec<String>>>,
    /// The thread that reads the child's stdout into `lines`; it ends when the child does.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Node {
    /// Runs the test named `entry` of this binary as a node process, with `env` set.
    pub fn spawn(entry: &str, env: &[(&str, String)]) -> Node {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", entry, "--nocapture", "--test-threads=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // The test harness prints "test … " before the first line, unterminated.
                if let Some(at) = line.find('@') {
                    sink.lock().unwrap().push(line[at..].to_string());
                }
            }
        });
        Node {
            child,
            lines,
            reader: Some(reader),
        }
    }

    /// Whether the node said the line `what`.
    pub fn said(&self, what: &str) -> bool {
        self.lines.lock().unwrap().iter().any(|l| l == what)
    }

    /// The fields after the tag of every line the node said starting with `prefix`.
    pub fn lines(&self, prefix: &str) -> Vec<Vec<u64>> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .map(|l| fields(l))
            .collect()
    }

    /// Polls until `done` holds for this node, at most `limit`; fails the test naming `what`.
    pub fn wait_for(&self, what: &str, limit: Duration, done: impl Fn(&Node) -> bool) {
        let give_up = Instant::now() + limit;
        while !done(self) {
            assert!(Instant::now() < give_up, "gave up waiting: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends the signal `name` (`-KILL`, `-STOP`, …) with `kill`.
    pub fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([name, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {name}");
    }

    /// Waits (bounded) for the node to exit, then for the reader to have read all it printed.
    pub fn wait(&mut self) {
        let give_up = Instant::now() + EXIT_WITHIN;
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > give_up {
                let _ = self.child.kill();
                panic!("a node did not exit within {EXIT_WITHIN:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the reader thread");
        }
    }
}

/// The numbers of a line after its tag (`@F 7 1000 2` → `[7, 1000, 2]`).
pub fn fields(line: &str) -> Vec<u64> {
    line.split(' ')
        .skip(1)
        .map(|f| f.parse().unwrap())
        .collect()
}

impl Drop for Node {
    /// A test that fails halfway leaves no node running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
