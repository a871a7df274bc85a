//! SIGTERM, the signal service managers (systemd, Docker, Kubernetes) stop a service with, stops
//! every long-running command cleanly (docs/runtime.md §7.11), as Ctrl-C and SIGHUP do: `tickstep serve`, `tickstep demo`
//! and `tickstep dashboard`, each a real process sent a real signal. The outcomes asserted: the
//! process exits 0 by itself (no signal ended it), says it stopped, and the store says what a
//! clean stop leaves — its schedules committed and, on `PostgreSQL`, none of the node's rows held
//! by anyone at once, where a killed node's rows stay held until its lease runs out
//! (docs/schedules.md §11.26). Every wait is bounded; nothing is timed.
#![cfg(unix)]

mod common;
mod dashboard_process;
mod run;
mod serve_client;

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Command, ExitStatus};

use dashboard_process::Dashboard;
use run::{stderr, stdout, tickstep};
use serve_client::{PATIENCE, Server, id_of, spawn_printing};

/// Exited 0 by itself: SIGTERM was handled, not fatal.
fn assert_clean(status: ExitStatus, printed: &[String]) {
    assert_eq!(status.signal(), None, "no signal ended it: {printed:#?}");
    assert!(status.success(), "{status}: {printed:#?}");
}

/// The schedule `id` as the store has it, read by the operator's tool.
fn stored(db: &str, id: u64) -> serde_json::Value {
    let info = tickstep(&["schedules", "--db", db, "info", &id.to_string(), "--json"]);
    assert!(info.status.success(), "{}", stderr(&info));
    serde_json::from_str(&stdout(&info)).expect("info --json is JSON")
}

/// How many schedule rows some node holds, and how many nodes are registered.
fn held(url: &str) -> (i64, i64) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let count = |client: &mut postgres::Client, sql: &str| -> i64 {
        client.query_one(sql, &[]).unwrap().get(0)
    };
    (
        count(
            &mut client,
            "SELECT count(*) FROM tickstep_schedules WHERE owner_node IS NOT NULL",
        ),
        count(&mut client, "SELECT count(*) FROM tickstep_nodes"),
    )
}

/// Drops a test's database however the test ends.
struct Scratch(String);

impl Drop for Scratch {
    fn drop(&mut self) {
        common::pg::drop_database(&self.0);
    }
}

/// A server on `db` with one of alice's schedules, stopped by SIGTERM: the schedule's id.
fn serve_then_terminate(db: &str, before: impl FnOnce()) -> u64 {
    serve_then_stop(db, "-TERM", before)
}

/// A server on `db` with one of alice's schedules, stopped by `signal`: the schedule's id.
fn serve_then_stop(db: &str, signal: &str, before: impl FnOnce()) -> u64 {
    let server = Server::start(Path::new(db), &[]);
    let mut alice = server.login("alice");
    let id = id_of(&alice.ask("every 60 tell hourly"));
    alice.quit();
    before();
    let (status, printed) = server.stop_by(signal);
    assert_clean(status, &printed);
    assert!(
        printed
            .iter()
            .any(|l| l == "tickstep serve: stopped; the store is committed"),
        "{printed:#?}"
    );
    id
}

#[test]
fn serve_stops_cleanly_on_sigterm_and_commits_its_store() {
    // docs/serve.md §1.3
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let db = db.to_str().unwrap();
    let id = serve_then_terminate(db, || {});
    assert_eq!(stored(db, id)["interval"], 60.0);
}

#[test]
fn serve_on_postgres_hands_its_schedules_back_at_once_on_sigterm() {
    // docs/serve.md §6.5, docs/schedules.md §11.26
    let url = pg_or_skip!("serve_sigterm");
    let _scratch = Scratch(url.clone());
    let id = serve_then_terminate(&url, || {
        assert!(
            held(&url).0 >= 1,
            "the node holds its schedule while it runs"
        );
    });
    assert_eq!(held(&url), (0, 0), "handed back at once, not after a lease");
    assert_eq!(stored(&url, id)["interval"], 60.0);
}

/// A `tickstep demo` on `db` with no duration, stopped by SIGTERM after its first status line:
/// what it printed.
fn demo_then_terminate(db: &str, before: impl FnOnce()) -> Vec<String> {
    demo_then_stop(db, "-TERM", before)
}

/// A `tickstep demo` on `db` with no duration, stopped by `signal` after its first status line:
/// what it printed.
fn demo_then_stop(db: &str, signal: &str, before: impl FnOnce()) -> Vec<String> {
    let mut process =
        spawn_printing(Command::new(env!("CARGO_BIN_EXE_tickstep")).args(["demo", "--db", db]));
    let mut printed = Vec::new();
    while !printed
        .last()
        .is_some_and(|l: &String| l.starts_with("[   1s]"))
    {
        let Ok(line) = process.lines.recv_timeout(PATIENCE) else {
            panic!("no first status line: {printed:#?}");
        };
        printed.push(line);
    }
    before();
    process.signal(signal);
    let ended = process.wait_exit();
    let status = ended.status;
    printed.extend(ended.rest);
    assert_clean(status, &printed);
    let text = printed.join("\n");
    assert!(
        text.contains("stopped cleanly") && text.contains("store committed"),
        "{text}"
    );
    printed
}

#[test]
fn demo_stops_cleanly_on_sigterm_and_commits_its_store() {
    // docs/runtime.md §7.1
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let db = db.to_str().unwrap();
    let printed = demo_then_terminate(db, || {});
    assert!(
        printed
            .iter()
            .any(|l| l == "running until Ctrl-C or SIGTERM; one status line per second"),
        "{printed:#?}"
    );
    let again = tickstep(&["demo", "--virtual", "--duration", "1s", "--db", db]);
    assert!(
        stdout(&again).contains("found schedule"),
        "the next run finds what the stopped one committed: {}",
        stdout(&again)
    );
}

#[test]
fn demo_on_postgres_hands_its_schedules_back_at_once_on_sigterm() {
    // docs/runtime.md §7.1, docs/schedules.md §11.26
    let url = pg_or_skip!("demo_sigterm");
    let _scratch = Scratch(url.clone());
    demo_then_terminate(&url, || {
        assert!(
            held(&url).0 >= 1,
            "the demo holds its schedules while it runs"
        );
    });
    assert_eq!(held(&url), (0, 0), "handed back at once, not after a lease");
}

#[test]
fn serve_and_demo_stop_on_ctrl_c_and_sighup_as_on_sigterm() {
    // docs/runtime.md §7.11: one handler takes all three signals; each stop is as clean.
    let dir = tempfile::tempdir().unwrap();
    for signal in ["-INT", "-HUP"] {
        let db = dir.path().join(format!("serve{signal}.db"));
        let db = db.to_str().unwrap();
        let id = serve_then_stop(db, signal, || {});
        assert_eq!(stored(db, id)["interval"], 60.0, "serve, {signal}");
        let db = dir.path().join(format!("demo{signal}.db"));
        let db = db.to_str().unwrap();
        demo_then_stop(db, signal, || {});
        let again = tickstep(&["demo", "--virtual", "--duration", "1s", "--db", db]);
        assert!(stdout(&again).contains("found schedule"), "demo, {signal}");
    }
}

#[test]
fn the_store_dashboard_stops_cleanly_on_sigterm() {
    // docs/serve.md §13.13
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("board.db");
    let made = tickstep(
        &["demo", "--virtual", "--duration", "1s", "--db"]
            .into_iter()
            .chain([db.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert!(made.status.success(), "{}", stderr(&made));
    let (status, printed) = Dashboard::start(&db, &[]).terminate();
    assert_clean(status, &printed);
    assert_eq!(printed, ["tickstep dashboard: stopped"]);
}
