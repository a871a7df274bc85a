//! The durable schedules inside a Bevy app: the `tickstep` host core, the same one the `Runtime`
//! runs on (docs/bevy.md §7, docs/runtime.md §8).
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
//! A verb is Rust code registered under a name: sync ([`TickstepSchedules::verb`]), one kernel
//! task per firing, or async ([`TickstepSchedules::async_verb`]), an async kernel task that may
//! wait across frames. It receives a [`VerbCall`] (the firing, the engine to create or stop
//! schedules, and — through [`VerbWorld::world`] — the [`WorldQueue`] to reach the ECS) and
//! returns `Ok(value)` (a positive number is an adaptive schedule's next delay) or `Err(value)`
//! (a fault of kind `error`). A panic is a fault too, caught, with its message as the value: a
//! verb never takes the app down. A firing runs under its limits (the schedule's `seconds` and
//! `ticks` options) and can be killed ([`TickstepSchedules::kill_firing`]), as in the `Runtime`.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use tickstep_host::{FiringLimits, HostCore, HostCounts, RunningFiring, VerbCall, VerbResult};
use tickstep_schedules::{RunId, ScheduleId, Schedules};

use crate::{RealClock, WorldQueue};

/// The ECS, as a verb run by the plugin reaches it: `call.world()`.
///
/// ```
/// use tickstep_bevy::{VerbCall, VerbResult, VerbWorld};
/// fn respawn(call: &VerbCall) -> VerbResult {
///     call.world().push(|world| { world.spawn(()); });
///     Ok(tickstep_bevy::schedules::Value::Int(0))
/// }
/// ```
pub trait VerbWorld {
    /// The queue that reaches the ECS at the kernel's next sync point (this frame).
    ///
    /// # Panics
    ///
    /// On a [`VerbCall`] that no `TickstepPlugin` made (a `tickstep::Runtime`'s).
    ///
    /// ```
    /// use tickstep_bevy::VerbWorld;
    /// fn verb(call: &tickstep_bevy::VerbCall) -> tickstep_bevy::VerbResult {
    ///     call.world().push(|world| { world.spawn(()); });
    ///     Ok(tickstep_bevy::schedules::Value::Int(0))
    /// }
    /// ```
    fn world(&self) -> &WorldQueue;
}

impl VerbWorld for VerbCall {
    #[track_caller]
    fn world(&self) -> &WorldQueue {
        self.host_context::<WorldQueue>()
            .expect("a verb run by TickstepPlugin is handed the world queue")
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
    /// use tickstep_bevy::kernel::ManualClock;
    /// use tickstep_bevy::schedules::{ObjId, Options, Value};
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
        self.core.verb(name, verb);
    }

    /// Registers an async verb: each firing runs `verb(call)`'s future as an async kernel task,
    /// which may wait across frames (a sleep on the kernel's clock, a command to finish, a
    /// [`Reply`](crate::Reply) from the ECS); the schedule's `overlap` policy sees it running
    /// until the future ends.
    ///
    /// ```
    /// use std::time::Duration;
    /// use bevy_app::App;
    /// use tickstep_bevy::{TickstepPlugin, TickstepSchedules};
    /// use tickstep_bevy::kernel::ManualClock;
    /// use tickstep_bevy::schedules::Value;
    ///
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
    /// app.world().non_send::<TickstepSchedules>().async_verb("patrol", |call| async move {
    ///     call.sleep(Duration::from_secs(2)).await;
    ///     Ok(Value::Int(0))
    /// });
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn async_verb<F, Fut>(&self, name: &str, verb: F)
    where
        F: Fn(VerbCall) -> Fut + 'static,
        Fut: Future<Output = VerbResult> + 'static,
    {
        self.core.async_verb(name, verb);
    }

    /// The firings running now, oldest run first (docs/bevy.md §7.8).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert!(app.world().non_send::<TickstepSchedules>().running_firings().is_empty());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn running_firings(&self) -> Vec<RunningFiring> {
        self.core.running_firings()
    }

    /// Kills a running firing: its kernel task is cancelled (an async verb's future is dropped at
    /// once, a queued sync verb never runs) and the schedule records fault `killed`, counted
    /// toward `max_faults`. Returns whether `run` was running (docs/bevy.md §7.8).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert!(!app.world().non_send::<TickstepSchedules>().kill_firing(tickstep_bevy::schedules::RunId(1)));
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn kill_firing(&self, run: RunId) -> bool {
        self.core.kill(run)
    }

    /// Kills every running firing of `schedule`. Returns how many.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let schedules = app.world().non_send::<TickstepSchedules>();
    /// assert_eq!(schedules.kill_firings_of(tickstep_bevy::schedules::ScheduleId::from_raw(1)), 0);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn kill_firings_of(&self, schedule: ScheduleId) -> usize {
        self.core.kill_firings_of(schedule)
    }

    /// Overrides `schedule`'s firing limits in memory (its stored `seconds` and `ticks` options
    /// and the plugin's default give way); `None` removes the override.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{FiringLimits, TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let schedules = app.world().non_send::<TickstepSchedules>();
    /// schedules.set_firing_limits(tickstep_bevy::schedules::ScheduleId::from_raw(1), Some(FiringLimits::none().ticks(5)));
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn set_firing_limits(&self, schedule: ScheduleId, limits: Option<FiringLimits>) {
        self.core.set_firing_limits(schedule, limits);
    }

    /// What the schedules have done: ticks, firings started, returned and faulted, store errors.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepSchedules, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert_eq!(app.world().non_send::<TickstepSchedules>().counts().firings_started, 0);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn counts(&self) -> HostCounts {
        self.core.counts()
    }
}

/// The durable schedules engine: `schedule_at` / `schedule_every` from any system, verbs as Rust
/// code, firings as budgeted kernel tasks.
///
/// ```
/// use bevy_app::{App, Startup};
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::{TickstepPlugin, TickstepSchedules};
/// use tickstep_bevy::kernel::ManualClock;
/// use tickstep_bevy::schedules::{ObjId, Options, Value};
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
    pub(crate) core: Rc<HostCore<RealClock>>,
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
        self.core.engine()
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
        self.core.counts().schedule_ticks
    }
}
