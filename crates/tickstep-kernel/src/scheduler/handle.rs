//! Handles to scheduled work: cancel it, ask whether it was cancelled.

use std::cell::Cell;
use std::rc::Weak;

use super::{Shared, TaskKey, TaskRef};

/// The handle of one `schedule`, `after`, `every` or `spawn`.
///
/// * Cancelling an `after()` or `every()` handle removes the entry from the deadline heap or frame
///   list at once and updates the idle wake.
/// * Cancelling a queued task skips it when its turn comes (its captures are dropped then, with
///   nothing borrowed).
/// * Cancelling a recurring job mid-run stops future runs without undoing the current one.
/// * A cancelled task never runs. Cancelling a handle whose task already ran does nothing.
///
/// Dropping a handle does **not** cancel the task (scopes that own handles cancel them).
/// A handle is `!Send` like its scheduler:
///
/// ```compile_fail
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let h = sched.schedule(|| {}, Priority::Normal);
/// std::thread::spawn(move || h.cancel()); // error: `Weak<..>` cannot be sent between threads
/// ```
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
///
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let reminder = sched.after(Duration::from_secs(5), || unreachable!(), Priority::Normal).unwrap();
/// reminder.cancel(); // removed from the heap at once; the callback never runs
/// assert!(reminder.is_cancelled());
/// assert_eq!(sched.queue_depths().timers, 0);
/// ```
#[derive(Debug)]
#[must_use = "dropping a TaskHandle does not cancel the task; bind it to `_` to detach it explicitly"]
pub struct TaskHandle {
    pub(crate) shared: Weak<Shared>,
    /// The task's [`TaskRef::pack`] form, and in the top bit whether this handle's cancel took
    /// effect: two words a handle.
    packed: Cell<u64>,
}

/// The bit of `TaskHandle::packed` set once this handle's cancel took effect.
const CANCELLED: u64 = 1 << 63;

impl TaskHandle {
    pub(crate) fn new(shared: Weak<Shared>, key: TaskRef) -> Self {
        TaskHandle {
            shared,
            packed: Cell::new(key.pack()),
        }
    }

    /// The task this handle names.
    fn key(&self) -> TaskRef {
        TaskRef::unpack(self.packed.get())
    }

    /// Cancels the task (see the type docs for what that means in each place). Safe to call from
    /// inside any task, including the one being cancelled, and after the scheduler is gone.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let h = sched.schedule(|| unreachable!(), Priority::Normal);
    /// h.cancel();
    /// sched.step();
    /// assert_eq!(sched.stats().tasks_run, 0);
    /// ```
    pub fn cancel(&self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let (took_effect, garbage) = {
            let mut core = shared.core.borrow_mut();
            let result = core.cancel(self.key());
            if result.0 {
                core.refresh_if_detached(&shared.clock, &shared.wakes);
            }
            result
        };
        // The task's captures may run user code when dropped: the borrow is released by now.
        drop(garbage);
        if took_effect {
            self.packed.set(self.packed.get() | CANCELLED);
        }
    }

    /// The slab key of an entry's handle (entries always live in the slab).
    pub(crate) fn slot_key(&self) -> Option<TaskKey> {
        match self.key() {
            TaskRef::Slot(key) => Some(key),
            TaskRef::Once { .. } => None,
        }
    }

    /// Whether the task was cancelled before it finished: by this handle, or by
    /// [`FrameScheduler::destroy`](crate::FrameScheduler::destroy). False for a task that already ran.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let h = sched.schedule(|| {}, Priority::Normal);
    /// sched.step();
    /// h.cancel(); // already ran: does nothing
    /// assert!(!h.is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.packed.get() & CANCELLED != 0
            || self
                .shared
                .upgrade()
                .is_some_and(|shared| shared.core.borrow().is_cancelled(self.key()))
    }
}

/// A reusable task its owner queues again and again without allocating
/// ([`FrameScheduler::entry`](crate::FrameScheduler::entry) and
/// [`FrameScheduler::schedule_entry`](crate::FrameScheduler::schedule_entry)); docs/kernel.md §7.5.
///
/// Dropping the entry cancels it and frees its slot.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let runs = Rc::new(Cell::new(0));
/// let r = runs.clone();
/// let entry = sched.entry(move || r.set(r.get() + 1), Priority::High);
/// for _ in 0..3 {
///     sched.schedule_entry(&entry).unwrap();
///     sched.step();
/// }
/// assert_eq!(runs.get(), 3);
/// ```
#[derive(Debug)]
pub struct ReusableTask {
    pub(crate) handle: TaskHandle,
}

impl ReusableTask {
    /// Cancels the entry: it leaves its queue (skipped) and can no longer be queued.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let entry = sched.entry(|| {}, Priority::High);
    /// entry.cancel();
    /// assert!(sched.schedule_entry(&entry).is_err());
    /// ```
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// Whether the entry was cancelled (by [`ReusableTask::cancel`] or by destroy).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let entry = sched.entry(|| {}, Priority::High);
    /// sched.destroy();
    /// assert!(entry.is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.handle.is_cancelled()
    }
}

impl Drop for ReusableTask {
    fn drop(&mut self) {
        self.handle.cancel();
    }
}

const _: () = assert!(std::mem::size_of::<TaskHandle>() == 16);
