//! A proptest model test: random creates, stops, commits, rollbacks, time advances, outcomes and
//! (with a store) restarts that abandon whatever was in flight, checked after every step against a
//! small reference model.
//!
//! The model is written for obviousness, not speed: a `BTreeMap` of schedules, cadence points
//! walked one at a time (the engine computes them arithmetically), a linear scan for due work
//! (the engine uses a lazily-cleaned heap), and no transactions or storage at all. Every step
//! compares each schedule's observable state — validity, run/fault/missed/overlap counters,
//! consecutive faults, next deadline, running firings — and each tick's set of firings.

mod common;

use std::collections::BTreeMap;

use common::Host;
use common::stores::{self, Store};
use proptest::prelude::*;
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{Catchup, FaultKind, Options, Outcome, Overlap, ScheduleId, Value};

const SEC: u64 = 1_000_000_000;
const RETENTION: u64 = 60 * SEC;

#[derive(Clone, Debug)]
enum Op {
    CreateEvery {
        secs: u64,
        overlap: u8,
        catchup: u8,
        max_faults: u32,
        commit: bool,
    },
    CreateAt {
        in_secs: u64,
        commit: bool,
    },
    Stop {
        pick: usize,
        commit: bool,
    },
    Advance {
        half_secs: u64,
    },
    Finish {
        pick: usize,
        outcome: u8,
    },
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1..5u64, 0..3u8, 0..3u8, 0..4u32, prop::bool::weighted(0.8)).prop_map(
            |(secs, overlap, catchup, max_faults, commit)| Op::CreateEvery { secs, overlap, catchup, max_faults, commit }
        ),
        1 => (0..6u64, prop::bool::weighted(0.8)).prop_map(|(in_secs, commit)| Op::CreateAt { in_secs, commit }),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(pick, commit)| Op::Stop { pick, commit }),
        6 => (1..14u64).prop_map(|half_secs| Op::Advance { half_secs }),
        5 => (any::<usize>(), 0..6u8).prop_map(|(pick, outcome)| Op::Finish { pick, outcome }),
        1 => Just(Op::Restart),
    ]
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    At,
    Every(u64),
}

#[derive(Clone, Debug)]
struct Sched {
    kind: Kind,
    overlap: Overlap,
    catchup: Catchup,
    max_faults: u32,
    next_run: u64,
    fire_at: Option<u64>,
    running: Vec<u64>,
    queued: Option<u64>,
    backlog: u64,
    run_count: u64,
    fault_count: u64,
    consecutive: u32,
    missed: u64,
    overlaps: u64,
    retired_at: Option<u64>,
}

#[derive(Default)]
struct Model {
    s: BTreeMap<u64, Sched>,
}

impl Model {
    fn live(&self) -> impl Iterator<Item = (&u64, &Sched)> {
        self.s.iter().filter(|(_, s)| s.retired_at.is_none())
    }

    /// One tick at `now`: the (schedule, nominal) pairs that fire.
    fn tick(&mut self, now: u64) -> Vec<(u64, u64)> {
        self.s
            .retain(|_, s| s.retired_at.is_none_or(|at| at + RETENTION > now));
        let mut due: Vec<(u64, u64)> = self
            .live()
            .filter_map(|(&id, s)| s.fire_at.filter(|&at| at <= now).map(|at| (at, id)))
            .collect();
        due.sort_unstable();
        let mut fired = Vec::new();
        for (_, id) in due {
            let s = self.s.get_mut(&id).unwrap();
            s.fire_at = None;
            if let Some(nominal) = visit(s, now) {
                s.run_count += 1;
                s.running.push(nominal);
                fired.push((id, nominal));
            }
        }
        fired.sort_unstable();
        fired
    }

    /// Loading after a restart: a recurring schedule whose firing was in flight gets catch-up for
    /// the points that passed, waiting behind the restored firing; an idle one that missed two or
    /// more points gets its catch-up at open too (one passed point is an ordinary late firing,
    /// unless the schedule was catching up: that catch-up starts afresh).
    fn restore(&mut self, now: u64) {
        for s in self.s.values_mut() {
            let Kind::Every(i) = s.kind else { continue };
            let mut n = 0;
            if s.running.is_empty() {
                let Some(due) = s.fire_at.map(|at| at.max(s.next_run)) else {
                    continue;
                };
                if s.queued.is_some() || due > now {
                    continue;
                }
                while due + n * i <= now {
                    n += 1;
                }
                if n < 2 && s.backlog == 0 {
                    continue;
                }
            } else {
                if s.next_run > now {
                    continue;
                }
                while s.next_run + n * i <= now {
                    n += 1;
                }
            }
            let (first, firings) = match s.catchup {
                Catchup::Skip => (n, 0),
                Catchup::Once => (n - 1, 1),
                Catchup::All => (n - n.min(1000), 1000),
            };
            s.missed += first;
            s.next_run += first * i;
            s.backlog = firings;
            s.fire_at = Some(s.next_run);
        }
    }

    /// An outcome: applied to a live schedule; ignored for a retired one, whose firing has
    /// nevertheless ended (docs/schedules.md §7.9).
    fn settle(&mut self, id: u64, nominal: u64, outcome: u8, now: u64) -> bool {
        let Some(s) = self.s.get_mut(&id) else {
            return false;
        };
        let pos = s.running.iter().position(|&n| n == nominal).unwrap();
        s.running.remove(pos);
        if s.retired_at.is_some() {
            return false;
        }
        if outcome < 4 {
            s.consecutive = 0;
            let delay = u64::from(outcome) * SEC;
            if s.kind == Kind::At {
                if delay > 0 {
                    s.next_run = now + delay;
                    s.fire_at = Some(s.next_run);
                } else {
                    s.retired_at = Some(now);
                }
            }
        } else {
            s.fault_count += 1;
            s.consecutive += 1;
            if (s.max_faults > 0 && s.consecutive >= s.max_faults) || s.kind == Kind::At {
                s.retired_at = Some(now);
            }
        }
        // The firing ended: what waits behind it starts; a catch-up with no point due is over.
        if s.retired_at.is_none() && s.running.is_empty() {
            if s.queued.is_some() || (s.backlog > 0 && s.next_run <= now) {
                s.fire_at = Some(now);
            } else if s.backlog > 0 {
                s.backlog = 0;
            }
        }
        true
    }
}

/// The model's reading of engine/cadence.rs, one point at a time.
fn visit(s: &mut Sched, now: u64) -> Option<u64> {
    let Kind::Every(i) = s.kind else {
        return Some(s.next_run);
    };
    let running = !s.running.is_empty();
    if running && s.overlap != Overlap::Concurrent {
        if s.backlog > 0 {
            return None;
        }
        loop {
            if s.overlap == Overlap::Queue && s.queued.is_none() {
                s.queued = Some(s.next_run);
            } else {
                s.overlaps += 1;
            }
            s.next_run += i;
            if s.next_run > now {
                break;
            }
        }
        s.fire_at = Some(s.next_run);
        return None;
    }
    if !running && let Some(q) = s.queued.take() {
        s.fire_at = Some(s.next_run);
        return Some(q);
    }
    if s.backlog > 0 {
        return Some(catch_up_step(s, i, now));
    }
    let mut points = vec![s.next_run];
    while points.last().unwrap() + i <= now {
        points.push(points.last().unwrap() + i);
    }
    let n = points.len() as u64;
    let policy = if n == 1 {
        Catchup::Once
    } else if running {
        Catchup::All
    } else {
        s.catchup
    };
    let first = match policy {
        Catchup::Skip => None,
        Catchup::Once => Some(n - 1),
        Catchup::All => Some(n - n.min(1000)),
    };
    let dropped = first.unwrap_or(n);
    if running {
        s.overlaps += dropped;
    } else {
        s.missed += dropped;
    }
    match (first, policy) {
        (None, _) => {
            s.next_run = points[points.len() - 1] + i;
            s.fire_at = Some(s.next_run);
            None
        }
        (Some(f), Catchup::All) => {
            // A catch-up: 1,000 firings in all, from the oldest kept point.
            s.next_run = points[f as usize];
            s.backlog = 1000;
            Some(catch_up_step(s, i, now))
        }
        (Some(f), _) => {
            let nominal = points[f as usize];
            s.next_run = nominal + i;
            s.fire_at = Some(s.next_run);
            Some(nominal)
        }
    }
}

/// The next point of a catch-up fires; the one after it is due at the next tick while the
/// catch-up may fire more, and points coming due meanwhile join it. Caught up, it lasts until
/// its firing ends (`settle`), except under `concurrent`, which waits for no firing.
fn catch_up_step(s: &mut Sched, i: u64, now: u64) -> u64 {
    let nominal = s.next_run;
    s.next_run += i;
    s.backlog -= 1;
    if s.backlog > 0 && s.next_run > now && s.overlap == Overlap::Concurrent {
        s.backlog = 0;
    }
    s.fire_at = Some(s.next_run);
    nominal
}

fn check(h: &Host, m: &Model, step: usize) {
    let now = h.clock.unix_nanos();
    assert_eq!(
        h.engine.live_count(),
        m.live().count(),
        "step {step}: live count"
    );
    let wiz = h.engine.begin(h.wiz);
    for (&id, s) in &m.s {
        let sid = ScheduleId::from_raw(id);
        let live = s.retired_at.is_none();
        assert_eq!(wiz.schedule_valid(sid), live, "step {step}: valid {id}");
        if s.retired_at.is_some_and(|at| at + RETENTION <= now) {
            continue;
        }
        let info = wiz.schedule_info(sid).unwrap();
        let got = (
            info.retired,
            info.run_count,
            info.fault_count,
            info.consecutive_faults,
            info.missed_count,
            info.overlap_count,
            info.running_task.is_some(),
        );
        let want = (
            !live,
            s.run_count,
            s.fault_count,
            s.consecutive,
            s.missed,
            s.overlaps,
            !s.running.is_empty(),
        );
        assert_eq!(got, want, "step {step}: schedule {id} {s:?}");
        if live {
            let next = s.fire_at.map_or(0.0, |n| n as f64 / 1e9);
            assert!(
                (info.next_run - next).abs() < 1e-6,
                "step {step}: next_run of {id}: {} vs {next}",
                info.next_run
            );
        }
    }
}

/// The engine under test, the model, and the firings not yet finished.
struct Sim {
    h: Host,
    m: Model,
    /// (run id, schedule, nominal) of firings not yet finished.
    runs: Vec<(tickstep_schedules::RunId, u64, u64)>,
    last_id: u64,
    path: Option<std::path::PathBuf>,
}

impl Sim {
    fn create(&mut self, every: Option<(u64, Overlap, Catchup, u32)>, in_secs: u64, commit: bool) {
        let now = self.h.clock.unix_nanos();
        let h = &self.h;
        let mut txn = h.engine.begin(h.prog);
        let (id, sched) = if let Some((secs, overlap, catchup, max_faults)) = every {
            let options = Options::new()
                .overlap(overlap)
                .catchup(catchup)
                .max_faults(max_faults);
            let id = txn
                .schedule_every(h.room, "tick", secs as f64, vec![], options)
                .unwrap();
            let first = now + secs * SEC;
            let kind = Kind::Every(secs * SEC);
            (id, new_sched(kind, overlap, catchup, max_faults, first))
        } else {
            let when = (now + in_secs * SEC) as f64 / 1e9;
            let id = txn
                .schedule_at(h.room, "tick", when, vec![], Options::new())
                .unwrap();
            // `when` went through f64 seconds: the engine rounds to whole nanoseconds.
            let first = (when * 1e9).round() as u64;
            (
                id,
                new_sched(Kind::At, Overlap::Skip, Catchup::Skip, 50, first),
            )
        };
        assert!(id.get() > self.last_id, "ids only go up");
        self.last_id = id.get();
        if commit {
            txn.commit().unwrap();
            self.m.s.insert(id.get(), sched);
        }
    }

    fn stop(&mut self, pick: usize, commit: bool) {
        let live: Vec<u64> = self.m.live().map(|(&id, _)| id).collect();
        if live.is_empty() {
            return;
        }
        let id = live[pick % live.len()];
        let mut txn = self.h.engine.begin(self.h.prog);
        assert!(txn.schedule_stop(ScheduleId::from_raw(id)).unwrap());
        if commit {
            txn.commit().unwrap();
            self.m.s.remove(&id);
        }
    }

    fn advance(&mut self, half_secs: u64, step: usize) {
        let h = &self.h;
        h.clock
            .advance(std::time::Duration::from_millis(500 * half_secs));
        let now = h.clock.unix_nanos();
        let before = h.runner.started().len();
        h.engine.tick().unwrap();
        let mut fired = Vec::new();
        for (run, f) in &h.runner.started()[before..] {
            self.runs
                .push((*run, f.schedule.get(), f.nominal_unix_nanos));
            fired.push((f.schedule.get(), f.nominal_unix_nanos));
        }
        fired.sort_unstable();
        assert_eq!(fired, self.m.tick(now), "step {step}: firings at {now}");
    }

    fn finish(&mut self, pick: usize, outcome: u8, step: usize) {
        if self.runs.is_empty() {
            return;
        }
        let now = self.h.clock.unix_nanos();
        let (run, id, nominal) = self.runs.swap_remove(pick % self.runs.len());
        let engine_outcome = if outcome < 4 {
            Outcome::Returned(Value::Int(i64::from(outcome)))
        } else {
            Outcome::Fault {
                kind: FaultKind::Error,
                value: Value::Int(0),
            }
        };
        let applied = self.h.runner.finish(&self.h.engine, run, engine_outcome);
        assert_eq!(
            applied,
            self.m.settle(id, nominal, outcome, now),
            "step {step}: report"
        );
    }

    /// Restarts the engine on the same file, then abandons every firing it hands back as
    /// interrupted (as a host whose tasks did not survive would).
    fn restart(&mut self, step: usize) {
        let Some(path) = self.path.clone() else {
            return;
        };
        let wall = self.h.clock.unix_nanos();
        // A clean shutdown: what the old engine holds reaches the store before the new one reads
        // it, and the old engine is gone first (on PostgreSQL it hands its rows back as it closes,
        // docs/schedules.md §11.26; a node still open keeps them).
        self.h.engine.flush().unwrap();
        drop(std::mem::replace(&mut self.h, Host::new()));
        self.h = Host::open(&path, ManualClock::starting_at_unix_nanos(wall));
        self.m.s.retain(|_, s| s.retired_at.is_none()); // retired entries are not saved
        self.m.restore(wall);
        // Handed back: exactly the firings of schedules that were live (and so saved).
        let mut handed_back: Vec<u64> = self
            .h
            .engine
            .interrupted()
            .iter()
            .map(|f| f.run.0)
            .collect();
        let mut expected: Vec<u64> = self
            .runs
            .iter()
            .filter(|(_, id, _)| self.m.s.get(id).is_some_and(|s| s.retired_at.is_none()))
            .map(|(run, _, _)| run.0)
            .collect();
        handed_back.sort_unstable();
        expected.sort_unstable();
        assert_eq!(handed_back, expected, "step {step}: interrupted firings");
        for (run, id, nominal) in std::mem::take(&mut self.runs) {
            assert_eq!(
                self.h.engine.abandon(run),
                expected.contains(&run.0),
                "step {step}"
            );
            self.m.settle(id, nominal, 4, wall);
        }
    }
}

fn run(ops: &[Op], store: &Store) {
    let with_store = store.kind() != stores::Kind::Memory;
    let h = Host::on(store);
    let mut sim = Sim {
        h,
        m: Model::default(),
        runs: Vec::new(),
        last_id: 0,
        path: with_store.then(|| store.path().to_path_buf()),
    };
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::CreateEvery {
                secs,
                overlap,
                catchup,
                max_faults,
                commit,
            } => {
                let overlap =
                    [Overlap::Skip, Overlap::Queue, Overlap::Concurrent][overlap as usize];
                let catchup = [Catchup::Skip, Catchup::Once, Catchup::All][catchup as usize];
                sim.create(Some((secs, overlap, catchup, max_faults)), 0, commit);
            }
            Op::CreateAt { in_secs, commit } => sim.create(None, in_secs, commit),
            Op::Stop { pick, commit } => sim.stop(pick, commit),
            Op::Advance { half_secs } => sim.advance(half_secs, step),
            Op::Finish { pick, outcome } => sim.finish(pick, outcome, step),
            Op::Restart => sim.restart(step),
        }
        check(&sim.h, &sim.m, step);
    }
}

fn new_sched(kind: Kind, overlap: Overlap, catchup: Catchup, max_faults: u32, first: u64) -> Sched {
    Sched {
        kind,
        overlap,
        catchup,
        max_faults,
        next_run: first,
        fire_at: Some(first),
        running: Vec::new(),
        queued: None,
        backlog: 0,
        run_count: 0,
        fault_count: 0,
        consecutive: 0,
        missed: 0,
        overlaps: 0,
        retired_at: None,
    }
}

/// `PROPTEST_CASES` when set (a long soak: `PROPTEST_CASES=2000 cargo test --test model`), else
/// the test's own `default` (a literal `cases` in the config would override the variable).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn the_in_memory_engine_matches_the_reference_model(ops in prop::collection::vec(op(), 1..120)) {
        run(&ops, &Store::memory());
    }
}

proptest! {
    // Each case fsyncs real SQLite commits: fewer, shorter cases.
    #![proptest_config(ProptestConfig { cases: cases(64), ..ProptestConfig::default() })]

    #[test]
    fn the_sqlite_backed_engine_matches_the_reference_model_across_restarts(ops in prop::collection::vec(op(), 1..80)) {
        run(&ops, &Store::sqlite());
    }
}

proptest! {
    // Each case is a fresh database on the throwaway server: fewer cases still.
    #![proptest_config(ProptestConfig { cases: cases(16), ..ProptestConfig::default() })]

    #[test]
    fn the_postgres_backed_engine_matches_the_reference_model_across_restarts(ops in prop::collection::vec(op(), 1..80)) {
        match common::pg::database("model") {
            Ok(url) => run(&ops, &Store::postgres(url)),
            Err(why) if !common::pg::required() => eprintln!("skipped: no PostgreSQL: {why}"),
            Err(why) => panic!("{}=1 but no PostgreSQL: {why}", common::pg::REQUIRE_VAR),
        }
    }
}

/// A case the SQLite model test found on 2026-12-01 (docs/schedules.md §7.9). At the restart, a
/// concurrent schedule with `max_faults` 1 (id 1) retires at the first of its three restored runs
/// abandoned; the other two were ignored but stayed in its retired entry. The new host numbers
/// its runs from 1 again, so schedule 2's runs took those ids, and when schedule 1's entry expired
/// (step 37) it took their records with it: run 11's outcome (step 43) was unknown.
#[test]
#[allow(clippy::unreadable_literal, clippy::too_many_lines)] // the ops as proptest printed them
fn a_run_started_after_a_restart_is_settled_by_its_outcome() {
    let ops = [
        Op::CreateEvery {
            secs: 4,
            overlap: 2,
            catchup: 0,
            max_faults: 1,
            commit: true,
        },
        Op::CreateEvery {
            secs: 1,
            overlap: 2,
            catchup: 1,
            max_faults: 3,
            commit: true,
        },
        Op::CreateEvery {
            secs: 4,
            overlap: 0,
            catchup: 0,
            max_faults: 2,
            commit: true,
        },
        Op::Advance { half_secs: 11 },
        Op::Advance { half_secs: 8 },
        Op::Finish {
            pick: 0,
            outcome: 0,
        },
        Op::CreateEvery {
            secs: 1,
            overlap: 0,
            catchup: 1,
            max_faults: 0,
            commit: true,
        },
        Op::Finish {
            pick: 11478361626215964150,
            outcome: 0,
        },
        Op::Advance { half_secs: 6 },
        Op::Finish {
            pick: 12041116620695564094,
            outcome: 3,
        },
        Op::Finish {
            pick: 1755874347950663577,
            outcome: 3,
        },
        Op::Finish {
            pick: 2216949966766753055,
            outcome: 2,
        },
        Op::Stop {
            pick: 6954161755953739531,
            commit: true,
        },
        Op::Advance { half_secs: 7 },
        Op::Restart,
        Op::Advance { half_secs: 5 },
        Op::Advance { half_secs: 6 },
        Op::Advance { half_secs: 1 },
        Op::Finish {
            pick: 15344623762920468678,
            outcome: 1,
        },
        Op::Advance { half_secs: 13 },
        Op::Advance { half_secs: 8 },
        Op::Advance { half_secs: 8 },
        Op::Advance { half_secs: 13 },
        Op::Advance { half_secs: 11 },
        Op::CreateEvery {
            secs: 4,
            overlap: 2,
            catchup: 0,
            max_faults: 3,
            commit: true,
        },
        Op::CreateEvery {
            secs: 4,
            overlap: 0,
            catchup: 0,
            max_faults: 3,
            commit: true,
        },
        Op::Advance { half_secs: 10 },
        Op::Advance { half_secs: 12 },
        Op::CreateEvery {
            secs: 4,
            overlap: 0,
            catchup: 2,
            max_faults: 2,
            commit: true,
        },
        Op::CreateAt {
            in_secs: 0,
            commit: true,
        },
        Op::Advance { half_secs: 10 },
        Op::CreateAt {
            in_secs: 4,
            commit: true,
        },
        Op::Advance { half_secs: 12 },
        Op::CreateEvery {
            secs: 1,
            overlap: 1,
            catchup: 2,
            max_faults: 0,
            commit: true,
        },
        Op::Advance { half_secs: 8 },
        Op::Finish {
            pick: 5893015360981563213,
            outcome: 3,
        },
        Op::Advance { half_secs: 1 },
        Op::Advance { half_secs: 5 },
        Op::Advance { half_secs: 7 },
        Op::Advance { half_secs: 4 },
        Op::Advance { half_secs: 3 },
        Op::Advance { half_secs: 5 },
        Op::Advance { half_secs: 8 },
        Op::Finish {
            pick: 10188467105199327289,
            outcome: 2,
        },
    ];
    run(&ops, &Store::sqlite());
}
