//! A real `tickstep dashboard` process on an ephemeral loopback port (docs/serve.md §13.13):
//! started, its address read from the line it prints, killed when dropped. Every wait is bounded.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use super::serve_client::{Printing, spawn_printing};

/// The longest the process may take to print its address.
const PATIENCE: Duration = Duration::from_secs(15);

/// A running `tickstep dashboard`; killed when dropped (Ctrl-C, `-INT`, is its clean stop).
pub(crate) struct Dashboard {
    pub(crate) process: Printing,
    /// Where it serves, `127.0.0.1:PORT`.
    pub(crate) addr: String,
}

impl Dashboard {
    /// Starts `tickstep dashboard --db DB --http 127.0.0.1:0 EXTRA…`.
    pub(crate) fn start(db: &Path, extra: &[&str]) -> Dashboard {
        let process = spawn_printing(
            Command::new(env!("CARGO_BIN_EXE_tickstep"))
                .arg("dashboard")
                .arg("--db")
                .arg(db)
                .args(["--http", "127.0.0.1:0"])
                .args(extra),
        );
        let first = process
            .lines
            .recv_timeout(PATIENCE)
            .expect("the dashboard prints its address");
        let addr = first
            .split_once(" on http://")
            .and_then(|(_, rest)| rest.split_once("/dashboard"))
            .map_or_else(
                || panic!("unexpected first line {first:?}"),
                |(addr, _)| addr.to_owned(),
            );
        Dashboard { process, addr }
    }

    /// Stops it with SIGTERM, as a service manager would: how it exited, and what it printed
    /// after its address.
    #[cfg(unix)]
    pub(crate) fn terminate(mut self) -> (std::process::ExitStatus, Vec<String>) {
        self.process.signal("-TERM");
        let ended = self.process.wait_exit();
        (ended.status, ended.rest)
    }
}

/// Runs `tickstep ARGS…` to its end (for a start that must fail at once).
pub(crate) fn run_to_end(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickstep"))
        .args(args)
        .output()
        .expect("the tickstep binary runs")
}
