//! The public handle: construction, transactions, deadlines, and the restart hand-back.
//! (Ticking is in [`tick`](super::tick), reporting in [`outcome`](super::outcome), read-only
//! answers in [`view`](super::view).)

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::{Clock, Instant};

use super::config::Config;
use super::core::{Core, Shared};
use super::storage::Loader;
use crate::store::{self, OpenPolicy};
use crate::{Error, InFlight, RunId, Runner, Value, World};

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
        Self::from_parts(Core::new(config, seed, None), clock, world, runner)
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
        core.held_back = core.hold_back_unknown_targets(&world, config.namespace);
        core.store = Some(store);
        core.catch_up_loaded(behind);
        core.apply_actions_at_open(now)?;
        // Tells a store that claims on its own thread where the engine's clock stands, so it
        // claims from now on whether or not the engine ticks (docs/schedules.md §11.40).
        core.apply_claims(now)?;
        Ok(Self::from_parts(core, clock, world, runner))
    }

    fn from_parts(
        core: Core,
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
            }),
        }
    }

    /// The engine's shared state, for a [`Txn`](crate::Txn).
    /// Another handle on the same engine (a transaction's, for the operator actions).
    pub(crate) fn from_shared(shared: &Rc<Shared>) -> Self {
        Schedules {
            shared: Rc::clone(shared),
        }
    }

    pub(crate) fn shared(&self) -> &Rc<Shared> {
        &self.shared
    }

    /// The earliest deadline, as an instant on the engine's clock, so a driver can
    /// `sleep_until` it; `None` when nothing is armed. A deadline already past is now. Firings
    /// waiting for their cadence update to be durable make it one engine tick after the tick
    /// that planned them (docs/schedules.md §11.42), so a driver ticks again to start them.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.next_deadline(), None);
    /// ```
    pub fn next_deadline(&self) -> Option<Instant> {
        let at = self.next_deadline_unix_nanos()?;
        let clock = &self.shared.clock;
        let (now, wall) = (clock.now(), clock.unix_nanos());
        Some(now + Duration::from_nanos(at.saturating_sub(wall)))
    }

    /// The earliest deadline in Unix nanoseconds, or `None` when nothing is armed (or waits to
    /// start, as [`Schedules::next_deadline`] says).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.next_deadline_unix_nanos(), None);
    /// ```
    pub fn next_deadline_unix_nanos(&self) -> Option<u64> {
        let mut core = self.shared.core.borrow_mut();
        // Starts waiting for their update to be durable want a tick soon (docs/schedules.md §11.42).
        let waiting = core.pending_deadline();
        // A trigger or backfill wants the next tick too (docs/schedules.md §9.6, §9.7).
        let operator = core.operator_deadline();
        [core.table.next_deadline(), waiting, operator]
            .into_iter()
            .flatten()
            .min()
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
        core.table.len() - core.retired.len()
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

    /// Firings that were in flight when the store was last saved and that the host has neither
    /// reattached nor abandoned yet.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(engine.interrupted().is_empty());
    /// ```
    pub fn interrupted(&self) -> Vec<InFlight> {
        self.shared.core.borrow().interrupted.clone()
    }

    /// Keeps a restored in-flight firing as its schedule's running firing; its outcome is reported
    /// with [`Schedules::report`] as usual. Returns whether `run` was awaiting a decision.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(!engine.reattach(tickstep_schedules::RunId(1)));
    /// ```
    pub fn reattach(&self, run: RunId) -> bool {
        let mut core = self.shared.core.borrow_mut();
        let before = core.interrupted.len();
        core.interrupted.retain(|f| f.run != run);
        core.interrupted.len() != before
    }

    /// Gives up on a restored in-flight firing: it settles as a fault of kind
    /// [`Interrupted`](crate::FaultKind::Interrupted), value `"interrupted by restart"`.
    /// Returns whether `run` was awaiting a decision.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(!engine.abandon(tickstep_schedules::RunId(1)));
    /// ```
    pub fn abandon(&self, run: RunId) -> bool {
        if !self.reattach(run) {
            return false;
        }
        self.report(
            run,
            crate::Outcome::Fault {
                kind: crate::FaultKind::Interrupted,
                value: Value::from("interrupted by restart"),
            },
        );
        true
    }

    /// The schedules an operator stopped from outside the engine (with
    /// [`Inspector::stop`](crate::Inspector::stop), e.g. `tickstep schedules stop`) that this
    /// engine has dropped since the last call, oldest first. A tick polls the store for such stops
    /// before it fires anything, so a stopped schedule never fires after the tick that noticed it;
    /// this list lets a host say so.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "upkeep");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(),
    ///     Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "upkeep", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    ///
    /// Inspector::stop(&path, id).unwrap(); // as `tickstep schedules stop` does, from anywhere
    /// engine.tick().unwrap();
    /// assert_eq!(engine.take_operator_stops(), vec![id]);
    /// assert!(!engine.begin(wiz).schedule_valid(id));
    /// ```
    pub fn take_operator_stops(&self) -> Vec<crate::ScheduleId> {
        let mut core = self.shared.core.borrow_mut();
        core.operator_stopped
            .drain(..)
            .map(crate::ScheduleId::from_raw)
            .collect()
    }

    /// Registers `waker`, which the store calls from its own thread whenever it has left work
    /// for the engine's next tick: rows it claimed from another node (with the firings they
    /// bring, settled at that tick), schedules another node took over, operator stops
    /// (docs/schedules.md §11.40). A host whose engine has nothing due — and so no deadline to
    /// tick at — uses it to tick the engine soon after (the `tickstep` runtime does). Only a
    /// store that claims and polls on a thread of its own (`PostgreSQL`) calls it; with the
    /// `SQLite` store or none it is kept and never called. A later call replaces the waker.
    ///
    /// The waker must be cheap and must not call into the engine (it runs on the store's
    /// thread): set a flag, notify a task, wake a loop.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// let (tell, news) = std::sync::mpsc::channel::<()>();
    /// let tell = std::sync::Mutex::new(tell);
    /// engine.set_store_waker(std::sync::Arc::new(move || {
    ///     let _ = tell.lock().unwrap().send(());
    /// }));
    /// assert!(news.try_recv().is_err()); // an engine with no store never calls it
    /// ```
    pub fn set_store_waker(&self, waker: crate::StoreWaker) {
        let mut core = self.shared.core.borrow_mut();
        if let Some(store) = core.store.as_mut() {
            store.set_waker(waker);
        }
    }

    /// What this engine's store counted of claims and fencing since it opened: schedules
    /// claimed, late writes refused because another node took the row over, schedules dropped
    /// for that (docs/schedules.md §11.27). All zero without a shared `PostgreSQL` store.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.cluster_stats().refused_writes, 0);
    /// ```
    pub fn cluster_stats(&self) -> crate::ClusterStats {
        let core = self.shared.core.borrow();
        core.store
            .as_ref()
            .map_or_else(crate::ClusterStats::default, |store| store.cluster_stats())
    }

    /// Writes every pending cadence update to the store now (a tick does this itself), and waits
    /// until the store has written everything handed to it — with a store that writes behind
    /// (both stores do: docs/schedules.md §11.35, §11.15), past ticks' updates included.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] or [`Error::Database`] when the store fails; the updates stay pending for
    /// the next attempt.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// engine.flush().unwrap();
    /// ```
    pub fn flush(&self) -> Result<(), Error> {
        let mut core = self.shared.core.borrow_mut();
        core.group_commit()?;
        core.store.as_mut().map_or(Ok(()), |store| store.flush())
    }

    /// Waits until the store has written everything already handed to it, committing nothing
    /// new (unlike [`flush`](Schedules::flush), outcomes reported since the last tick stay
    /// pending). Both stores write past ticks' updates behind the tick (docs/schedules.md
    /// §11.35, §11.15) and this waits for them — what a reader of the database (an operator
    /// tool, a test) needs before it looks.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] for a write the store could not make (it stays queued and is retried).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// engine.tick().unwrap();
    /// engine.wait_for_writes().unwrap();
    /// ```
    pub fn wait_for_writes(&self) -> Result<(), Error> {
        let mut core = self.shared.core.borrow_mut();
        core.store.as_mut().map_or(Ok(()), |store| store.flush())
    }
}
