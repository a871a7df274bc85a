//! Criterion benches of the engine's hot paths (the side-by-side numbers are in
//! `tickstep-bench`'s `schedules` section).
//!
//! * `fire_1000_inmem`: one tick firing 1,000 due recurring schedules plus their 1,000 outcomes;
//! * `fire_1000_sqlite`: the same on a WAL store, group commit included;
//! * `create_commit_inmem`: one `schedule_every` and its commit, no store.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::OpenWorld;
use tickstep_schedules::testkit::CountingRunner;
use tickstep_schedules::{Config, ObjId, Options, Outcome, RunId, Schedules, Value};

const N: usize = 1000;

fn engine(store: Option<&std::path::Path>) -> (Schedules, ManualClock, CountingRunner) {
    let clock = ManualClock::new();
    let runner = CountingRunner::default();
    let mut config = Config::default();
    config.max_firings_per_tick = N;
    let engine = match store {
        Some(path) => {
            Schedules::open(path, clock.clone(), OpenWorld, runner.clone(), config).unwrap()
        }
        None => Schedules::in_memory(clock.clone(), OpenWorld, runner.clone(), config),
    };
    let mut txn = engine.begin(ObjId(1));
    for _ in 0..N {
        txn.schedule_every(ObjId(2), "tick", 1.0, vec![], Options::new())
            .unwrap();
    }
    txn.commit().unwrap();
    (engine, clock, runner)
}

fn fire(engine: &Schedules, clock: &ManualClock, runner: &CountingRunner, buf: &mut Vec<RunId>) {
    clock.advance(Duration::from_secs(1));
    black_box(engine.tick().unwrap());
    buf.clear();
    runner.drain_started_into(buf);
    for &run in buf.iter() {
        engine.report(run, Outcome::Returned(Value::Int(0)));
    }
}

fn benches(c: &mut Criterion) {
    let mut buf = Vec::with_capacity(N);
    let (e, clock, runner) = engine(None);
    c.bench_function("fire_1000_inmem", |b| {
        b.iter(|| fire(&e, &clock, &runner, &mut buf));
    });
    let dir = tempfile::tempdir().unwrap();
    let (e, clock, runner) = engine(Some(&dir.path().join("bench.db")));
    c.bench_function("fire_1000_sqlite", |b| {
        b.iter(|| fire(&e, &clock, &runner, &mut buf));
    });
    let (e, _, _) = engine(None);
    c.bench_function("create_commit_inmem", |b| {
        b.iter(|| {
            let mut txn = e.begin(ObjId(1));
            black_box(
                txn.schedule_every(ObjId(2), "tick", 1.0, vec![], Options::new())
                    .unwrap(),
            );
            txn.commit().unwrap();
        });
    });
}

criterion_group!(engine_benches, benches);
criterion_main!(engine_benches);
