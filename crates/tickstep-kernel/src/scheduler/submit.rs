//! Creating work: `schedule`, `after`, `every`, `spawn`, entries, origin labels (`with_origin`,
//! whose builder is `labeled.rs`), and the waits' `sleep`/`timeout` (whose futures are
//! `waits.rs`): every call that puts work on the scheduler.
//!
//! Every creating call is `#[track_caller]`: the call site becomes the task's origin in the
//! profiler and in error reports. All validation happens before anything is stored, so a refused
//! call leaves the scheduler exactly as it was.

use std::borrow::Cow;
use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::{
    FrameScheduler, Labeled, Priority, ReusableTask, ScheduleError, TaskHandle, seconds_to_duration,
};

use super::pool::MAX_POOLED;
use super::queues::OnceFn;
use super::slab::{AsyncJob, Body, Cadence, LocalFuture, NewTask, Place, Start, TaskRef};
use super::waits::{Sleep, Timeout, WaitUntil, wait_until};

impl FrameScheduler {
    /// Stores a task. Panics (at the user's call site) when the scheduler is destroyed.
    #[track_caller]
    pub(super) fn submit(
        &self,
        body: Body,
        priority: Priority,
        start: Start,
        label: Option<&str>,
    ) -> Result<TaskRef, ScheduleError> {
        let location = Location::caller();
        let shared = &*self.shared;
        let mut core = shared.core.borrow_mut();
        assert!(!core.destroyed, "scheduler is destroyed");
        let interval = match start {
            Start::Every(interval) => u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX),
            _ => 0,
        };
        let (place, cadence, deadline) = match start {
            Start::Queued => (Place::Queued, Cadence::Once, Instant::ZERO),
            Start::Idle => (Place::Idle, Cadence::Entry, Instant::ZERO),
            Start::After(delay) => {
                let deadline = shared.clock.now().checked_add(delay).ok_or(
                    ScheduleError::DeadlineOverflow {
                        api: "after",
                        what: "delay",
                        delay,
                    },
                )?;
                (Place::Heap, Cadence::Once, deadline)
            }
            Start::EveryFrame => {
                core.every_calls += 1;
                (Place::Frame, Cadence::EveryFrame, Instant::ZERO)
            }
            Start::Every(interval) => {
                let now = shared.clock.now();
                let overflow = ScheduleError::DeadlineOverflow {
                    api: "every",
                    what: "interval",
                    delay: interval,
                };
                // n counts every() calls including this one; the count only moves on success.
                core.every_calls += 1;
                let Some(deadline) = core.first_every_deadline(now, interval) else {
                    core.every_calls -= 1;
                    return Err(overflow);
                };
                // A Duration that fits past `now` on the clock fits in u64 nanoseconds.
                (Place::Heap, Cadence::Every, deadline)
            }
        };
        let origin = core.origin_for(location, label);
        let key = core.insert(
            NewTask {
                body,
                priority,
                cadence,
                location,
                origin,
                place,
                interval,
            },
            deadline,
        );
        core.refresh_if_detached(&shared.clock, &shared.wakes);
        Ok(TaskRef::Slot(key))
    }

    /// The hot path: a one-shot closure goes straight into its queue, no slot.
    #[track_caller]
    #[inline]
    pub(super) fn submit_once(
        &self,
        f: impl FnOnce() + 'static,
        priority: Priority,
        label: Option<&str>,
    ) -> TaskRef {
        let location = Location::caller();
        let shared = &*self.shared;
        let mut core = shared.core.borrow_mut();
        assert!(!core.destroyed, "scheduler is destroyed");
        let origin = core.origin_for(location, label);
        let task = Box::new(OnceFn {
            f,
            location,
            origin,
        });
        let seq = core.queues.push_once(priority, task);
        core.refresh_if_detached(&shared.clock, &shared.wakes);
        TaskRef::Once {
            queue: priority.queue() as u8,
            seq,
        }
    }

    /// The body of an `after()` closure: pooled by type when small, boxed otherwise.
    #[inline]
    pub(super) fn once_body<F: FnOnce() + 'static>(&self, f: F) -> Body {
        let size = std::mem::size_of::<F>();
        if size == 0 || size > MAX_POOLED {
            Body::Once(Box::new(f))
        } else {
            Body::Pooled(self.shared.pools.borrow_mut().store(f))
        }
    }

    pub(super) fn handle(&self, key: TaskRef) -> TaskHandle {
        TaskHandle::new(Rc::downgrade(&self.shared), key)
    }

    /// Runs `f` once on the next step, at `priority`. Arguments become closure captures.
    ///
    /// Work scheduled from a task at its own priority or higher waits for the next step (that is
    /// how a task yields the rest of the frame); at a lower priority the step has not reached yet,
    /// it may still run this step if the budget allows.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let sum = Rc::new(Cell::new(0));
    /// let (s, a, b) = (sum.clone(), 2, 3);
    /// let _h = sched.schedule(move || s.set(a + b), Priority::High);
    /// sched.step();
    /// assert_eq!(sum.get(), 5);
    /// ```
    #[track_caller]
    pub fn schedule(&self, f: impl FnOnce() + 'static, priority: Priority) -> TaskHandle {
        let key = self.submit_once(f, priority, None);
        self.handle(key)
    }

    /// Fire and forget: [`FrameScheduler::schedule`] without a handle, for work nobody will cancel.
    /// (`schedule` returns a `#[must_use]` [`TaskHandle`] because dropping a handle does not
    /// cancel the task, which surprises readers used to guards; this form says it on purpose.)
    /// Costs the same as `schedule`.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let ran = Rc::new(Cell::new(false));
    /// let r = ran.clone();
    /// sched.schedule_detached(move || r.set(true), Priority::Low); // no warning, no handle
    /// sched.step();
    /// assert!(ran.get());
    /// ```
    #[track_caller]
    pub fn schedule_detached(&self, f: impl FnOnce() + 'static, priority: Priority) {
        self.submit_once(f, priority, None);
    }

    /// Runs `f` once when `delay` has passed (served by the first step at or after the deadline).
    ///
    /// # Errors
    ///
    /// [`ScheduleError::DeadlineOverflow`] when `now + delay` passes the end of the clock.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let fired = Rc::new(Cell::new(false));
    /// let f = fired.clone();
    /// let _h = sched.after(Duration::from_secs(5), move || f.set(true), Priority::Normal)?;
    /// sched.step();
    /// assert!(!fired.get());
    /// clock.advance(Duration::from_secs(5));
    /// sched.step();
    /// assert!(fired.get());
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    #[track_caller]
    pub fn after(
        &self,
        delay: Duration,
        f: impl FnOnce() + 'static,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError> {
        self.unlabeled().after(delay, f, priority)
    }

    /// Runs `f` every `interval`: zero means every step (the frame list); a positive interval uses
    /// the deadline heap, drift-free (next deadline = previous deadline + interval, snapped to
    /// now + interval after a whole missed interval, so missed ticks never burst).
    ///
    /// # Errors
    ///
    /// [`ScheduleError::DeadlineOverflow`] when the first deadline passes the end of the clock.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let ticks = Rc::new(Cell::new(0));
    /// let t = ticks.clone();
    /// let sweep = sched.every(Duration::from_secs(30), move || t.set(t.get() + 1), Priority::Background)?;
    /// for _ in 0..3 {
    ///     clock.advance(Duration::from_secs(30));
    ///     sched.step_with_budget(Duration::from_secs(1));
    /// }
    /// assert_eq!(ticks.get(), 3);
    /// sweep.cancel();
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    #[track_caller]
    pub fn every(
        &self,
        interval: Duration,
        f: impl FnMut() + 'static,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError> {
        self.unlabeled().every(interval, f, priority)
    }

    /// [`FrameScheduler::after`] with the delay in `f64` seconds, checked the way a script's number is.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::InvalidSeconds`] for NaN, negative or infinite delays
    /// (`Scheduler.after delay must be a finite number >= 0 (got NaN)`), and
    /// [`ScheduleError::DeadlineOverflow`] for a deadline past the end of the clock.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert!(sched.after_secs(0.5, || {}, Priority::Low).is_ok());
    /// let err = sched.after_secs(f64::NAN, || {}, Priority::Low).unwrap_err();
    /// assert_eq!(err.to_string(), "Scheduler.after delay must be a finite number >= 0 (got NaN)");
    /// ```
    #[track_caller]
    pub fn after_secs(
        &self,
        delay: f64,
        f: impl FnOnce() + 'static,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError> {
        let delay = seconds_to_duration("after", delay)?;
        self.after(delay, f, priority)
    }

    /// [`FrameScheduler::every`] with the interval in `f64` seconds, checked the way a script's number
    /// is. A NaN interval would otherwise run the task every frame forever.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::InvalidSeconds`] for NaN, negative or infinite intervals
    /// (`Scheduler.every interval must be a finite number >= 0 (got NaN)`), and
    /// [`ScheduleError::DeadlineOverflow`] for a deadline past the end of the clock.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let err = sched.every_secs(-1.0, || {}, Priority::Low).unwrap_err();
    /// assert_eq!(err.to_string(), "Scheduler.every interval must be a finite number >= 0 (got -1)");
    /// ```
    #[track_caller]
    pub fn every_secs(
        &self,
        interval: f64,
        f: impl FnMut() + 'static,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError> {
        let interval = seconds_to_duration("every", interval)?;
        self.every(interval, f, priority)
    }

    /// Runs a future as a task: polled on the next step under the same budget as any task. When
    /// it returns `Pending` the step moves on; its waker queues it for a later step. Step
    /// statistics count poll time only, never the time it spends parked.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let done = Rc::new(Cell::new(false));
    /// let d = done.clone();
    /// let _h = sched.spawn(async move { d.set(true) }, Priority::Normal);
    /// sched.step();
    /// assert!(done.get());
    /// ```
    #[track_caller]
    pub fn spawn(
        &self,
        future: impl Future<Output = ()> + 'static,
        priority: Priority,
    ) -> TaskHandle {
        self.unlabeled().spawn(future, priority)
    }

    /// Fire and forget: [`FrameScheduler::spawn`] without a handle (see
    /// [`FrameScheduler::schedule_detached`]).
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let done = Rc::new(Cell::new(false));
    /// let d = done.clone();
    /// sched.spawn_detached(async move { d.set(true) }, Priority::Normal);
    /// sched.step();
    /// assert!(done.get());
    /// ```
    #[track_caller]
    pub fn spawn_detached(&self, future: impl Future<Output = ()> + 'static, priority: Priority) {
        let _detached = self.unlabeled().spawn(future, priority);
    }

    /// A recurring async job: every `interval`, `make` creates a future that runs to completion
    /// across steps. The next deadline is armed only when that future completes, so the job never
    /// overlaps itself (a slow run delays the next, drift-free otherwise).
    ///
    /// # Errors
    ///
    /// [`ScheduleError::DeadlineOverflow`] when the first deadline passes the end of the clock.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let runs = Rc::new(Cell::new(0));
    /// let r = runs.clone();
    /// let _h = sched.every_async(Duration::from_secs(1), move || {
    ///     let r = r.clone();
    ///     async move { r.set(r.get() + 1) }
    /// }, Priority::Low)?;
    /// clock.advance(Duration::from_secs(1));
    /// sched.step_with_budget(Duration::from_secs(1));
    /// assert_eq!(runs.get(), 1);
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    #[track_caller]
    pub fn every_async<F, Fut>(
        &self,
        interval: Duration,
        mut make: F,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError>
    where
        F: FnMut() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let job = AsyncJob {
            factory: Box::new(move || Box::pin(make()) as LocalFuture),
            current: None,
        };
        let key = self.submit(
            Body::AsyncRepeat(Box::new(job)),
            priority,
            Start::every(interval),
            None,
        )?;
        Ok(self.handle(key))
    }

    /// Creates a reusable [`ReusableTask`] for `f`. It runs only when queued with
    /// [`FrameScheduler::schedule_entry`], which never allocates.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let entry = sched.entry(|| {}, Priority::Normal);
    /// sched.schedule_entry(&entry).unwrap();
    /// assert_eq!(sched.queue_depths().queues[2], 1);
    /// ```
    #[track_caller]
    pub fn entry(&self, f: impl FnMut() + 'static, priority: Priority) -> ReusableTask {
        self.unlabeled().entry(f, priority)
    }

    /// Queues `entry` for the next step without allocating (docs/kernel.md §7.5). An entry
    /// may queue itself again while it runs; it then runs once more on a later step.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::EntryBusy`] when the entry is already queued (or already re-queued while
    /// running): queuing one entry twice would run it twice. [`ScheduleError::EntryCancelled`] when
    /// it was cancelled or belongs to another scheduler. Nothing changes on error.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, ScheduleError, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let entry = sched.entry(|| {}, Priority::Normal);
    /// sched.schedule_entry(&entry)?;
    /// assert_eq!(sched.schedule_entry(&entry), Err(ScheduleError::EntryBusy));
    /// # Ok::<(), ScheduleError>(())
    /// ```
    pub fn schedule_entry(&self, entry: &ReusableTask) -> Result<(), ScheduleError> {
        if !std::ptr::eq(entry.handle.shared.as_ptr(), Rc::as_ptr(&self.shared)) {
            return Err(ScheduleError::EntryCancelled);
        }
        let shared = &*self.shared;
        let mut core = shared.core.borrow_mut();
        let Some(key) = entry.handle.slot_key() else {
            return Err(ScheduleError::EntryCancelled);
        };
        let Some(slot) = core.slab.get_mut(key) else {
            return Err(ScheduleError::EntryCancelled);
        };
        if slot.cancelled {
            return Err(ScheduleError::EntryCancelled);
        }
        match slot.place {
            Place::Idle => {
                slot.place = Place::Queued;
                let priority = slot.priority;
                core.queues.push(priority, key.index);
                core.refresh_if_detached(&shared.clock, &shared.wakes);
                Ok(())
            }
            Place::Running if !slot.requeue => {
                slot.requeue = true;
                Ok(())
            }
            _ => Err(ScheduleError::EntryBusy),
        }
    }

    /// Names the next task created through the returned builder in the profiler and in error
    /// reports, instead of its `file:line:column` (docs/kernel.md §2.4, for one task).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.with_origin("Process Lobby").schedule(|| {}, Priority::Normal);
    /// sched.step();
    /// assert_eq!(sched.top_tasks(1)[0].key, "Process Lobby");
    /// ```
    pub fn with_origin(&self, label: impl Into<Cow<'static, str>>) -> Labeled<'_> {
        Labeled::new(self, Some(label.into()))
    }

    /// The same builder with no label: tasks are named by their call site. The plain
    /// `after`/`every`/`spawn`/`entry` methods are this, so both paths share one body each.
    pub(super) fn unlabeled(&self) -> Labeled<'_> {
        Labeled::new(self, None)
    }

    /// A future that completes once `duration` has passed on this scheduler's clock (virtual
    /// time included), measured from this call. See the [module docs](crate::waits) for the cost.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{FrameLoop, ManualClock, Priority, Role, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let frames = FrameLoop::new(clock.clone(), Role::Server, 60);
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// sched.bind(&frames)?;
    /// let woke = Rc::new(Cell::new(false));
    /// let (s, w) = (sched.clone(), woke.clone());
    /// sched.spawn_detached(async move {
    ///     s.sleep(Duration::from_secs(60)).await;
    ///     w.set(true);
    /// }, Priority::Normal);
    /// frames.run_for(Duration::from_secs(61)); // virtual: returns at once
    /// assert!(woke.get());
    /// assert!(sched.stats().steps < 10, "slept through the idle minute");
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    pub fn sleep(&self, duration: Duration) -> Sleep {
        self.sleep_until(self.now().saturating_add(duration))
    }

    /// A future that completes once this scheduler's clock reaches `deadline` (at once if it
    /// already has).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let at = sched.now() + Duration::from_secs(5);
    /// let s = sched.clone();
    /// let handle = sched.spawn(async move { s.sleep_until(at).await }, Priority::Normal);
    /// clock.advance(Duration::from_secs(5));
    /// sched.step(); // the wake timer fires and wakes the task
    /// sched.step(); // the task runs to its end
    /// assert_eq!(sched.queue_depths().timers, 0);
    /// # drop(handle);
    /// ```
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        Sleep::new(self.clone(), deadline)
    }

    /// Runs `future` until it finishes or `duration` passes on this scheduler's clock, whichever
    /// comes first.
    ///
    /// # Errors
    ///
    /// The future's output is `Err(`[`TimedOut`](crate::TimedOut)`)` when the deadline passed first (the inner
    /// future is dropped with the `Timeout`).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig, TimedOut};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let result = Rc::new(Cell::new(None));
    /// let (s, r) = (sched.clone(), result.clone());
    /// sched.spawn_detached(async move {
    ///     let slow = s.sleep(Duration::from_secs(10));
    ///     r.set(Some(s.timeout(Duration::from_secs(1), slow).await));
    /// }, Priority::Normal);
    /// sched.step();
    /// clock.advance(Duration::from_secs(1));
    /// sched.step();
    /// sched.step();
    /// assert_eq!(result.get(), Some(Err(TimedOut)));
    /// ```
    pub fn timeout<F: Future>(&self, duration: Duration, future: F) -> Timeout<F> {
        Timeout::new(future, self.sleep(duration))
    }

    /// [`wait_until`] with a limit: `Ok(())` when `condition()` became true, `Err(TimedOut)` when
    /// `duration` passed first.
    ///
    /// # Errors
    ///
    /// As [`FrameScheduler::timeout`].
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let result = Rc::new(Cell::new(None));
    /// let (s, r) = (sched.clone(), result.clone());
    /// sched.spawn_detached(async move {
    ///     r.set(Some(s.wait_until_timeout(|| false, Duration::from_millis(50)).await.is_ok()));
    /// }, Priority::Normal);
    /// for _ in 0..5 {
    ///     sched.step();
    ///     clock.advance(Duration::from_millis(20));
    /// }
    /// assert_eq!(result.get(), Some(false));
    /// ```
    pub fn wait_until_timeout<F: FnMut() -> bool + Unpin>(
        &self,
        condition: F,
        duration: Duration,
    ) -> Timeout<WaitUntil<F>> {
        self.timeout(duration, wait_until(condition))
    }
}
