//! The public handle: building it, and what an operator or a reader asks of it — counts,
//! `schedule_info` helpers, the held-back report, and the operator actions. (What a host's
//! driver loop calls — the tick, deadlines, reporting outcomes, the restart hand-back, the
//! store's news and flushing — is in [`tick`](super::tick); transactions open with
//! [`Schedules::begin`], in `txn.rs`.)
//!
//! # Operator actions
//!
//! Pause and resume, a firing now, a backfill of a past range (docs/schedules.md §9.4–§9.10).
//! Each action is checked whole before anything changes — the id names a live schedule this
//! engine holds, the caller is its owner or a wizard (the rule of `schedule_stop`,
//! docs/schedules.md §6.3), the arguments make sense — then applied to the entry and, for a
//! persistent schedule on a store, written synced before the call returns, as a stop is
//! (docs/schedules.md §2.4). If that write fails the entry is put back as it was, so an action
//! either happened durably or not at all.
//!
//! The state an action leaves (who paused and why, a trigger not fired yet, the rest of a
//! backfill) is the entry's `OpsRow`, stored with the cadence in the `ops` column; the firings a
//! trigger or a backfill asks for are planned by the tick from `OperatorQueue::due`, one per
//! schedule per tick, before the deadline heap is visited.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use tickstep_kernel::clock::Clock;

use super::config::Config;
use super::core::{Core, Shared};
use super::entry::Entry;
use super::storage::Loader;
use crate::info::unix_seconds;
use crate::perms::may_manage;
use crate::row_actions::{backfill_bounds, check_note};
use crate::store::{self, OpenPolicy};
use crate::store_rows::{ChangeSet, Durability};
use crate::{Error, ObjId, Runner, ScheduleId, World};

/// A handle to a schedule engine. Cheap to clone; every clone drives the same engine.
///
/// The engine is single-threaded: the handle is `!Send`, so it cannot leave the thread that drives
/// it. Dropping the last handle writes any cadence updates still pending (a clean shutdown loses
/// nothing; only a crash hands in-flight firings back as [interrupted](Schedules::interrupted)).
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// let engine = tickstep_schedules::Schedules::in_memory(
///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
/// needs_send(engine);
/// ```
///
/// A driver loop ticks it and sleeps until the next deadline:
///
/// ```
/// use std::time::Duration;
/// use tickstep_schedules::kernel::clock::{Clock, ManualClock};
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// use tickstep_schedules::{Options, Schedules};
///
/// let clock = ManualClock::new();
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// let bell = world.add_object(wiz);
/// world.add_verb(bell, "ring");
/// let runner = TestRunner::new();
/// let engine = Schedules::in_memory(clock.clone(), world, runner.clone(), Default::default());
///
/// let mut txn = engine.begin(wiz);
/// txn.schedule_every(bell, "ring", 1.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
///
/// for _ in 0..3 {
///     clock.sleep_until(engine.next_deadline().unwrap());
///     engine.tick().unwrap();
///     runner.finish_all(&engine);
/// }
/// assert_eq!(runner.started().len(), 3);
/// ```
#[derive(Clone)]
pub struct Schedules {
    pub(super) shared: Rc<Shared>,
}

impl Schedules {
    /// An engine with no store: nothing touches the disk, and `persist` is accepted but has no
    /// effect (everything vanishes with the engine).
    ///
    /// ```
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.live_count(), 0);
    /// ```
    pub fn in_memory(
        clock: impl Clock + 'static,
        world: impl World + 'static,
        runner: impl Runner + 'static,
        config: Config,
    ) -> Self {
        let seed = clock.unix_nanos();
        Self::from_parts(Core::new(config, seed, None), None, clock, world, runner)
    }

    /// Opens (or creates) the SQLite store at `path` and loads its schedules: ids, deadlines,
    /// counters and options intact; firings that were in flight listed by
    /// [`Schedules::interrupted`]. Catch-up for cadence points missed while the engine was down is
    /// applied before this returns, so `schedule_info` shows the true `next_run` and
    /// `missed_count` right away; the firings it keeps start at the first [`Schedules::tick`],
    /// whose group commit also writes the new counters to the file.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when SQLite cannot open, migrate or read the file;
    /// [`Error::SchemaTooNew`] when a newer build wrote it.
    ///
    /// ```
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let dir = tempfile::tempdir().unwrap();
    /// let engine = tickstep_schedules::Schedules::open(
    ///     dir.path().join("schedules.db"),
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default(),
    /// ).unwrap();
    /// assert!(engine.interrupted().is_empty());
    /// ```
    pub fn open(
        path: impl AsRef<Path>,
        clock: impl Clock + 'static,
        world: impl World + 'static,
        runner: impl Runner + 'static,
        config: Config,
    ) -> Result<Self, Error> {
        let policy = OpenPolicy {
            share_file: config.share_file,
            lease: config.lease,
            stop_poll: config.tick,
            namespace: config.namespace,
            node: config.node,
        };
        let mut store = store::open(path.as_ref(), policy)?;
        let seed = clock.unix_nanos();
        let mut core = Core::new(config, seed, None);
        let now = clock.unix_nanos();
        let mut loader = Loader::new(&mut core, now);
        let high_water = store.load(&mut loader)?;
        let behind = loader.finish(high_water);
        // Before catch-up: what is held back is neither fired, caught up nor written.
        let held_back = core.hold_back_unknown_targets(&world, config.namespace);
        core.store.backend = Some(store);
        core.catch_up_loaded(behind);
        core.apply_actions_at_open(now)?;
        // Tells a store that claims on its own thread where the engine's clock stands, so it
        // claims from now on whether or not the engine ticks (docs/schedules.md §11.40).
        core.apply_claims(now)?;
        Ok(Self::from_parts(core, held_back, clock, world, runner))
    }

    fn from_parts(
        core: Core,
        held_back: Option<crate::HeldBack>,
        clock: impl Clock + 'static,
        world: impl World + 'static,
        runner: impl Runner + 'static,
    ) -> Self {
        Schedules {
            shared: Rc::new(Shared {
                core: RefCell::new(core),
                world: Box::new(world),
                runner: Box::new(runner),
                clock: Box::new(clock),
                held_back,
            }),
        }
    }

    /// The engine's shared state, for a [`Txn`](crate::Txn).
    pub(crate) fn shared(&self) -> &Rc<Shared> {
        &self.shared
    }

    /// Another handle on the same engine (a transaction's, for the operator actions).
    pub(crate) fn from_shared(shared: &Rc<Shared>) -> Self {
        Schedules {
            shared: Rc::clone(shared),
        }
    }

    /// The number of live (not retired) schedules.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.live_count(), 0);
    /// ```
    pub fn live_count(&self) -> usize {
        let core = self.shared.core.borrow();
        core.table.len() - core.retention.len()
    }

    /// How many live schedules an operator has paused (docs/schedules.md §9.4): one pass over
    /// the table, for a view that shows it now and then (the dashboard's live view), not for
    /// every frame.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::Options;
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "v");
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.pause(wiz, id, "").unwrap();
    /// assert_eq!((engine.live_count(), engine.paused_count()), (2, 1));
    /// ```
    pub fn paused_count(&self) -> usize {
        let core = self.shared.core.borrow();
        core.table
            .iter()
            .filter(|e| e.is_live() && e.is_paused())
            .count()
    }

    /// What the engine has counted since it was built — firings started, points missed by
    /// reason, each start's lateness in buckets (docs/schedules.md §9.18) — for a host that
    /// charts them over time: a copy of a few hundred bytes, no pass over the table.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.tally().started, 0);
    /// ```
    pub fn tally(&self) -> crate::EngineTally {
        self.shared.core.borrow().metrics.tally()
    }

    /// The schedules held back at open because most of what the engine loaded names objects its
    /// world does not have (docs/schedules.md §15.6), or `None`: they are neither fired nor
    /// retired, and their rows stay as they are. A host says so at its start.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.held_back(), None);
    /// ```
    pub fn held_back(&self) -> Option<crate::HeldBack> {
        self.shared.held_back.clone()
    }

    /// The next `count` fire times of schedule `id` (at most 1,000), nominal (before jitter),
    /// float Unix seconds: computed from its cadence, never stored (docs/schedules.md §9.8).
    /// `schedule_info` lists the first [`NEXT_RUNS_SHOWN`](crate::NEXT_RUNS_SHOWN); this is for more.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id that names nothing or a `count` over 1,000;
    /// [`Error::Perm`] when `perms` is neither the owner nor a wizard (as `schedule_info`).
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "v");
    /// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let t0 = engine.now_unix_seconds();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let next = engine.next_runs(wiz, id, 20).unwrap();
    /// assert_eq!((next.len(), next[19]), (20, t0 + 1200.0));
    /// ```
    pub fn next_runs(&self, perms: ObjId, id: ScheduleId, count: usize) -> Result<Vec<f64>, Error> {
        if count > MAX_NEXT_RUNS {
            return Err(Error::invalid(
                count,
                format!(
                    "next_runs lists at most {MAX_NEXT_RUNS} fire times (docs/schedules.md §9.8)"
                ),
            ));
        }
        let shared = &*self.shared;
        let now = shared.clock.unix_nanos();
        let unknown = || Error::invalid(id, "no such schedule");
        let owner = shared.lookup(id.get(), now).ok_or_else(unknown)?.owner;
        if !crate::perms::may_manage(shared.world(), perms, owner) {
            return Err(Error::perm(
                perms,
                id,
                "next_runs is for the schedule's owner or a wizard, as schedule_info",
            ));
        }
        let points = shared.upcoming(id.get(), now, count).ok_or_else(unknown)?;
        Ok(points.into_iter().map(unix_seconds).collect())
    }

    /// Every anonymous object (as the world's [`World::is_anonymous`](crate::World::is_anonymous)
    /// says) that a schedule keeps alive through its target, player, args, state or last fault
    /// value — live and retained retired entries alike. A host's garbage collector treats them as
    /// roots. Sorted, without duplicates.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules, Value};
    ///
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "poke");
    /// let anon = world.add_anonymous(wiz);
    /// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// txn.schedule_every(wiz, "poke", 5.0, vec![Value::Obj(anon)], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert_eq!(engine.anonymous_references(), vec![anon]);
    /// ```
    pub fn anonymous_references(&self) -> Vec<crate::ObjId> {
        let mut all: Vec<ObjId> = Vec::new();
        {
            let core = self.shared.core.borrow();
            for e in core.table.iter() {
                e.for_each_object(&mut |o| all.push(o));
            }
        }
        all.sort_unstable();
        all.dedup();
        // Asked with no borrow held: the world is host code.
        all.retain(|&o| self.shared.world.is_anonymous(o));
        all
    }

    /// The engine clock's wall time in float Unix seconds (MOO `ftime()`), handy for computing a
    /// `schedule_at` time.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let clock = ManualClock::starting_at_unix_nanos(1_500_000_000);
    /// let engine = tickstep_schedules::Schedules::in_memory(clock, TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.now_unix_seconds(), 1.5);
    /// ```
    pub fn now_unix_seconds(&self) -> f64 {
        unix_seconds(self.shared.clock.unix_nanos())
    }

    /// Loads `rows` as a store's load would, catch-up included (for the fuzz targets).
    #[cfg(feature = "fuzzing")]
    pub(crate) fn load_rows_for_fuzzing(&self, rows: Vec<crate::store_rows::ScheduleRow>) {
        let now = self.shared.clock.unix_nanos();
        let mut core = self.shared.core.borrow_mut();
        let mut loader = Loader::new(&mut core, now);
        for row in rows {
            crate::store_rows::RowSink::apply(&mut loader, row)
                .expect("applying a decoded row cannot fail");
        }
        let behind = loader.finish(0);
        core.catch_up_loaded(behind);
    }

    /// Builds every entry's `schedule_info` record (for the fuzz targets); their run counts'
    /// sum.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn schedules_info_for_fuzzing(&self) -> u64 {
        let now = self.shared.clock.unix_nanos();
        let core = self.shared.core.borrow();
        core.table
            .iter()
            .map(|e| super::view::schedule_info(e, &core.names.verbs, now).run_count)
            .fold(0, u64::wrapping_add)
    }

    /// `pause(id, note)`: stops `id` firing until [`Schedules::resume`], keeping its cadence;
    /// `schedule_info` shows who paused it (`perms`), when and `note` (docs/schedules.md §9.4,
    /// §9.5). Durable when it returns. Returns `false`, changing nothing, when it was paused
    /// already.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id that names no live schedule here, or a note longer than
    /// [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES) or holding a control character; [`Error::Perm`] when `perms` is
    /// neither the owner nor a wizard; the store's error when the write fails (nothing changed).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(clock.clone(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(engine.pause(wiz, id, "maintenance").unwrap());
    /// clock.advance(Duration::from_secs(5));
    /// assert_eq!(engine.tick().unwrap().started, 0);
    /// let info = engine.begin(wiz).schedule_info(id).unwrap();
    /// assert_eq!(info.pause.unwrap().note, "maintenance");
    /// ```
    pub fn pause(&self, perms: ObjId, id: ScheduleId, note: &str) -> Result<bool, Error> {
        check_note(note)?;
        self.act(perms, id, Action::Pause, |core, raw, now| {
            Ok(core
                .table
                .get_mut(raw)
                .is_some_and(|e| e.pause(perms, note, now)))
        })
    }

    /// `resume(id)`: undoes [`Schedules::pause`]. The cadence points that passed while paused
    /// go to the schedule's catch-up policy, every one of them (not only from the second, as
    /// after downtime); those it drops count in `missed_count` and `paused_missed`
    /// (docs/schedules.md §9.4). Durable when it returns. Returns `false`, changing nothing,
    /// when it was not paused.
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let engine = Schedules::in_memory(clock.clone(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 10.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.pause(wiz, id, "").unwrap();
    /// clock.advance(Duration::from_secs(35)); // points at 10, 20 and 30 pass
    /// assert!(engine.resume(wiz, id).unwrap());
    /// let info = engine.begin(wiz).schedule_info(id).unwrap();
    /// assert_eq!((info.missed_count, info.paused_missed), (3, 3)); // catchup "skip"
    /// assert!(!engine.resume(wiz, id).unwrap());
    /// ```
    pub fn resume(&self, perms: ObjId, id: ScheduleId) -> Result<bool, Error> {
        self.act(perms, id, Action::Resume, |core, raw, now| {
            Ok(core.resume_entry(raw, now))
        })
    }

    /// `trigger_now(id)`: one firing at the next tick, serving now, under the schedule's
    /// overlap policy; the cadence is left alone (docs/schedules.md §9.6). A paused schedule
    /// fires too. Durable when it returns: a restart before the tick still fires it, once.
    /// Returns `false`, changing nothing, when a trigger was already waiting.
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`], without the note.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(ManualClock::new(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 3600.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(engine.trigger_now(wiz, id).unwrap());
    /// assert_eq!(engine.tick().unwrap().started, 1);
    /// ```
    pub fn trigger_now(&self, perms: ObjId, id: ScheduleId) -> Result<bool, Error> {
        self.act(perms, id, Action::Trigger, |core, raw, _| {
            Ok(core.table.get_mut(raw).is_some_and(Entry::trigger))
        })
    }

    /// `backfill(id, from, to)`: fires the cadence points of a recurring schedule that fall in
    /// `[from, to]` (float Unix seconds, `to` not after now), oldest first, one per tick, each
    /// waiting for the previous firing unless `overlap = "concurrent"`, each exactly once, also
    /// across a restart (docs/schedules.md §9.7). At most [`MAX_CATCHUP_FIRINGS`](crate::MAX_CATCHUP_FIRINGS) points, the
    /// bound of catch-up. Returns how many points it will fire. Durable when it returns.
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`], and [`Error::InvalidArg`] for a one-shot, a bound that is not a
    /// finite time, `from > to`, `to` later than now, a range holding no cadence point or more
    /// than [`MAX_CATCHUP_FIRINGS`](crate::MAX_CATCHUP_FIRINGS), or a backfill of the schedule still under way. Nothing
    /// changes on error.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let engine = Schedules::in_memory(clock.clone(), world, TestRunner::new(), Default::default());
    /// let t0 = engine.now_unix_seconds();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// clock.advance(Duration::from_secs(600));
    /// // The cadence points are t0 + 60 k: three of them lie in [t0 + 100, t0 + 280].
    /// assert_eq!(engine.backfill(wiz, id, t0 + 100.0, t0 + 280.0).unwrap(), 3);
    /// assert_eq!(engine.backfill(wiz, id, t0 + 700.0, t0 + 800.0).unwrap_err().code(), "E_INVARG");
    /// ```
    pub fn backfill(&self, perms: ObjId, id: ScheduleId, from: f64, to: f64) -> Result<u64, Error> {
        let now = self.shared.clock.unix_nanos();
        let (from_ns, to_ns) = backfill_bounds(from, to, now)?;
        self.act(perms, id, Action::Backfill, |core, raw, _| {
            match core.table.get_mut(raw) {
                Some(e) => e.backfill((from_ns, to_ns), (from, to)),
                None => Err(Error::invalid(
                    id,
                    "no such schedule (docs/schedules.md §9.9)",
                )),
            }
        })
    }

    /// The checks every action shares, then `apply` on the entry, then the synced write; on a
    /// failed write the entry is restored. `apply` validates before it changes anything.
    fn act<T>(
        &self,
        perms: ObjId,
        id: ScheduleId,
        action: Action,
        apply: impl FnOnce(&mut Core, u64, u64) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let shared = &*self.shared;
        let raw = id.get();
        let now = shared.clock.unix_nanos();
        let unknown = || {
            Error::invalid(
                id,
                format!(
                    "{} needs a live schedule: no such schedule (docs/schedules.md §9.9)",
                    action.name()
                ),
            )
        };
        let summary = shared.lookup(raw, now).ok_or_else(unknown)?;
        // Host code: asked with no engine borrow held (docs/schedules.md §6.4).
        if !may_manage(shared.world(), perms, summary.owner) {
            return Err(Error::perm(
                perms,
                id,
                format!(
                    "{} is for the schedule's owner or a wizard, as schedule_stop (docs/schedules.md §6.3, §9.9)",
                    action.name()
                ),
            ));
        }
        if !summary.live {
            return Err(Error::invalid(
                id,
                format!(
                    "{} needs a live schedule: this one retired (docs/schedules.md §9.9)",
                    action.name()
                ),
            ));
        }
        let mut core = shared.core.borrow_mut();
        let Some(before) = core.table.get(raw).cloned() else {
            return Err(Error::invalid(
                id,
                format!(
                    "{} acts on the node that holds the schedule; this one does not (docs/schedules.md §9.9)",
                    action.name()
                ),
            ));
        };
        let answer = apply(&mut core, raw, now)?;
        let after = core.table.get(raw).expect("apply keeps the entry");
        if after.persist && core.store.backend.is_some() {
            let mut changes = ChangeSet {
                updates: vec![(raw, after.cadence())],
                ..ChangeSet::default()
            };
            let store = core.store.backend.as_mut().expect("checked above");
            if let Err(error) = store.commit(&mut changes, Durability::Synced) {
                core.table.restore(before);
                return Err(error);
            }
        }
        if core
            .table
            .get(raw)
            .is_some_and(super::entry::Entry::has_operator_firings)
        {
            core.operator.want_pass(raw, now);
        }
        Ok(answer)
    }
}

/// The most fire times [`Schedules::next_runs`] lists (docs/schedules.md §9.8).
const MAX_NEXT_RUNS: usize = 1000;

/// The operator actions, for error messages.
#[derive(Clone, Copy)]
enum Action {
    Pause,
    Resume,
    Trigger,
    Backfill,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Pause => "pause",
            Action::Resume => "resume",
            Action::Trigger => "trigger_now",
            Action::Backfill => "backfill",
        }
    }
}
