//! The frame-budgeted scheduler.
//!
//! Public surface: [`FrameScheduler`] (this file: the handle and its constructor), task creation in
//! [`submit`], stepping and inspection in [`control`], handles in [`handle`].
//! Engine internals, all crate-private:
//!
//! | file | idea |
//! |---|---|
//! | `labeled` | the `with_origin` builder |
//! | `core` | the state and the moves between places (queued, heap, frame list, running, parked) |
//! | `slab` | task slots with generations; queues and heap hold `u32` indices |
//! | `free_set` | free slot and pool-cell indices, reused lowest first |
//! | `queues` | five FIFO ring buffers, O(1) dequeue, lazy skip of cancelled tasks |
//! | `timers` | indexed min-heap of deadlines, O(log n) removal on cancel |
//! | `drain` | one step: budget, release ready work, drain queues under the budget |
//! | `budget` | explicit > frame-aware > fixed, StepEma, late and reattach rules |
//! | `idle` | attach/detach and the 34 ms wake |
//! | `profile` | the hot-task profiler and window attribution |
//! | `wake` | thread-safe wakers for async tasks, pooled |
//! | `panics` | catching task panics with their location and backtrace |

mod budget;
mod control;
mod core;
mod drain;
mod free_set;
mod handle;
mod idle;
mod labeled;
mod panics;
mod pool;
mod profile;
mod queues;
mod slab;
mod submit;
mod timers;
mod wake;

use std::cell::RefCell;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use crate::clock::Clock;
use crate::clock_dispatch::AnyClock;
use crate::{SchedulerConfig, TaskError};

pub use handle::{ReusableTask, TaskHandle};
pub use idle::WAKE_WINDOW;
pub use labeled::Labeled;

pub(crate) use slab::{TaskKey, TaskRef};

use self::core::Core;
use wake::WakeQueue;

/// An error handler connected with [`FrameScheduler::on_error`].
type ErrorHook = Rc<dyn Fn(&TaskError)>;

/// Everything a scheduler handle points at.
pub(crate) struct Shared {
    pub(crate) clock: AnyClock,
    pub(crate) core: RefCell<Core>,
    pub(crate) wakes: Arc<WakeQueue>,
    pub(crate) hooks: RefCell<Vec<ErrorHook>>,
    /// Where small `after()` closures wait (see `pool.rs`).
    pub(crate) pools: RefCell<pool::Pools>,
}

/// A frame-budgeted task scheduler: five priority queues drained once per step under a time
/// budget, a deadline heap for timers, and a frame list for per-step jobs.
///
/// `FrameScheduler` is a cheap, clonable handle (`Rc`); every clone drives the same scheduler. It is
/// single-threaded by design, so it is neither `Send` nor `Sync`:
///
/// ```compile_fail
/// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// std::thread::spawn(move || sched.step()); // error: `Rc<..>` cannot be sent between threads
/// ```
///
/// It is re-entrant: a running task may schedule, cancel, inspect or destroy its own scheduler.
/// A closure that captures a clone of its own scheduler keeps it alive until the closure is
/// dropped (it ran, was cancelled, or [`FrameScheduler::destroy`] cleared it), as with any `Rc`;
/// long-lived jobs that need their scheduler should capture a clone and be cancelled by their
/// owner, or the owner should call `destroy`. See the crate docs for the model, the budget
/// formulas and the costs.
///
/// ```
/// use std::{cell::RefCell, rc::Rc, time::Duration};
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
///
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let order = Rc::new(RefCell::new(Vec::new()));
/// let o = order.clone();
/// sched.schedule(move || o.borrow_mut().push("normal"), Priority::Normal);
/// let o = order.clone();
/// sched.schedule(move || o.borrow_mut().push("kernel"), Priority::Kernel);
/// sched.step_with_budget(Duration::from_secs(1));
/// assert_eq!(*order.borrow(), ["kernel", "normal"]);
/// ```
#[derive(Clone)]
pub struct FrameScheduler {
    pub(crate) shared: Rc<Shared>,
}

/// A non-owning scheduler reference, for closures the scheduler itself stores.
#[derive(Clone)]
pub(crate) struct WeakScheduler(Weak<Shared>);

impl WeakScheduler {
    pub(crate) fn upgrade(&self) -> Option<FrameScheduler> {
        self.0.upgrade().map(|shared| FrameScheduler { shared })
    }
}

impl FrameScheduler {
    /// A new, unbound scheduler reading time from `clock`.
    ///
    /// It runs only when [`FrameScheduler::step`] is called, until [`FrameScheduler::bind`] attaches it to a
    /// [`FrameLoop`](crate::FrameLoop).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::client());
    /// assert!(!sched.is_bound());
    /// ```
    #[allow(clippy::needless_pass_by_value)] // the config is consumed by value in spirit: a builder's end
    pub fn new(clock: impl Clock + 'static, config: SchedulerConfig) -> Self {
        panics::install_hook();
        FrameScheduler {
            shared: Rc::new(Shared {
                clock: AnyClock::new(clock),
                core: RefCell::new(Core::new(&config)),
                wakes: Arc::new(WakeQueue::default()),
                hooks: RefCell::new(Vec::new()),
                pools: RefCell::default(),
            }),
        }
    }

    pub(crate) fn downgrade(&self) -> WeakScheduler {
        WeakScheduler(Rc::downgrade(&self.shared))
    }

    /// Whether two handles drive the same scheduler.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let a = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert!(a.same_as(&a.clone()));
    /// ```
    pub fn same_as(&self, other: &FrameScheduler) -> bool {
        Rc::ptr_eq(&self.shared, &other.shared)
    }
}

impl std::fmt::Debug for FrameScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let core = self.shared.core.try_borrow();
        let mut d = f.debug_struct("Scheduler");
        if let Ok(core) = core {
            d.field("phase", &core.phase)
                .field("budget", &core.budget.mode)
                .field("live_tasks", &core.slab.live())
                .field("destroyed", &core.destroyed);
        }
        d.finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    /// A scheduler is one small allocation: under glibc's 1 KiB large-request threshold, so
    /// creating one never forces the allocator to consolidate its free lists (which made every
    /// later small allocation, i.e. every task closure, take the slow path).
    #[test]
    fn the_shared_state_stays_under_a_kibibyte() {
        assert!(std::mem::size_of::<super::Shared>() + 16 < 1000);
    }
}
