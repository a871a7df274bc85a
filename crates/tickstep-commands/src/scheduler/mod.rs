//! The scheduler: queues, promotes and mounts commands once per [`CommandScheduler::run`].
//!
//! * [`api`](self) — the public [`CommandScheduler`] handle and its methods.
//! * `state` — the data (slab of instances, lists, mechanisms) and its invariants; the identity
//!   types it keys by (`Key`, `Mounted`) live in the leaf module `crate::id`.
//! * `lifecycle` — queue / start child / promote / cancel / finish, under one borrow.
//! * `inner` — the shared engine, the re-entrancy discipline (`settle`), schedule and fork.
//! * `bindings` — the trigger phase and the narrow API trigger and mechanism handles use.
//! * `defaults` — scoped default commands.
//! * `execute` — mounting one command.
//! * `run` — the phases of one cycle.

mod api;
mod bindings;
mod defaults;
pub(crate) mod execute;
pub(crate) mod inner;
mod lifecycle;
mod run;
pub(crate) mod state;

use std::rc::Rc;
use std::time::Duration;

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
/// let scheduler = tickstep_commands::CommandScheduler::new(tickstep_kernel::clock::ManualClock::new());
/// needs_send(scheduler);
/// ```
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_kernel::clock::ManualClock;
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
    pub(crate) inner: Rc<inner::Inner>,
}
