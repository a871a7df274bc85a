//! The scheduler: queues, promotes and mounts commands once per [`CommandScheduler::run`].
//!
//! * [`api`](self), `configure` — the public [`CommandScheduler`] handle's methods: running it
//!   and asking it questions, and setting it up (defaults, sideloads, listeners, robot state
//!   and modes, the watchdog).
//! * `state` — the data (slab of instances, lists, mechanisms) and its invariants; the identity
//!   types it keys by (`Key`, `Mounted`) live in the leaf module `crate::id`.
//! * `lifecycle` — queue / start child / promote / cancel / finish, under one borrow.
//! * `inner` — the shared engine, the re-entrancy discipline (`settle`), schedule and fork.
//! * `cycle_phases` — the phases of one cycle and what they work on: the robot's state and
//!   modes, scoped default commands, the trigger phase and the narrow API trigger and mechanism
//!   handles use.
//! * `execute` — mounting one command.
//! * `command`, `coroutine`, `awaitables`, `mechanism` — the handles user code holds, and the
//!   futures a body awaits (commands.md §3–§5).
//! * `binding`, `telemetry` — what a trigger binds and what [`CommandScheduler::telemetry`]
//!   returns: both hold commands the engine stores.
//!
//! Why the handles live here: a command's body takes a [`Coroutine`], the coroutine and every
//! [`Mechanism`] hold a weak link to the engine ([`Inner`]), and the engine stores commands. That
//! is a cycle of types, so no file layout splits it across sibling modules. It is closed here,
//! once: the types every file of the folder names (`CommandScheduler`, `Inner`, `Coroutine`,
//! `Mechanism`) are declared in this file, their parent, and their `impl` blocks sit in the
//! files beside them. A file may use its parent's items, so the files of this folder form no
//! cycle, and no module outside the folder is imported by it and imports it back. Identity types
//! (`crate::id`), events (`crate::event`), errors and scopes stay leaf modules outside.

mod api;
pub(crate) mod awaitables;
pub(crate) mod binding;
pub(crate) mod command;
mod configure;
pub(crate) mod coroutine;
mod cycle_phases;
pub(crate) mod execute;
pub(crate) mod inner;
mod lifecycle;
mod mechanism;
pub(crate) mod state;
pub(crate) mod telemetry;

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use tickstep_kernel::AnyClock;

use crate::id::Mounted;
use inner::Listener;
use state::State;

/// The greedy-loop watchdog's default limit: one 20 ms robot cycle.
///
/// ```
/// assert_eq!(tickstep_commands::DEFAULT_WATCHDOG_LIMIT.as_millis(), 20);
/// ```
pub const DEFAULT_WATCHDOG_LIMIT: Duration = Duration::from_millis(20);

/// The command scheduler. Cheap to clone (a shared handle); single-threaded by construction.
///
/// Call [`CommandScheduler::run`] once per cycle. See the [crate docs](crate) for the model.
///
/// It is `!Send`: commands, triggers and the scheduler live on one thread.
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// let scheduler = tickstep_commands::CommandScheduler::new(tickstep_commands::kernel::clock::ManualClock::new());
/// needs_send(scheduler);
/// ```
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let clock = ManualClock::new();
/// let scheduler = CommandScheduler::new(clock.clone());
/// let hello = Command::no_requirements()
///     .executing(|co| async move { co.wait(Duration::from_millis(30)).await; })
///     .named("hello");
/// scheduler.schedule(&hello);
/// assert!(scheduler.is_scheduled(&hello) && !scheduler.is_running(&hello));
/// scheduler.run().unwrap();
/// assert!(scheduler.is_running(&hello));
/// clock.advance(Duration::from_millis(40));
/// scheduler.run().unwrap();
/// assert!(!scheduler.is_running(&hello));
/// ```
#[derive(Clone)]
pub struct CommandScheduler {
    pub(crate) inner: Rc<Inner>,
}

/// The shared engine behind every handle (its methods are in `inner`, `cycle_phases` and
/// `execute`).
pub(crate) struct Inner {
    pub(crate) state: RefCell<State>,
    /// Static dispatch for the shipped clocks; mount timing reads it raw (docs/commands.md §10.4).
    pub(crate) clock: AnyClock,
    /// What is being polled right now (the innermost mount). Shared with every coroutine so the
    /// "is my command the one mounted?" check of a yield is one load, not a `Weak` upgrade.
    pub(crate) mounted: Rc<Cell<Mounted>>,
    /// Copy-on-write, so delivering an event clones one `Rc`, not the list.
    pub(crate) listeners: RefCell<Rc<Vec<Listener>>>,
    /// Set while [`Inner::settle`] runs (private: only the folder's files read it).
    settling: Cell<bool>,
    /// What the host says about the robot (docs/commands.md §12.1); read without a state borrow.
    pub(crate) robot: RefCell<Rc<dyn crate::RobotState>>,
    /// What each robot mode sets up when it starts (docs/commands.md §12.6), copy-on-write.
    pub(crate) mode_setups: RefCell<Rc<Vec<cycle_phases::ModeSetup>>>,
}

/// The coroutine bound to one running command (or sideload).
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, CommandScheduler, WaitResult};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let clock = ManualClock::new();
/// let scheduler = CommandScheduler::new(clock.clone());
/// let c = Command::no_requirements()
///     .executing(|co| async move {
///         co.yield_now().await;
///         co.wait(Duration::from_millis(10)).await;
///         let r = co.wait_until_timeout(|| false, Duration::from_millis(10)).await;
///         assert_eq!(r, WaitResult::TimedOut);
///     })
///     .named("c");
/// scheduler.schedule(&c);
/// for _ in 0..6 {
///     scheduler.run().unwrap();
///     clock.advance(Duration::from_millis(20));
/// }
/// assert!(!scheduler.is_running(&c));
/// ```
///
/// Like every handle of this crate it stays on the scheduler's thread:
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// let scheduler = tickstep_commands::CommandScheduler::new(tickstep_commands::kernel::clock::ManualClock::new());
/// scheduler.sideload(|co| {
///     needs_send(co);
///     async {}
/// });
/// ```
pub struct Coroutine {
    inner: Weak<Inner>,
    /// The scheduler's mount marker (see `Inner::mounted`).
    mounted: Rc<Cell<Mounted>>,
    bound: Mounted,
}

/// What a [`Mechanism`] handle shares: its name, its slot in the engine and the engine.
pub(crate) struct MechanismData {
    name: Rc<str>,
    index: usize,
    tag: usize,
    scheduler: Weak<Inner>,
}

/// A named mechanism registered with one scheduler. Cheap to clone; equality is identity.
///
/// ```
/// use tickstep_commands::{Mechanism, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// assert_eq!(arm.name(), "arm");
/// assert_eq!(arm.clone(), arm);
/// assert_ne!(Mechanism::new(&scheduler, "arm"), arm);
/// ```
#[derive(Clone)]
pub struct Mechanism(Rc<MechanismData>);
