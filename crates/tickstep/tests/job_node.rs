//! The `job_node` example as real processes, stopped the way a service manager stops them:
//! SIGTERM (docs/runtime.md §5.13–§5.15, §9.29; docs/schedules.md §11.26). Each node is this test
//! binary run again with the example's own `node` as its body (a no-op unless the environment
//! names a store).
//!
//! On `PostgreSQL` two nodes share one database: the first makes the keyed job, the second finds
//! it (held by the first) and stands by. The active node's lease is ten minutes, far longer than
//! this test waits (60 s at most), so had its clean stop not handed the job back, the standby
//! could not take it before the test gives up; the standby's own lease is 3 s, so it claims once
//! a second (a third of its lease). Asserted: the stopped node exits 0 by itself; the standby
//! runs the job afterwards; no cadence point ran twice (the nodes' own lines) or was committed
//! twice (the committed-firing log of the engine's failover test). How soon the standby ran is
//! printed, not asserted. On `SQLite` one node is stopped by SIGTERM and started again, and finds
//! its job instead of making a second.
#![cfg(all(unix, feature = "tokio"))]

#[allow(dead_code, unreachable_pub)]
#[path = "../examples/job_node.rs"]
mod job_node;
#[path = "../../tickstep-schedules/tests/common/pg.rs"]
mod pg;
/// Where `pg_or_skip!` looks for the server helper.
mod common {
    pub(crate) use super::pg;
}

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The node's store, set in its environment.
const NODE_STORE: &str = "TICKSTEP_TEST_JOB_NODE_STORE";
/// The node's lease in seconds.
const NODE_LEASE: &str = "TICKSTEP_TEST_JOB_NODE_LEASE";
/// The longest a node may take to start, to run the job, or to exit once signalled.
const PATIENCE: Duration = Duration::from_secs(60);

/// A node's body: the example's `node`, as its `main` runs it.
#[test]
fn job_node_process_entry() {
    let Ok(store) = std::env::var(NODE_STORE) else {
        return;
    };
    let lease = Duration::from_secs(std::env::var(NODE_LEASE).unwrap().parse().unwrap());
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new()
        .block_on(&threads, job_node::node(&store, lease))
        .unwrap();
}

/// A node process and every line it printed so far.
struct Node {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Node {
    fn start(store: &str, lease: Duration) -> Node {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "job_node_process_entry", "--nocapture"])
            .args(["--test-threads=1"])
            .env(NODE_STORE, store)
            .env(NODE_LEASE, lease.as_secs().to_string())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let node = Node { child, lines };
        node.wait_for("it is ready", |n| n.said("node ready: job #"));
        node
    }

    fn said(&self, what: &str) -> bool {
        self.lines.lock().unwrap().iter().any(|l| l.contains(what))
    }

    /// The cadence points of the job's runs on this node, in order.
    fn points(&self) -> Vec<u64> {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .filter_map(|l| {
                l.split_once("ran for point ")
                    .map(|(_, p)| p.parse().unwrap())
            })
            .collect()
    }

    /// The job's id and whether this node made it (else it found it).
    fn job(&self) -> (u64, bool) {
        let lines = self.lines.lock().unwrap();
        let line = lines
            .iter()
            .find_map(|l| l.split_once("node ready: job #").map(|(_, rest)| rest))
            .unwrap();
        let (id, how) = line.split_once(' ').unwrap();
        (id.parse().unwrap(), how == "made")
    }

    fn wait_for(&self, what: &str, done: impl Fn(&Node) -> bool) {
        let give_up = Instant::now() + PATIENCE;
        while !done(self) {
            assert!(
                Instant::now() < give_up,
                "gave up waiting: {what}: {:#?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM, as a service manager does, and waits for the node to exit.
    fn terminate(&mut self) -> ExitStatus {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM");
        let give_up = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > give_up {
                let _ = self.child.kill();
                panic!("the node did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// It exited 0 by itself (the signal was handled, not fatal) after saying so.
fn assert_stopped_cleanly(node: &mut Node) {
    use std::os::unix::process::ExitStatusExt as _;
    let status = node.terminate();
    assert_eq!(status.signal(), None, "SIGTERM was handled, not fatal");
    assert!(status.success(), "{status}");
    // The reader thread may still be taking the last lines.
    node.wait_for("it says it stopped", |n| n.said("node stopped cleanly"));
}

#[cfg(feature = "postgres")]
#[test]
fn a_sigterm_hands_the_job_to_the_standby_at_its_next_claim_not_after_a_lease() {
    let url = pg_or_skip!("job_node_example");
    // Make the tables (through the facade), then log every committed cadence point.
    drop(
        tickstep::Runtime::builder()
            .store_path(&url)
            .namespace(tickstep::schedules::Namespace::new("job_node").unwrap())
            .without_commands()
            .build()
            .unwrap(),
    );
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(pg::COMMITTED_LOG).unwrap();

    let mut active = Node::start(&url, Duration::from_secs(600));
    let mut standby = Node::start(&url, Duration::from_secs(3));
    let (id, made) = active.job();
    assert!(made, "the first node made the job");
    assert_eq!(standby.job(), (id, false), "the second found it, held");
    let ran_before = active.points().len();
    active.wait_for("the job runs twice more", |n| {
        n.points().len() >= ran_before + 2
    });
    assert!(standby.points().is_empty(), "the standby holds nothing");

    assert_stopped_cleanly(&mut active);
    let stopped_at = Instant::now();
    let last_on_active = *active.points().last().unwrap();
    standby.wait_for("the standby runs the job", |n| !n.points().is_empty());
    eprintln!(
        "job node: the standby first ran the job {:?} after its predecessor's exit",
        stopped_at.elapsed()
    );
    standby.wait_for("the standby runs it again", |n| n.points().len() >= 2);
    assert_stopped_cleanly(&mut standby);

    // Every point ran once, on one node, and the standby went on where the active one stopped.
    let (on_active, on_standby) = (active.points(), standby.points());
    let all: Vec<u64> = on_active.iter().chain(&on_standby).copied().collect();
    let distinct: BTreeSet<u64> = all.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        all.len(),
        "a point ran twice: {on_active:?} {on_standby:?}"
    );
    assert!(
        on_standby.iter().all(|p| *p > last_on_active),
        "{on_active:?} {on_standby:?}"
    );
    let committed: Vec<i64> = client
        .query("SELECT point FROM firing_log ORDER BY point", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    for w in committed.windows(2) {
        assert_ne!(w[0], w[1], "point {} committed twice", w[0]);
    }
    assert!(committed.len() >= all.len(), "{committed:?}");
    let held: i64 = client
        .query_one(
            "SELECT count(*) FROM tickstep_schedules WHERE owner_node IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(held, 0, "both nodes handed the job back");
    drop(client);
    pg::drop_database(&url);
}

#[test]
fn a_node_on_sqlite_stops_on_sigterm_and_its_restart_finds_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("job_node.db");
    let store = store.to_str().unwrap();
    let lease = Duration::from_secs(10); // unused by SQLite
    let mut first = Node::start(store, lease);
    let (id, made) = first.job();
    assert!(made);
    first.wait_for("the job runs", |n| !n.points().is_empty());
    assert_stopped_cleanly(&mut first);
    let mut second = Node::start(store, lease);
    assert_eq!(second.job(), (id, false), "the restart found the job");
    second.wait_for("the job runs again", |n| !n.points().is_empty());
    assert_stopped_cleanly(&mut second);
    let on_first: BTreeSet<u64> = first.points().into_iter().collect();
    assert!(
        second.points().iter().all(|p| !on_first.contains(p)),
        "no point ran twice"
    );
}
