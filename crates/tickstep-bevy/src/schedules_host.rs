//! The durable schedules' host inside a Bevy app: verbs as Rust code, firings as kernel tasks,
//! and the engine's tick on a kernel timer (docs/bevy.md §7).
//!
//! # The tick
//!
//! The engine is not ticked every frame. One kernel `after()` timer is armed for its earliest
//! deadline, never sooner than one schedules tick (10 ms by default) after the previous tick, and
//! re-armed after every tick, every settled firing and once per frame before the kernel step
//! (where a schedule a system created this frame shows up). Re-arming is a heap peek and a compare
//! when nothing changed, so an app with no due schedule pays no tick at all. The timer runs at High
//! priority; each firing becomes its own kernel task at the firing priority (Normal), so firings
//! share the frame budget with all other kernel work and a burst of them spreads over frames.
//!
//! # Verbs
//!
//! A verb is Rust code registered under a name ([`TickstepSchedules::verb`]). It receives a
//! [`VerbCall`] (the firing, the [`WorldQueue`] to reach the ECS, the engine to create or stop
//! schedules) and returns `Ok(value)` (the MOO-style return value: a positive number is an
//! adaptive schedule's next delay) or `Err(value)` (a fault of kind `error`). A panic is a fault
//! too, caught, with its message as the value: a verb never takes the app down.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};
use std::time::Duration;

use tickstep_kernel::clock::Clock;
use tickstep_kernel::{FrameScheduler, Priority};
use tickstep_schedules::{
    FaultKind, Firing, KernelWake, ObjId, Outcome, Refused, RunId, Runner, Schedules, Value,
    World as ScheduleWorld,
};

use crate::{RealClock, WorldQueue};

/// What a verb returns: `Ok` is the verb's return value, `Err` a fault value.
pub type VerbResult = Result<Value, Value>;

type VerbFn = Rc<dyn Fn(&VerbCall) -> VerbResult>;

/// One firing of a durable schedule, as its verb sees it.
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use bevy_app::App;
/// use tickstep_bevy::{TickstepPlugin, TickstepSchedules};
/// use tickstep_kernel::ManualClock;
/// use tickstep_schedules::{ObjId, Options, Value};
///
/// let clock = ManualClock::new();
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().manual_clock(clock.clone()).build()?);
/// let seen = Rc::new(Cell::new(0));
/// let s = seen.clone();
/// let schedules = app.world().non_send::<TickstepSchedules>();
/// schedules.verb("count", move |call| {
///     s.set(s.get() + call.args().len());
///     Ok(Value::Int(0))
/// });
/// let mut txn = schedules.engine().begin(ObjId(1));
/// txn.schedule_at(ObjId(1), "count", 0.0, vec![Value::Int(1)], Options::new()).unwrap();
/// txn.commit().unwrap();
/// app.update();
/// clock.advance(Duration::from_millis(20));
/// app.update();
/// assert_eq!(seen.get(), 2); // the argument and the elapsed time
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
#[derive(Clone)]
pub struct VerbCall {
    firing: Firing,
    run: RunId,
    world: WorldQueue,
    engine: Schedules,
}

impl std::fmt::Debug for VerbCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerbCall")
            .field("firing", &self.firing)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl VerbCall {
    /// The firing: schedule id, target, verb, args, state, elapsed, player, authority, deadline.
    ///
    /// ```
    /// fn verb(call: &tickstep_bevy::VerbCall) -> tickstep_bevy::VerbResult {
    ///     println!("schedule {:?} fired", call.firing().schedule);
    ///     Ok(tickstep_schedules::Value::Int(0))
    /// }
    /// ```
    pub fn firing(&self) -> &Firing {
        &self.firing
    }

    /// The arguments the verb is called with: the schedule's args, then its state (if any), then
    /// the elapsed seconds (unless `pass_elapsed` is off).
    ///
    /// ```
    /// fn verb(call: &tickstep_bevy::VerbCall) -> tickstep_bevy::VerbResult {
    ///     Ok(call.args().first().cloned().unwrap_or(tickstep_schedules::Value::Int(0)))
    /// }
    /// ```
    pub fn args(&self) -> Vec<Value> {
        self.firing.call_args()
    }

    /// This firing's run id.
    ///
    /// ```
    /// fn verb(call: &tickstep_bevy::VerbCall) -> tickstep_bevy::VerbResult {
    ///     Ok(tickstep_schedules::Value::Int(i64::try_from(call.run().0).unwrap_or(0)))
    /// }
    /// ```
    pub fn run(&self) -> RunId {
        self.run
    }

    /// The queue that reaches the ECS at the kernel's next sync point (this frame).
    ///
    /// ```
    /// fn verb(call: &tickstep_bevy::VerbCall) -> tickstep_bevy::VerbResult {
    ///     call.world().push(|world| { world.spawn(()); });
    ///     Ok(tickstep_schedules::Value::Int(0))
    /// }
    /// ```
    pub fn world(&self) -> &WorldQueue {
        &self.world
    }

    /// The engine, to create or stop schedules from inside a verb.
    ///
    /// ```
    /// fn verb(call: &tickstep_bevy::VerbCall) -> tickstep_bevy::VerbResult {
    ///     let live = call.schedules().live_count();
    ///     Ok(tickstep_schedules::Value::Int(i64::try_from(live).unwrap_or(0)))
    /// }
    /// ```
    pub fn schedules(&self) -> &Schedules {
        &self.engine
    }
}

#[derive(Default)]
pub(crate) struct VerbTable {
    verbs: RefCell<HashMap<Rc<str>, VerbFn>>,
}

impl VerbTable {
    pub(crate) fn insert(&self, name: &str, verb: VerbFn) {
        self.verbs.borrow_mut().insert(Rc::from(name), verb);
    }

    fn get(&self, name: &str) -> Option<VerbFn> {
        self.verbs.borrow().get(name).cloned()
    }

    fn contains(&self, name: &str) -> bool {
        self.verbs.borrow().contains_key(name)
    }
}

/// The schedules' view of a game: every object valid, every principal a wizard (a single-player
/// or dedicated-server game has no MOO permissions), and a verb callable only when code is
/// registered under its name, so a typo'd verb is `E_INVARG` at creation.
pub(crate) struct GameWorld {
    pub(crate) verbs: Rc<VerbTable>,
}

impl ScheduleWorld for GameWorld {
    fn valid(&self, _obj: ObjId) -> bool {
        true
    }
    fn is_wizard(&self, _who: ObjId) -> bool {
        true
    }
    fn controls(&self, _who: ObjId, _obj: ObjId) -> bool {
        true
    }
    fn verb_callable(&self, _perms: ObjId, _target: ObjId, verb: &str) -> bool {
        self.verbs.contains(verb)
    }
}

/// What the kernel timer, the runner and the firings share.
pub(crate) struct Driver {
    pub(crate) clock: RealClock,
    pub(crate) kernel: FrameScheduler,
    pub(crate) engine: OnceCell<Schedules>,
    pub(crate) verbs: Rc<VerbTable>,
    pub(crate) world: WorldQueue,
    /// The schedules wake, shared with the `tickstep` runtime (one timer at the next deadline).
    wake: KernelWake,
    next_run: Cell<u64>,
    pub(crate) ticks: Cell<u64>,
}

const TICK_ORIGIN: &str = "tickstep-bevy schedules tick";

impl Driver {
    pub(crate) fn new(
        clock: RealClock,
        kernel: FrameScheduler,
        world: WorldQueue,
        tick: Duration,
    ) -> Rc<Driver> {
        Rc::new(Driver {
            clock,
            kernel,
            engine: OnceCell::new(),
            verbs: Rc::default(),
            world,
            wake: KernelWake::new(tick),
            next_run: Cell::new(0),
            ticks: Cell::new(0),
        })
    }

    pub(crate) fn engine(&self) -> &Schedules {
        self.engine
            .get()
            .expect("the engine is set while installing")
    }

    /// Arms (or moves earlier) the kernel timer for the engine's earliest deadline.
    pub(crate) fn rearm(self: &Rc<Self>) {
        // `after` refuses only a delay past the end of the clock; such a deadline never comes.
        let next = self
            .engine
            .get()
            .and_then(Schedules::next_deadline_unix_nanos);
        let now = || self.clock.unix_nanos();
        let _ = self
            .wake
            .rearm(next, now, &self.kernel, TICK_ORIGIN, self, Driver::tick);
    }

    fn tick(self: &Rc<Self>) {
        self.wake.fired(self.clock.unix_nanos());
        self.ticks.set(self.ticks.get() + 1);
        // A store error keeps the cadence updates pending; the engine writes them next tick.
        let _ = self.engine().tick();
        self.rearm();
    }

    fn settle(self: &Rc<Self>, run: RunId, outcome: Outcome) {
        self.engine().report(run, outcome);
        self.rearm();
    }
}

/// Starts each firing as its own kernel task.
pub(crate) struct KernelRunner {
    pub(crate) driver: Weak<Driver>,
    pub(crate) priority: Priority,
}

impl Runner for KernelRunner {
    fn start(&self, firing: &Firing) -> Result<RunId, Refused> {
        let driver = self
            .driver
            .upgrade()
            .ok_or_else(|| Refused("the app has shut down".into()))?;
        let verb = driver.verbs.get(&firing.verb).ok_or_else(|| {
            Refused(format!(
                "no code is registered for verb {:?}",
                &*firing.verb
            ))
        })?;
        let run = RunId(driver.next_run.get() + 1);
        driver.next_run.set(run.0);
        let call = VerbCall {
            firing: firing.clone(),
            run,
            world: driver.world.clone(),
            engine: driver.engine().clone(),
        };
        let weak = self.driver.clone();
        let _task = driver
            .kernel
            .with_origin(format!("verb {}", firing.verb))
            .schedule(
                move || {
                    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| verb(&call))) {
                        Ok(Ok(value)) => Outcome::Returned(value),
                        Ok(Err(value)) => Outcome::Fault {
                            kind: FaultKind::Error,
                            value,
                        },
                        Err(payload) => Outcome::Fault {
                            kind: FaultKind::Error,
                            value: Value::Str(tickstep_kernel::panic_message(&*payload)),
                        },
                    };
                    if let Some(driver) = weak.upgrade() {
                        driver.settle(run, outcome);
                    }
                },
                self.priority,
            );
        Ok(run)
    }
}

impl TickstepSchedules {
    /// Registers `verb` as the code of every schedule naming `name` (replacing earlier code).
    /// Register verbs before the first frame: a schedule loaded from the store whose verb has no
    /// code when it comes due fails to start (a `start_failed` fault).
    ///
    /// ```
    /// use bevy_app::App;
    /// use tickstep_bevy::{TickstepPlugin, TickstepSchedules};
    /// use tickstep_kernel::ManualClock;
    /// use tickstep_schedules::{ObjId, Options, Value};
    ///
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
    /// let schedules = app.world().non_send::<TickstepSchedules>();
    /// let mut txn = schedules.engine().begin(ObjId(1));
    /// assert!(txn.schedule_every(ObjId(1), "heal", 5.0, vec![], Options::new()).is_err()); // no code yet
    /// drop(txn);
    /// schedules.verb("heal", |_call| Ok(Value::Int(0)));
    /// let mut txn = schedules.engine().begin(ObjId(1));
    /// assert!(txn.schedule_every(ObjId(1), "heal", 5.0, vec![], Options::new()).is_ok());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn verb(&self, name: &str, verb: impl Fn(&VerbCall) -> VerbResult + 'static) {
        self.driver.verbs.insert(name, Rc::new(verb));
    }
}

/// The durable schedules engine: `schedule_at` / `schedule_every` from any system, verbs as Rust
/// code, firings as budgeted kernel tasks.
///
/// ```
/// use bevy_app::{App, Startup};
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::{TickstepPlugin, TickstepSchedules};
/// use tickstep_kernel::ManualClock;
/// use tickstep_schedules::{ObjId, Options, Value};
///
/// fn arm_upkeep(schedules: NonSend<TickstepSchedules>) {
///     let mut txn = schedules.engine().begin(ObjId(0));
///     txn.schedule_every(ObjId(0), "upkeep", 60.0, vec![], Options::new()).unwrap();
///     txn.commit().unwrap();
/// }
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
/// app.world().non_send::<TickstepSchedules>().verb("upkeep", |_| Ok(Value::Int(0)));
/// app.add_systems(Startup, arm_upkeep);
/// app.update();
/// assert_eq!(app.world().non_send::<TickstepSchedules>().engine().live_count(), 1);
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
pub struct TickstepSchedules {
    pub(crate) driver: Rc<Driver>,
    pub(crate) store_path: Option<PathBuf>,
    pub(crate) abandoned: usize,
}

impl std::fmt::Debug for TickstepSchedules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickstepSchedules")
            .field("store_path", &self.store_path)
            .field("abandoned", &self.abandoned)
            .finish_non_exhaustive()
    }
}

impl TickstepSchedules {
    /// The engine: [`Schedules::begin`] opens a transaction for `schedule_at`, `schedule_every`,
    /// `schedule_stop` and `schedule_info`.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert_eq!(app.world().non_send::<TickstepSchedules>().engine().live_count(), 0);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn engine(&self) -> &Schedules {
        self.driver.engine()
    }

    /// The store file, or `None` for an in-memory engine.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert!(app.world().non_send::<TickstepSchedules>().store_path().is_none());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn store_path(&self) -> Option<&Path> {
        self.store_path.as_deref()
    }

    /// How many firings were in flight when the store was last saved and were abandoned at
    /// start-up (each a fault "interrupted by restart": a Rust closure cannot resume from disk).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert_eq!(app.world().non_send::<TickstepSchedules>().abandoned_at_start(), 0);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn abandoned_at_start(&self) -> usize {
        self.abandoned
    }

    /// How many times the engine has been ticked (once per due deadline, at most once per
    /// schedules tick).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert_eq!(app.world().non_send::<TickstepSchedules>().ticks(), 0);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn ticks(&self) -> u64 {
        self.driver.ticks.get()
    }
}
