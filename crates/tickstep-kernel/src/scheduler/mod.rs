//! The frame-budgeted scheduler.
//!
//! Public surface: [`FrameScheduler`] (declared in this file), [`Labeled`], the handles in
//! [`handle`] and the futures of [`waits`]. `FrameScheduler`'s own methods live in three files,
//! one concern each (docs/kernel.md §13.18):
//!
//! | where | what |
//! |---|---|
//! | `control` | construction, stepping, destroy, statistics, profiler, error hooks |
//! | `submit` | every call that creates work: `schedule`, `after`, `every`, `spawn`, entries, `with_origin`, `sleep`/`timeout` |
//! | `crate::frame_loop` | `bind`/`unbind`: binding lives with the loop, so this folder names nothing of it |
//!
//! Engine internals, all crate-private:
//!
//! | file | idea |
//! |---|---|
//! | `labeled` | the `with_origin` builder |
//! | `waits` | the futures an async task awaits (public module, re-exported at the crate root) |
//! | `places` | the state (`Core`) and the moves between places (queued, heap, frame list, running, parked) |
//! | `slab` | task slots with generations; queues and heap hold `u32` indices |
//! | `free_set` | free slot and pool-cell indices, reused lowest first |
//! | `queues` | five FIFO ring buffers, O(1) dequeue, lazy skip of cancelled tasks |
//! | `timers` | indexed min-heap of deadlines, O(log n) removal on cancel |
//! | `drain` | one step over the shared state: budget, release ready work, drain queues under the budget |
//! | `budget` | explicit > frame-aware > fixed, StepEma, late and reattach rules |
//! | `idle` | attach/detach and the 34 ms wake |
//! | `profile` | the hot-task profiler and window attribution |
//! | `wake` | thread-safe wakers for async tasks, pooled |
//! | `panics` | catching task panics with their location and backtrace |

mod budget;
mod control;
mod drain;
mod free_set;
mod handle;
mod idle;
mod labeled;
mod panics;
mod places;
mod pool;
mod profile;
mod queues;
mod slab;
mod submit;
mod timers;
pub mod waits;
mod wake;

use std::cell::RefCell;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use crate::TaskError;
use crate::clock_dispatch::AnyClock;

pub use handle::{ReusableTask, TaskHandle};
pub use idle::WAKE_WINDOW;
pub use labeled::Labeled;

pub(crate) use slab::{TaskKey, TaskRef};

use places::Core;
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
