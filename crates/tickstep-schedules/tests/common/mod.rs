//! A test host: a world with a wizard, two programmers and a room, a recording runner, a manual
//! clock, and short helpers so each test reads like the sentence it checks.
#![allow(dead_code, unreachable_pub)]

pub mod counters;
pub mod effects;
pub mod nodes;
pub mod pg;
pub mod stores;

use std::path::Path;
use std::time::Duration;

use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::testkit::{TestRunner, TestWorld};
use tickstep_schedules::{
    Config, Firing, ObjId, Options, Outcome, RunId, ScheduleId, ScheduleInfo, Schedules,
    TickReport, Value,
};

pub struct Host {
    pub clock: ManualClock,
    pub world: TestWorld,
    pub runner: TestRunner,
    pub engine: Schedules,
    pub wiz: ObjId,
    pub prog: ObjId,
    pub other: ObjId,
    /// Owned by `prog`, with a public verb "tick".
    pub room: ObjId,
}

/// The test kit's [`RealTimeClock`](tickstep_schedules::testkit::RealTimeClock): the test moves
/// the time; the engine behaves as on real time (docs/schedules.md §11.42).
pub use tickstep_schedules::testkit::RealTimeClock as RealTime;

pub fn config() -> Config {
    let mut c = Config::default();
    c.rng_seed = Some(42);
    c
}

impl Host {
    pub fn new() -> Self {
        Self::build(ManualClock::new(), config(), None)
    }

    pub fn with_config(config: Config) -> Self {
        Self::build(ManualClock::new(), config, None)
    }

    /// A host on `store` (in memory, a `SQLite` file or a `PostgreSQL` database).
    pub fn on(store: &stores::Store) -> Self {
        Self::on_with_config(store, config())
    }

    pub fn on_with_config(store: &stores::Store, config: Config) -> Self {
        match store.kind() {
            stores::Kind::Memory => Self::build(ManualClock::new(), config, None),
            _ => Self::build(ManualClock::new(), config, Some(store.path())),
        }
    }

    /// A `PostgreSQL` node on `store` whose lease is `lease` (real time: the database's clock). A
    /// test makes one node with a long lease, which [`Store::lapse_long_leases`] ends from
    /// outside, and one with a short lease, whose store thread claims often.
    ///
    /// [`Store::lapse_long_leases`]: stores::Store::lapse_long_leases
    pub fn with_lease(store: &stores::Store, lease: Duration) -> Self {
        let mut config = config();
        config.lease = lease;
        Self::on_with_config(store, config)
    }

    /// Flushes and ticks until this node holds `live` schedules: claims run on its store thread,
    /// on the real clock, and are applied at a tick. Bounded at 10 s of real time; the outcome
    /// is asserted, never how long it took.
    pub fn take_over(&self, live: usize) {
        let give_up = std::time::Instant::now() + Duration::from_secs(10);
        while self.engine.live_count() < live {
            assert!(
                std::time::Instant::now() < give_up,
                "the node took {live} schedules over within 10 s"
            );
            std::thread::sleep(Duration::from_millis(10));
            self.engine.flush().unwrap();
            self.tick();
        }
    }

    /// A host on `store` whose clock starts at `unix_nanos` (a date a test needs, such as the
    /// day before a DST change).
    pub fn on_at(store: &stores::Store, unix_nanos: u64) -> Self {
        let clock = ManualClock::starting_at_unix_nanos(unix_nanos);
        match store.kind() {
            stores::Kind::Memory => Self::build(clock, config(), None),
            _ => Self::build(clock, config(), Some(store.path())),
        }
    }

    pub fn open(path: &Path, clock: ManualClock) -> Self {
        Self::build(clock, config(), Some(path))
    }

    /// A host on `store` whose engine reads the manual clock through [`RealTime`]: it behaves
    /// as on real time (a start waits for the store's writer, docs/schedules.md §11.42) while
    /// the test moves the time.
    pub fn on_real_time(store: &stores::Store) -> Self {
        let clock = ManualClock::new();
        Self::build_with(clock.clone(), RealTime(clock), config(), Some(store.path()))
    }

    /// [`Host::on_real_time`] with a lease of `lease` (see [`Host::with_lease`]).
    pub fn on_real_time_with_lease(store: &stores::Store, lease: Duration) -> Self {
        let clock = ManualClock::new();
        let mut config = config();
        config.lease = lease;
        Self::build_with(clock.clone(), RealTime(clock), config, Some(store.path()))
    }

    /// A host on the store at `path` whose test clock is `clock` and whose engine reads
    /// `engine_clock` (the same time, seen through another [`Clock`], e.g. [`RealTime`]).
    pub fn open_with(path: &Path, clock: ManualClock, engine_clock: impl Clock + 'static) -> Self {
        Self::build_with(clock, engine_clock, config(), Some(path))
    }

    fn build(clock: ManualClock, config: Config, path: Option<&Path>) -> Self {
        Self::build_with(clock.clone(), clock, config, path)
    }

    fn build_with(
        clock: ManualClock,
        engine_clock: impl Clock + 'static,
        config: Config,
        path: Option<&Path>,
    ) -> Self {
        let world = TestWorld::new();
        let wiz = world.add_wizard();
        let prog = world.add_programmer();
        let other = world.add_programmer();
        let room = world.add_object(prog);
        world.add_verb(room, "tick");
        world.add_verb(prog, "tick");
        world.add_verb(other, "tick");
        let runner = TestRunner::new();
        let engine = match path {
            Some(p) => Schedules::open(p, engine_clock, world.clone(), runner.clone(), config)
                .expect("open store"),
            None => Schedules::in_memory(engine_clock, world.clone(), runner.clone(), config),
        };
        Host {
            clock,
            world,
            runner,
            engine,
            wiz,
            prog,
            other,
            room,
        }
    }

    /// Creates and commits `schedule_every(room, "tick", secs)` as `prog`.
    pub fn every(&self, secs: f64, options: Options) -> ScheduleId {
        let mut txn = self.engine.begin(self.prog);
        let id = txn
            .schedule_every(self.room, "tick", secs, vec![], options)
            .expect("create");
        txn.commit().expect("commit");
        id
    }

    /// Creates and commits `schedule_cron(room, "tick", expr, zone)` as `prog`.
    pub fn cron(&self, expr: &str, zone: &str, options: Options) -> ScheduleId {
        let mut txn = self.engine.begin(self.prog);
        let id = txn
            .schedule_cron(self.room, "tick", expr, zone, vec![], options)
            .expect("create");
        txn.commit().expect("commit");
        id
    }

    /// Creates and commits `schedule_at(room, "tick", now + secs)` as `prog`.
    pub fn at(&self, secs_from_now: f64, options: Options) -> ScheduleId {
        let mut txn = self.engine.begin(self.prog);
        let id = txn
            .schedule_at(
                self.room,
                "tick",
                self.now() + secs_from_now,
                vec![],
                options,
            )
            .expect("create");
        txn.commit().expect("commit");
        id
    }

    pub fn now(&self) -> f64 {
        self.clock.unix_nanos() as f64 / 1e9
    }

    pub fn advance(&self, secs: f64) {
        self.clock.advance(Duration::from_secs_f64(secs));
    }

    pub fn tick(&self) -> TickReport {
        self.engine.tick().expect("tick")
    }

    /// Advances `secs`, then ticks.
    pub fn after(&self, secs: f64) -> TickReport {
        self.advance(secs);
        self.tick()
    }

    pub fn info(&self, id: ScheduleId) -> ScheduleInfo {
        self.engine.begin(self.wiz).schedule_info(id).expect("info")
    }

    pub fn valid(&self, id: ScheduleId) -> bool {
        self.engine.begin(self.wiz).schedule_valid(id)
    }

    pub fn started(&self) -> Vec<(RunId, Firing)> {
        self.runner.started()
    }

    /// The nominal points (whole seconds after [`t0`]) the runner started for `id`, in order.
    pub fn points_started(&self, id: ScheduleId) -> Vec<u64> {
        let t0 = t0() as u64 * 1_000_000_000;
        self.started()
            .iter()
            .filter(|(_, f)| f.schedule == id)
            .map(|(_, f)| (f.nominal_unix_nanos - t0) / 1_000_000_000)
            .collect()
    }

    pub fn fired(&self) -> usize {
        self.runner.started().len()
    }

    pub fn last_run(&self) -> RunId {
        self.runner.started().last().expect("a firing").0
    }

    pub fn finish(&self, run: RunId, value: Value) -> bool {
        self.runner
            .finish(&self.engine, run, Outcome::Returned(value))
    }

    pub fn finish_all(&self) {
        self.runner.finish_all(&self.engine);
    }

    pub fn fault(&self, run: RunId) -> bool {
        self.runner.finish(
            &self.engine,
            run,
            Outcome::Fault {
                kind: tickstep_schedules::FaultKind::Error,
                value: Value::from("E_DIV"),
            },
        )
    }

    /// Unix seconds of the given firing's nominal deadline.
    pub fn nominal(&self, index: usize) -> f64 {
        self.runner.started()[index].1.nominal_unix_nanos as f64 / 1e9
    }
}

/// Seconds as float Unix time relative to the manual clock's default start.
/// Why opening the store at `location` fails, as a reporter prints it (the whole error chain);
/// panics if it opens.
pub fn open_refusal(location: &Path) -> String {
    let err = Schedules::open(
        location,
        ManualClock::new(),
        TestWorld::new(),
        TestRunner::new(),
        config(),
    )
    .err()
    .expect("the store is refused");
    tickstep_kernel::ErrorChain(&err).to_string()
}

/// Arguments with a nested map, for tests that check a schedule comes back exactly as created.
pub fn nested_args() -> Vec<Value> {
    vec![
        Value::from("arg"),
        Value::Map(vec![(Value::Int(1), Value::Float(2.5))]),
    ]
}

/// Every option set away from its default (player `player`), for the same tests.
pub fn unusual_options(player: ObjId) -> Options {
    Options::new()
        .catchup(tickstep_schedules::Catchup::Once)
        .overlap(tickstep_schedules::Overlap::Queue)
        .max_faults(7)
        .state(Value::Symbol("cursor".into()))
        .player(player)
        .jitter_seconds(0.25)
}

pub fn t0() -> f64 {
    ManualClock::DEFAULT_UNIX_NANOS as f64 / 1e9
}

pub fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}
