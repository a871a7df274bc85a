//! A real `SIGKILL` in the middle of a DST fold, for calendar schedules (issue 21): no point of a
//! cron schedule fires twice, none is lost beyond what the rules account for, and under
//! `fold = both` each pass of the repeated hour fires once (docs/schedules.md §14.4, §14.13,
//! §11.5, §11.42).
//!
//! A child process (this test binary, re-executed) runs an engine on a [`ManualClock`] (virtual
//! time) over `America/New_York`'s 2026-11-01, whose 01:00–02:00 is shown twice (EDT, then EST).
//! Its schedules are calendars in that zone: `*/2 1 * * *` under fold `first`, `last` and
//! `both`, the fixed time `30 1 * * *` under `both`, and the wildcard `*/15 * * * *`, which is
//! never dead in a fold (docs/schedules.md §14.5). The child moves its clock only when the parent
//! says so, one step per line on its stdin, and prints the wall time it reached before each tick.
//! Its runner's side effect is a line `F schedule point` appended to an `O_APPEND` file in one
//! `write(2)` before `start` returns, so it survives the kill (`common::effects`, shared with
//! `served_once.rs`).
//!
//! The parent steps a child through virtual time and `SIGKILL`s it 20 times, each time while
//! it is still working on one to three steps it was sent, so the kill lands at a random point of
//! a tick. After each kill it reads the rows' running lists (the points in flight, settled as
//! interrupted at the next open and never fired again: docs/schedules.md §11.5) and restarts a
//! child on the same store from a wall time not before the last the dead one printed (every
//! fifth time 5–15 minutes later, so the catch-up rule of docs/schedules.md §14.13 has points to
//! count). A last child runs cleanly past the fold.
//!
//! Asserted per schedule, over every point its calendar defines from its creation to the durable
//! `next_run` at the end (computed with `Calendar::next_after`):
//! * no point fired twice, and every fired point is one of them — so `first` and `last` fire
//!   only their own pass of the fold — and before the durable `next_run` (served,
//!   docs/schedules.md §11.42);
//! * no point lost: fired, plus in flight at a kill and never fired, plus `missed_count` and
//!   `overlap_count`, are exactly all the points;
//! * under `both`, catch-up `all`: nothing missed, and both passes of every folded wall time
//!   fired (or were in flight at a kill).
//!
//! Bounded: 20 kills, every wait for the child at most 20 s; nothing asserts a duration.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use common::effects::{self, EffectRunner};
use common::stores::{Kind, Store};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::testkit::TestWorld;
use tickstep_schedules::{Calendar, Catchup, DstPolicy, FoldPolicy, GapPolicy, Options, Schedules};

const CHILD_DB: &str = "TICKSTEP_CRON_KILL_DB";
const CHILD_EFFECTS: &str = "TICKSTEP_CRON_KILL_EFFECTS";
const CHILD_WALL: &str = "TICKSTEP_CRON_KILL_WALL";

const S: u64 = 1_000_000_000;
const ZONE: &str = "America/New_York";
/// 2026-11-01 00:30 EDT: the first child creates the schedules here.
const START: u64 = 1_793_507_400;
/// 2026-11-01 01:00 EDT, 01:00 EST and 02:00 EST: the fold's two passes.
const FOLD_EDT: u64 = 1_793_509_200;
const FOLD_EST: u64 = 1_793_512_800;
const FOLD_END: u64 = 1_793_516_400;
/// 2026-11-01 03:00 EST: the last child runs to here.
const END: u64 = 1_793_520_000;
const KILLS: u64 = 20;
/// The bound on every wait for a child.
const PATIENCE: Duration = Duration::from_secs(20);

/// (expression, fold policy, catch-up) of the schedules the first child creates.
const SCHEDULES: [(&str, FoldPolicy, Catchup); 5] = [
    ("*/2 1 * * *", FoldPolicy::First, Catchup::Once),
    ("*/2 1 * * *", FoldPolicy::Last, Catchup::Skip),
    ("*/2 1 * * *", FoldPolicy::Both, Catchup::All),
    ("30 1 * * *", FoldPolicy::Both, Catchup::All),
    ("*/15 * * * *", FoldPolicy::First, Catchup::Once),
];

fn dst(fold: FoldPolicy) -> DstPolicy {
    DstPolicy {
        gap: GapPolicy::Shift,
        fold,
    }
}

/// The child's body; a no-op unless the parent set the environment. It reads commands on stdin:
/// `A seconds` (advance the clock, print `@T wall`, tick, end the firings it started, print
/// `@K`) and `E` (drain the writes and the firings they release, then return).
#[test]
fn cron_kill_child_process_entry() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let wall: u64 = std::env::var(CHILD_WALL).unwrap().parse().unwrap();
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "ring");
    let runner = EffectRunner::appending_to(std::env::var(CHILD_EFFECTS).unwrap());
    let clock = ManualClock::starting_at_unix_nanos(wall);
    let engine =
        Schedules::open(&db, clock.clone(), world, runner.clone(), common::config()).expect("open");
    // As the runtime does at build: a firing in flight at the kill ran on the dead process.
    for f in engine.interrupted() {
        engine.abandon(f.run);
    }
    if engine.live_count() == 0 {
        let mut txn = engine.begin(wiz);
        for (expr, fold, catchup) in SCHEDULES {
            // No fault limit: every kill leaves a fault (the abandoned firing).
            let options = Options::new()
                .dst_policy(dst(fold))
                .catchup(catchup)
                .max_faults(0);
            txn.schedule_cron(wiz, "ring", expr, ZONE, vec![], options)
                .unwrap();
        }
        txn.commit().unwrap();
    }
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        if let Some(secs) = line.strip_prefix("A ") {
            clock.advance(Duration::from_secs(secs.parse().unwrap()));
            // Said before the tick: the parent never restarts a child before a wall it ticked at.
            writeln!(out, "@T {}", clock.unix_nanos()).unwrap();
            out.flush().unwrap();
            engine.tick().unwrap();
            runner.end_started(&engine);
            writeln!(out, "@K").unwrap();
            out.flush().unwrap();
        } else if line == "E" {
            for _ in 0..3 {
                engine.tick().unwrap();
                engine.wait_for_writes().unwrap();
                runner.end_started(&engine);
            }
            return;
        }
    }
}

/// A child, its stdin, and its stdout's marked lines as they come.
struct ChildProcess {
    child: Child,
    stdin: ChildStdin,
    said: Receiver<String>,
}

impl ChildProcess {
    fn spawn(exe: &Path, store: &Store, effects: &Path, wall: u64) -> Self {
        let mut child = Command::new(exe)
            .args([
                "--exact",
                "cron_kill_child_process_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DB, store.path())
            .env(CHILD_EFFECTS, effects)
            .env(CHILD_WALL, wall.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, said) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // The harness may print its banner on the same line, hence the search.
                if let Some((_, fact)) = line.split_once('@') {
                    let _ = tx.send(fact.to_owned());
                }
            }
        });
        ChildProcess { child, stdin, said }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Reads what the child says until it acknowledges a step (`true`) or its stdout closes
    /// (`false`), noting every wall time it reached in `wall`.
    fn until_step_done(&self, wall: &mut u64) -> bool {
        loop {
            match self.said.recv_timeout(PATIENCE) {
                Ok(fact) if fact == "K" => return true,
                Ok(fact) => note_wall(&fact, wall),
                Err(RecvTimeoutError::Disconnected) => return false,
                Err(RecvTimeoutError::Timeout) => panic!("the child said nothing for {PATIENCE:?}"),
            }
        }
    }
}

fn note_wall(fact: &str, wall: &mut u64) {
    if let Some(t) = fact.strip_prefix("T ") {
        *wall = (*wall).max(t.parse().unwrap());
    }
}

/// Every point of `calendar` from `created` (exclusive) to `next_run` (exclusive).
fn points_between(calendar: &Calendar, created: u64, next_run: u64) -> Vec<u64> {
    let mut points = Vec::new();
    let mut at = created;
    while let Some(p) = calendar.next_after(at).filter(|&p| p < next_run) {
        points.push(p);
        at = p;
    }
    points
}

/// What the killed children left: the last wall time one reached, the points in flight at the
/// kills, and how many kills landed in the fold.
struct Kills {
    wall: u64,
    flight: BTreeSet<(u64, u64)>,
    in_fold: u32,
}

/// Steps children through virtual time from [`START`] and `SIGKILL`s each while it still works
/// on one to three steps, [`KILLS`] times; then a last child runs cleanly to [`END`].
fn kill_children_then_run_past_the_fold(exe: &Path, store: &Store, effects_file: &Path) -> Kills {
    let mut rng = fastrand::Rng::with_seed(21);
    let mut kills = Kills {
        wall: START * S,
        flight: BTreeSet::new(),
        in_fold: 0,
    };
    let wall = &mut kills.wall;
    for round in 0..KILLS {
        // Every fifth restart comes back minutes later: points pass while no one runs.
        if round % 5 == 4 {
            *wall += rng.u64(5..15) * 60 * S;
        }
        let mut child = ChildProcess::spawn(exe, store, effects_file, *wall);
        for _ in 0..rng.u64(1..12) {
            if *wall >= END * S {
                break;
            }
            child.send(&format!("A {}", rng.u64(10..90)));
            assert!(child.until_step_done(wall), "round {round}: the child died");
        }
        // The kill lands while the child works on these steps.
        for _ in 0..rng.u64(1..4) {
            child.send(&format!("A {}", rng.u64(10..90)));
        }
        child.child.kill().unwrap(); // SIGKILL
        child.child.wait().unwrap();
        while let Ok(fact) = child.said.recv_timeout(PATIENCE) {
            note_wall(&fact, wall);
        }
        if (FOLD_EDT * S..FOLD_END * S).contains(wall) {
            kills.in_fold += 1;
        }
        if store.kind() == Kind::Postgres {
            // The killed node holds its rows until its lease runs out (docs/schedules.md
            // §11.26): end it, as waiting would, so the next child claims them at open.
            store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
        }
        kills.flight.extend(effects::in_flight(store));
    }
    let mut child = ChildProcess::spawn(exe, store, effects_file, *wall);
    while *wall < END * S {
        child.send("A 60");
        assert!(child.until_step_done(wall), "the last child died");
    }
    child.send("E");
    while child.said.recv_timeout(PATIENCE).is_ok() {}
    assert!(
        child.child.wait().unwrap().success(),
        "the last child ended cleanly"
    );
    kills
}

/// Checks one schedule's firings (`fired`, in file order) against its calendar's points from
/// its creation to its durable `next_run`; returns how many it fired.
fn check_schedule(store: &Store, id: i64, spec: &str, fired: Vec<u64>, kills: &Kills) -> usize {
    let (expr, fold, catchup) = SCHEDULES
        .into_iter()
        .find(|(e, f, _)| spec == format!("{e}|shift {}", f.as_str()))
        .unwrap_or_else(|| panic!("schedule {id}: unknown calendar {spec}"));
    let label = format!("schedule {id} ({expr}, fold {fold}, catch-up {catchup:?})");
    let one =
        |col: &str| store.count(&format!("SELECT {col} FROM schedules WHERE id = {id}")) as u64;
    let calendar = Calendar::new(expr, ZONE, dst(fold)).unwrap();
    let next_run = one("next_run");
    let all = points_between(&calendar, one("created_at"), next_run);
    let dropped = one("missed_count") + one("overlap_count");
    let mut points = fired;
    points.sort_unstable();
    let unique: BTreeSet<u64> = points.iter().copied().collect();
    let twice: Vec<_> = points
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(twice.is_empty(), "{label}: points fired twice: {twice:?}");
    for p in &unique {
        assert!(
            all.contains(p),
            "{label}: point {p} fired, but it is not one of the calendar's points before the \
             store's next_run {next_run}"
        );
    }
    let lost: BTreeSet<u64> = kills
        .flight
        .iter()
        .filter(|&&(s, p)| s == id as u64 && !unique.contains(&p))
        .map(|&(_, p)| p)
        .collect();
    assert_eq!(
        points.len() + lost.len() + dropped as usize,
        all.len(),
        "{label}: {} fired, {} in flight at a kill and never fired, {dropped} dropped by \
         catch-up or overlap, of {} points",
        points.len(),
        lost.len(),
        all.len()
    );
    assert!(
        next_run >= END * S,
        "{label}: the cadence ran past the fold"
    );
    if fold == FoldPolicy::Both {
        assert_eq!(dropped, 0, "{label}: catch-up `all` drops nothing");
        // Each folded wall time is two points an hour apart, each served once.
        let first_pass: Vec<u64> = all
            .iter()
            .copied()
            .filter(|p| (FOLD_EDT * S..FOLD_EST * S).contains(p))
            .collect();
        assert!(
            !first_pass.is_empty(),
            "{label}: the calendar has points in the fold"
        );
        for p in first_pass {
            for pass in [p, p + 3_600 * S] {
                assert!(
                    unique.contains(&pass) || lost.contains(&pass),
                    "{label}: the pass at {pass} neither fired nor was in flight at a kill"
                );
            }
        }
    }
    eprintln!(
        "cron_kill {label}: {} fired, {} lost in flight, {dropped} dropped, of {}",
        points.len(),
        lost.len(),
        all.len()
    );
    points.len()
}

on_both_stores! {
fn a_child_killed_20_times_in_and_around_a_fold_fires_each_cron_point_once(store) {
    let _dropped = common::stores::DroppedAtEnd(store);
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects_file = dir.path().join("effects");
    let kills = kill_children_then_run_past_the_fold(&exe, store, &effects_file);
    let mut fired = effects::fired(&effects_file);
    let specs = store.texts("SELECT id, cron_expr || '|' || cron_dst FROM schedules");
    assert_eq!(specs.len(), SCHEDULES.len());
    let mut total = 0;
    for (id, spec) in specs {
        let points = fired.remove(&(id as u64)).unwrap_or_default();
        total += check_schedule(store, id, &spec, points, &kills);
    }
    assert!(fired.is_empty(), "firings of unknown schedules: {fired:?}");
    assert!(kills.in_fold >= 3, "kills in the fold: {}", kills.in_fold);
    assert!(total > 100, "the children fired: {total}");
    eprintln!(
        "cron_kill: {total} points fired across {KILLS} kills ({} in the fold)",
        kills.in_fold
    );
}
}
