//! Failover the way users run it (docs/schedules.md §11.38–§11.40, docs/runtime.md §6.3): two
//! job nodes — this test binary, re-executed — each written on the public facade only
//! (`Runtime::builder().store_path(url)` and a `TokioDriver` built inside a current-thread tokio
//! runtime, stopped by Ctrl-C), share one `PostgreSQL` database. Node A creates one schedule
//! every second; node B is a standby holding nothing, with no schedule of its own and no hook.
//! A is `SIGKILL`ed.
//!
//! Asserted: B takes the schedule over and it keeps firing there (three firings at least); no
//! cadence point is committed twice (the committed-firing log of the engine's failover test,
//! `common/pg.rs`); B's points follow one another with none missing and none counted as an
//! overlap behind A's dead firing; the schedule is live at the end. Bounded: about 10 s of real
//! time, 60 s at most. Outcomes only: how soon B first fired after the kill is printed (a lease
//! and a claim interval, plus the cadence point it waits for, by the takeover rule), not
//! asserted.
#![cfg(all(feature = "tokio", feature = "postgres"))]

#[path = "../../tickstep-schedules/tests/common/nodes.rs"]
mod nodes;
#[path = "../../tickstep-schedules/tests/common/pg.rs"]
mod pg;
/// Where `pg_or_skip!` looks for the server helper.
mod common {
    pub(crate) use super::pg;
}

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use nodes::Node;

const CHILD_URL: &str = "TICKSTEP_JOB_NODE_URL";
const CHILD_ROLE: &str = "TICKSTEP_JOB_NODE_ROLE";
/// Set: the node runs handed-back firings again (docs/runtime.md §6.7).
const CHILD_RERUN: &str = "TICKSTEP_JOB_NODE_RERUN";
/// The nodes' lease (docs/schedules.md §11.25); the store claims every third of it.
const LEASE: Duration = Duration::from_secs(2);
/// The schedule's interval.
const INTERVAL: Duration = Duration::from_secs(1);

/// A job node's body: a no-op unless the parent set the environment. Public facade only.
#[test]
fn job_node_process_entry() {
    use tickstep::schedules::{ObjId, Options, Value};
    use tickstep::{Runtime, TokioDriver};

    let Ok(url) = std::env::var(CHILD_URL) else {
        return;
    };
    let role = std::env::var(CHILD_ROLE).unwrap_or_default();
    let holder = role == "holder";
    let rerun = std::env::var(CHILD_RERUN).is_ok();
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&threads, async move {
        let builder = Runtime::builder()
            .store_path(&url)
            .lease(LEASE)
            // An idle server that costs nothing (docs/runtime.md §9.15): no command cycle, no
            // overload diagnostics, so the standby runs no frames at all until woken.
            .without_commands()
            .diagnostics(false)
            .rerun_interrupted(rerun);
        let driver = TokioDriver::new(builder).expect("open the node");
        // A job that is still running when its node is killed: its first run never ends.
        driver.runtime().async_verb("long", move |call| {
            say(format!(
                "@L {} {} {}",
                call.schedule().get(),
                call.firing().nominal_unix_nanos,
                u8::from(call.is_rerun())
            ));
            async move {
                if !call.is_rerun() {
                    call.sleep(Duration::from_secs(3600)).await;
                }
                say(format!("@D {}", call.schedule().get()));
                Ok(Value::Int(0))
            }
        });
        driver.runtime().verb("job", move |call| {
            // The job's side effect: (schedule, cadence point, when it started).
            let now = call.schedules().now_unix_seconds();
            say(format!(
                "@F {} {} {}",
                call.schedule().get(),
                call.firing().nominal_unix_nanos,
                (now * 1e3) as u64
            ));
            Ok(Value::Int(0))
        });
        if holder {
            let mut txn = driver.runtime().schedules().begin(ObjId(1));
            let id = txn
                .schedule_every(
                    ObjId(1),
                    "job",
                    INTERVAL.as_secs_f64(),
                    vec![],
                    Options::new(),
                )
                .unwrap();
            txn.commit().unwrap();
            say(format!("@C {}", id.get()));
        }
        if role == "long" {
            let mut txn = driver.runtime().schedules().begin(ObjId(1));
            let at = driver.runtime().schedules().now_unix_seconds() + 1.0;
            let id = txn
                .schedule_at(ObjId(1), "long", at, vec![], Options::new())
                .unwrap();
            txn.commit().unwrap();
            say(format!("@C {}", id.get()));
        }
        let mut interrupt =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).unwrap();
        say("@READY".to_string());
        driver
            .run_until(async move { interrupt.recv().await })
            .await
            .unwrap();
        say("@STOPPED".to_string());
    });
}

/// A job node in `role` on the database at `url`; `rerun` turns on `rerun_interrupted`.
fn spawn_node(url: &str, role: &str, rerun: bool) -> Node {
    let mut env = vec![(CHILD_URL, url.to_string()), (CHILD_ROLE, role.to_string())];
    if rerun {
        env.push((CHILD_RERUN, "1".to_string()));
    }
    Node::spawn("job_node_process_entry", &env)
}

/// The committed-firing log: each node's points, and every point in order, none twice.
fn committed_points(client: &mut postgres::Client) -> (BTreeMap<i64, Vec<i64>>, Vec<i64>) {
    let mut committed: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for row in client
        .query("SELECT node, point FROM firing_log ORDER BY point", &[])
        .unwrap()
    {
        committed.entry(row.get(0)).or_default().push(row.get(1));
    }
    let mut all: Vec<i64> = committed.values().flatten().copied().collect();
    all.sort_unstable();
    for w in all.windows(2) {
        assert_ne!(w[0], w[1], "point {} committed twice", w[0]);
    }
    assert_eq!(
        committed.len(),
        2,
        "two nodes committed firings: {committed:?}"
    );
    (committed, all)
}

fn unix_millis() -> u64 {
    u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[test]
fn a_standby_job_node_takes_over_from_a_killed_one_and_no_point_is_committed_twice() {
    let url = pg_or_skip!("job_node_failover");
    // Migrate (through the facade), then install the committed log on the tables.
    drop(
        tickstep::Runtime::builder()
            .store_path(&url)
            .without_commands()
            .build()
            .unwrap(),
    );
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(pg::COMMITTED_LOG).unwrap();

    let spawn = |role: &str| spawn_node(&url, role, false);
    let a = spawn("holder");
    a.wait_for("node A ready", Duration::from_secs(30), |n| {
        n.said("@READY")
    });
    let mut b = spawn("standby");
    b.wait_for("node B ready", Duration::from_secs(30), |n| {
        n.said("@READY")
    });
    a.wait_for("A fires twice", Duration::from_secs(15), |n| {
        n.lines("@F ").len() >= 2
    });
    assert!(b.lines("@F ").is_empty(), "the standby holds nothing");
    a.signal("-KILL");
    let killed_at = unix_millis();
    drop(a);
    b.wait_for(
        "B fires the schedule three times",
        Duration::from_secs(20),
        |n| n.lines("@F ").len() >= 3,
    );
    b.signal("-INT");
    b.wait();
    assert!(b.said("@STOPPED"), "B stopped cleanly");

    // How soon B took over is printed, not asserted: a duration on a shared machine belongs in
    // a benchmark. The wait above bounds it; what follows checks the outcome.
    let first_start = b.lines("@F ")[0][2];

    // Exactly once: no cadence point committed twice; B's points follow one another.
    let (committed, all) = committed_points(&mut client);
    let interval = i64::try_from(INTERVAL.as_nanos()).unwrap();
    let after_kill: Vec<&Vec<i64>> = committed
        .values()
        .filter(|points| {
            points
                .iter()
                .any(|&p| p / 1_000_000 > i64::try_from(killed_at).unwrap())
        })
        .collect();
    assert_eq!(after_kill.len(), 1, "one node fired after the kill");
    let on_b = after_kill[0];
    assert!(on_b.len() >= 3, "the schedule kept firing on B: {on_b:?}");
    for w in on_b.windows(2) {
        assert_eq!(
            w[1] - w[0],
            interval,
            "B's points follow one another: {on_b:?}"
        );
    }
    let (overlaps, live): (i64, i64) = {
        let row = client
            .query_one(
                "SELECT COALESCE(SUM(overlap_count), 0)::bigint, COUNT(*) FROM tickstep_schedules",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(live, 1, "the schedule is live");
    assert_eq!(overlaps, 0, "no point dropped behind A's dead firing");
    eprintln!(
        "job node failover: B first fired {} ms after the kill; committed {} points on A, {} on B",
        first_start.saturating_sub(killed_at),
        all.len() - on_b.len(),
        on_b.len()
    );
}

/// docs/runtime.md §6.7: with `rerun_interrupted` on both nodes, a one-shot job the killed node
/// was running when it died runs again on the standby — the same schedule and point, told it is
/// a rerun — and completes there; without it, the standby would settle it as taken over and the
/// job would never finish. Bounded like the test above; outcomes only.
#[test]
fn a_job_running_on_a_killed_node_runs_again_on_the_standby_that_reruns_interrupted_firings() {
    let url = pg_or_skip!("job_node_rerun");
    let spawn = |role: &str| spawn_node(&url, role, true);
    let a = spawn("long");
    a.wait_for("A starts the long job", Duration::from_secs(30), |n| {
        !n.lines("@L ").is_empty()
    });
    let mut b = spawn("standby");
    b.wait_for("node B ready", Duration::from_secs(30), |n| {
        n.said("@READY")
    });
    let first = a.lines("@L ")[0].clone();
    a.signal("-KILL");
    drop(a);
    b.wait_for("B runs the job again", Duration::from_secs(30), |n| {
        !n.lines("@L ").is_empty()
    });
    let again = b.lines("@L ")[0].clone();
    assert_eq!(
        (again[0], again[1], again[2]),
        (first[0], first[1], 1),
        "the same schedule and point, as a rerun (A's run: {first:?})"
    );
    b.wait_for("the rerun returns", Duration::from_secs(30), |n| {
        !n.lines("@D ").is_empty()
    });
    b.signal("-INT");
    b.wait();
    assert!(b.said("@STOPPED"), "B stopped cleanly");
    assert_eq!(b.lines("@L ").len(), 1, "run again once");
    // Its outcome settled the one-shot: it retired, so its row is gone (a clean stop with the
    // job still running would have handed the row back instead, docs/schedules.md §11.26).
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let rows: i64 = client
        .query_one("SELECT COUNT(*) FROM tickstep_schedules", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 0, "the rerun completed the one-shot");
}
