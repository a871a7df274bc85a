//! `driver.run_until(tickstep::shutdown_signal()).await`, the one line a service needs to stop
//! cleanly (docs/runtime.md §5.12), in a real process stopped the way a service manager stops
//! it: SIGTERM. Each test runs its own test binary again as that service (the same test, told by
//! an environment variable to serve), sends it SIGTERM once it says it serves, and asserts what
//! a clean stop leaves: exit status 0, the driver's run ended without error, and the store — the
//! schedule committed, and on `PostgreSQL` no row held by anyone at once (docs/schedules.md
//! §11.26), where a killed node's rows stay held until its lease runs out. Every wait is bounded;
//! nothing is timed.
#![cfg(all(unix, feature = "tokio"))]

#[path = "../../tickstep-schedules/tests/common/pg.rs"]
mod pg;
/// Where `pg_or_skip!` looks for the server helper (used by the `postgres` feature's test).
#[cfg(feature = "postgres")]
mod common {
    pub(crate) use super::pg;
}

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tickstep::schedules::{Inspector, ObjId, Options, ScheduleId, Value};
use tickstep::{Runtime, TokioDriver};

/// Set in the service's environment: the store it serves.
const SERVICE_STORE: &str = "TICKSTEP_TEST_SERVICE_STORE";
/// The longest the service may take to start, or to stop once signalled.
const PATIENCE: Duration = Duration::from_secs(30);
const WORLD: ObjId = ObjId(1);

/// The service: a `TokioDriver` on `store` with one schedule beating every 50 ms, run until
/// `shutdown_signal()`. It prints `serving ID` once the schedule is committed, and `stopped`
/// once the driver's run has ended and the runtime is dropped (the engine closed).
fn serve(store: &str) {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&threads, async {
        let stop = tickstep::shutdown_signal();
        let builder = Runtime::builder()
            .store_path(store)
            .without_commands()
            .diagnostics(false);
        let driver = TokioDriver::new(builder).unwrap();
        driver.runtime().verb("beat", |_| Ok(Value::Int(0)));
        let mut txn = driver.runtime().schedules().begin(WORLD);
        let id = txn
            .schedule_every(WORLD, "beat", 0.05, vec![], Options::new())
            .unwrap();
        txn.commit_async().await.unwrap();
        println!("serving {}", id.get());
        driver.run_until(stop).await.unwrap();
    });
    println!("stopped");
}

/// Runs this binary's test `name` as the service on `store`, sends it SIGTERM once it serves,
/// and returns how it exited, the schedule it made and every line it printed.
fn serve_and_terminate(name: &str, store: &str) -> (ExitStatus, ScheduleId, Vec<String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(SERVICE_STORE, store)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the test binary runs");
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let id = loop {
        let line = lines.recv_timeout(PATIENCE).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the service never said it serves: {seen:#?}")
        });
        // libtest's own `test NAME ... ` may start the line.
        if let Some((_, id)) = line.split_once("serving ") {
            break ScheduleId::from_raw(id.parse().unwrap());
        }
        seen.push(line);
    };
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -TERM");
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the service did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    seen.extend(lines.try_iter());
    (status, id, seen)
}

/// The outcome every store shares: it exited 0 by itself (no signal ended it) after its run
/// ended without error.
fn assert_stopped_cleanly(status: ExitStatus, printed: &[String]) {
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), None, "SIGTERM was handled, not fatal");
    assert!(status.success(), "{status}: {printed:#?}");
    assert!(
        printed.iter().any(|l| l.ends_with("stopped")),
        "{printed:#?}"
    );
}

#[test]
fn sigterm_stops_a_tokio_driver_service_and_commits_its_sqlite_store() {
    if let Ok(store) = std::env::var(SERVICE_STORE) {
        return serve(&store);
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("service.db");
    let store = store.to_str().unwrap();
    let (status, id, printed) = serve_and_terminate(
        "sigterm_stops_a_tokio_driver_service_and_commits_its_sqlite_store",
        store,
    );
    assert_stopped_cleanly(status, &printed);
    let saved = Inspector::open(store).unwrap().get(id).unwrap();
    let saved = saved.expect("the schedule is in the store");
    assert!(saved.running.is_empty(), "no firing left in flight");
}

#[cfg(feature = "postgres")]
#[test]
fn sigterm_stops_a_tokio_driver_service_and_hands_its_postgres_rows_back_at_once() {
    if let Ok(store) = std::env::var(SERVICE_STORE) {
        return serve(&store);
    }
    let url = pg_or_skip!("service_sigterm");
    let (status, id, printed) = serve_and_terminate(
        "sigterm_stops_a_tokio_driver_service_and_hands_its_postgres_rows_back_at_once",
        &url,
    );
    assert_stopped_cleanly(status, &printed);
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let held: i64 = client
        .query_one(
            "SELECT count(*) FROM tickstep_schedules WHERE owner_node IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    let nodes: i64 = client
        .query_one("SELECT count(*) FROM tickstep_nodes", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        (held, nodes),
        (0, 0),
        "handed back at once, not after a lease"
    );
    assert!(Inspector::open(&url).unwrap().get(id).unwrap().is_some());
    drop(client);
    pg::drop_database(&url);
}
