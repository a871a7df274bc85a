//! Running the real `tickstep` binary from a test, as a user would, and reading what it printed.

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
