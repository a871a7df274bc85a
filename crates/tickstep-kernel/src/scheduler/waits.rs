//! Futures an async kernel task awaits: [`yield_now`], [`FrameScheduler::sleep`],
//! [`FrameScheduler::sleep_until`], [`wait_until`], [`FrameScheduler::timeout`] and
//! [`FrameScheduler::wait_until_timeout`] (docs/kernel.md §9.5–§9.7). The futures are here; the
//! scheduler methods that make them create work on the scheduler, so they sit with the other
//! creating calls in `submit.rs`.
//!
//! They read time from the scheduler's [`Clock`](crate::Clock), so they run in virtual time: on
//! a [`ManualClock`](crate::ManualClock) a frame loop sleeps straight to a sleeping task's
//! deadline. How each one waits, and what it costs:
//!
//! * **yield** wakes its own task and returns `Pending` once: the task runs again on the next step
//!   (the rest of this step goes on without it). No allocation.
//! * **sleep** arms one kernel timer at its deadline, at Kernel priority (the timer only wakes the
//!   task, so the budget never delays the wake; the task itself runs at its own priority on the
//!   step after). An idle scheduler detaches and wakes for it like for any timer. Dropping the
//!   future cancels the timer. A deadline past the end of the clock never comes: the future stays
//!   pending (no timer is armed).
//! * **wait until** checks its condition at every poll and, while false, asks to be polled on the
//!   next step: one poll per step while waiting, and the scheduler stays attached (a condition
//!   has no deadline to sleep to).
//! * **timeout** polls the inner future, then its own sleep: `Err(TimedOut)` once the deadline has
//!   passed before the inner future finished.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::clock::Instant;
use crate::{FrameScheduler, Priority, TaskHandle};

/// Yields once: the task is polled again on the next step.
///
/// A task that loops over a large job yields between batches so each batch fits a step's budget.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig, yield_now};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let batches = Rc::new(Cell::new(0));
/// let b = batches.clone();
/// sched.spawn_detached(async move {
///     for _ in 0..3 {
///         b.set(b.get() + 1); // one batch
///         yield_now().await;
///     }
/// }, Priority::Low);
/// sched.step();
/// assert_eq!(batches.get(), 1);
/// sched.step();
/// assert_eq!(batches.get(), 2);
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future of [`yield_now`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Completes when `condition()` is true, checked at every poll (one poll per step while false).
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig, wait_until};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let (open, entered) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
/// let (o, e) = (open.clone(), entered.clone());
/// sched.spawn_detached(async move {
///     wait_until(move || o.get()).await;
///     e.set(true);
/// }, Priority::Normal);
/// sched.step();
/// assert!(!entered.get());
/// open.set(true);
/// sched.step();
/// assert!(entered.get());
/// ```
pub fn wait_until<F: FnMut() -> bool + Unpin>(condition: F) -> WaitUntil<F> {
    WaitUntil { condition }
}

/// The future of [`wait_until`].
#[must_use = "futures do nothing unless awaited"]
pub struct WaitUntil<F> {
    condition: F,
}

impl<F: FnMut() -> bool + Unpin> Future for WaitUntil<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if (self.condition)() {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl<F> std::fmt::Debug for WaitUntil<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WaitUntil")
    }
}

/// A [`FrameScheduler::timeout`] whose deadline passed before its future finished.
///
/// ```
/// assert_eq!(tickstep_kernel::TimedOut.to_string(), "the deadline passed first");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the deadline passed first")]
pub struct TimedOut;

/// The future of [`FrameScheduler::sleep`] and [`FrameScheduler::sleep_until`].
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    scheduler: FrameScheduler,
    deadline: Instant,
    /// The waker the timer wakes: the latest poll's.
    waker: Rc<RefCell<Option<Waker>>>,
    timer: Option<TaskHandle>,
    /// The deadline is past the end of the clock: never armed, never ready.
    never: bool,
}

impl Sleep {
    /// A sleep on `scheduler` until `deadline`, not armed until first polled.
    pub(super) fn new(scheduler: FrameScheduler, deadline: Instant) -> Sleep {
        Sleep {
            scheduler,
            deadline,
            waker: Rc::new(RefCell::new(None)),
            timer: None,
            never: deadline == Instant::MAX,
        }
    }

    /// When this sleep ends.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert_eq!(sched.sleep(Duration::from_secs(2)).deadline().as_nanos(), 2_000_000_000);
    /// ```
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.scheduler.now() >= self.deadline {
            if let Some(timer) = self.timer.take() {
                timer.cancel();
            }
            return Poll::Ready(());
        }
        *self.waker.borrow_mut() = Some(cx.waker().clone());
        if self.timer.is_none() && !self.never {
            let delay = self.deadline - self.scheduler.now();
            let waker = Rc::clone(&self.waker);
            let armed = self.scheduler.with_origin("tickstep sleep").after(
                delay,
                move || {
                    if let Some(waker) = waker.borrow_mut().take() {
                        waker.wake();
                    }
                },
                Priority::Kernel,
            );
            match armed {
                Ok(timer) => self.timer = Some(timer),
                Err(_) => self.never = true,
            }
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.cancel();
        }
    }
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .field("armed", &self.timer.is_some())
            .finish_non_exhaustive()
    }
}

/// The future of [`FrameScheduler::timeout`]: the inner future's output, or [`TimedOut`].
#[must_use = "futures do nothing unless awaited"]
pub struct Timeout<F> {
    future: Pin<Box<F>>,
    sleep: Sleep,
}

impl<F: Future> Timeout<F> {
    /// `future`, raced against `sleep`.
    pub(super) fn new(future: F, sleep: Sleep) -> Self {
        Timeout {
            future: Box::pin(future),
            sleep,
        }
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, TimedOut>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(output) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(TimedOut)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<F> std::fmt::Debug for Timeout<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeout")
            .field("deadline", &self.sleep.deadline)
            .finish_non_exhaustive()
    }
}
