//! A served point is never fired again after a crash (docs/schedules.md §11.5, §11.42), and the
//! tick never waits for the disk to keep that promise.
//!
//! A child process (this test binary, re-executed) runs an engine on the REAL clock with several
//! recurring schedules, one per catch-up policy and interval. Its runner's side effect is a line
//! `F schedule point` appended to a file opened with `O_APPEND`, in one `write(2)` before `start`
//! returns (`common::effects`): a write the kernel accepted survives the process's `SIGKILL`, so
//! no `fsync` is needed for what this test kills — only a power cut would need one.
//! The parent `SIGKILL`s the child at random moments, 30 times, restarting it on the same store.
//! After each kill it reads the rows' running lists (the points in flight: handed back, or
//! settled as interrupted, at the next open).
//!
//! Asserted, per schedule, over every point from its first (one interval after creation) to the
//! durable `next_run` at the end:
//! * no point fired twice;
//! * no point fired that the store does not count as served (every fired point is before the
//!   durable `next_run`: its update was written before it started);
//! * no point lost: the points fired, plus those in flight at a kill that never fired, plus
//!   `missed_count` (catch-up's drops) and `overlap_count`, are exactly all the points;
//! * no tick waited for the store (`TickReport::waited_for_store`, counted by the child).
//!
//! Bounded: 30 kills of at most 0.45 s of running each, and a 20 s bound on every wait.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::effects::{self, EffectRunner};
use common::stores::{Kind, Store};
use tickstep_kernel::clock::SystemClock;
use tickstep_schedules::testkit::TestWorld;
use tickstep_schedules::{Catchup, Options, Schedules};

const CHILD_DB: &str = "TICKSTEP_SERVED_ONCE_DB";
const CHILD_EFFECTS: &str = "TICKSTEP_SERVED_ONCE_EFFECTS";
const KILLS: u64 = 30;
/// (interval in seconds, catch-up policy) of the schedules the first child creates.
const SCHEDULES: [(f64, Catchup); 6] = [
    (0.05, Catchup::Skip),
    (0.05, Catchup::Once),
    (0.05, Catchup::All),
    (0.12, Catchup::Skip),
    (0.12, Catchup::Once),
    (0.12, Catchup::All),
];

/// The child's body; a no-op unless the parent set the environment.
#[test]
fn served_once_child_process_entry() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "ring");
    let runner = EffectRunner::appending_to(std::env::var(CHILD_EFFECTS).unwrap());
    let mut config = common::config();
    config.lease = Duration::from_secs(2);
    let clock = SystemClock::new();
    let engine = Schedules::open(&db, clock.clone(), world, runner.clone(), config).expect("open");
    // As the runtime does at build: a firing in flight at the crash ran on the dead process.
    for f in engine.interrupted() {
        engine.abandon(f.run);
    }
    if engine.live_count() == 0 {
        let mut txn = engine.begin(wiz);
        for (interval, catchup) in SCHEDULES {
            txn.schedule_every(
                wiz,
                "ring",
                interval,
                vec![],
                Options::new().catchup(catchup),
            )
            .unwrap();
        }
        txn.commit().unwrap();
    }
    // Each firing ends at once: overlap never drops a point of a healthy run.
    effects::tick_until_killed(
        &engine,
        &clock,
        || runner.end_started(&engine),
        |report| {
            if report.waited_for_store {
                let mut out = std::io::stdout().lock();
                writeln!(out, "@WAITED").unwrap();
                out.flush().unwrap();
            }
        },
    );
}

/// One schedule's row at the end.
struct Row {
    interval: u64,
    created: u64,
    next_run: u64,
    dropped: u64,
}

fn final_rows(store: &Store) -> BTreeMap<u64, Row> {
    let ids = store.pairs("SELECT id, interval_ns FROM schedules");
    let mut rows = BTreeMap::new();
    for (id, interval) in ids {
        let one =
            |col: &str| store.count(&format!("SELECT {col} FROM schedules WHERE id = {id}")) as u64;
        rows.insert(
            id as u64,
            Row {
                interval: interval as u64,
                created: one("created_at"),
                next_run: one("next_run"),
                dropped: one("missed_count") + one("overlap_count"),
            },
        );
    }
    rows
}

/// Starts a child on `store`, waits until it runs, lets it run `run_for`, and SIGKILLs it.
/// Returns whether it said a tick waited for the store.
fn run_and_kill(exe: &Path, store: &Store, effects: &Path, run_for: Duration) -> bool {
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "served_once_child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, store.path())
        .env(CHILD_EFFECTS, effects)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut waited = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("@READY") {
                let _ = tx.send(());
            }
            waited |= line.contains("@WAITED");
        }
        waited
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the child opened the store");
    std::thread::sleep(run_for);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap()
}

on_both_stores! {
fn a_child_killed_30_times_fires_no_point_twice_and_loses_none_beyond_catch_up(store) {
    let _dropped = common::stores::DroppedAtEnd(store);
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects");
    let mut rng = fastrand::Rng::with_seed(20);
    let mut flight = BTreeSet::new();
    let mut waited = 0;
    for _ in 0..KILLS {
        let run_for = Duration::from_millis(rng.u64(30..450));
        if run_and_kill(&exe, store, &effects, run_for) {
            waited += 1;
        }
        if store.kind() == Kind::Postgres {
            // The killed node holds its rows until its lease runs out (docs/schedules.md
            // §11.26): end it, as waiting would, so the next child claims them at open.
            store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
        }
        flight.extend(effects::in_flight(store));
    }
    assert_eq!(waited, 0, "children whose tick waited for the store");

    let mut fired = effects::fired(&effects);
    let rows = final_rows(store);
    assert_eq!(rows.len(), SCHEDULES.len());
    let mut total = 0;
    for (id, row) in &rows {
        let mut points = fired.remove(id).unwrap_or_default();
        points.sort_unstable();
        let unique: BTreeSet<u64> = points.iter().copied().collect();
        let twice: Vec<_> = points.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
        assert!(twice.is_empty(), "schedule {id}: points fired twice: {twice:?}");
        // The first point is one interval after creation (docs/schedules.md §1.2), give or
        // take the microseconds between the two clock reads of a creation; the cadence is
        // `next_run` minus intervals.
        let all = (row.next_run - row.created - row.interval + row.interval / 2) / row.interval;
        let first = row.next_run - all * row.interval;
        for p in &points {
            assert!(
                *p >= first && *p < row.next_run && (p - first) % row.interval == 0,
                "schedule {id}: point {p} fired, but the store's next_run is {}",
                row.next_run
            );
        }
        let unfired = flight
            .iter()
            .filter(|(s, p)| s == id && !unique.contains(p))
            .count() as u64;
        assert_eq!(
            points.len() as u64 + unfired + row.dropped,
            all,
            "schedule {id}: {} fired, {unfired} in flight at a kill and never fired, {} dropped \
             by catch-up or overlap, of {all} points",
            points.len(),
            row.dropped
        );
        total += points.len();
    }
    assert!(fired.is_empty(), "firings of unknown schedules: {fired:?}");
    assert!(total > 100, "the children fired: {total}");
    eprintln!("served_once: {total} points fired across {KILLS} kills, none twice");
}
}
