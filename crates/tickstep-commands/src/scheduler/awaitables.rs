//! The futures a [`Coroutine`] hands out: yield, waits, and joins on child commands.
//!
//! The scheduler polls with a no-op waker and mounts every running command once per cycle, so
//! none of these registers a wake-up: each poll re-checks its condition. Those that can finish
//! at once also check that their command was not canceled earlier in the same poll, so code after
//! the `.await` never runs for a canceled command.

use std::future::Future;
use std::pin::Pin;
use std::rc::Weak;
use std::task::{Context, Poll};

use tickstep_kernel::clock::{Clock, Instant};

use crate::error::ForkError;
use crate::id::Mounted;
use crate::run::Run;
use crate::scheduler::Inner;

/// True when the bound command may go on (it was not canceled during this poll).
/// How [`Coroutine::wait_until_timeout`](crate::Coroutine::wait_until_timeout) ended.
///
/// ```
/// use tickstep_commands::WaitResult;
/// assert_ne!(WaitResult::ConditionMet, WaitResult::TimedOut);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitResult {
    /// The condition returned true (checked before the timeout, so it wins a tie).
    ConditionMet,
    /// The timeout passed first.
    TimedOut,
}

fn may_continue(inner: &Weak<Inner>, bound: Mounted) -> bool {
    inner.upgrade().is_some_and(|i| i.still_running(bound))
}

/// Future of [`Coroutine::yield_now`](crate::Coroutine::yield_now): pending once, ready on the
/// next mount.
///
/// ```
/// use tickstep_commands::{Command, CycleYieldNow};
/// let c = Command::no_requirements()
///     .executing(|co| async move {
///         let step: CycleYieldNow = co.yield_now();
///         step.await;
///     })
///     .named("c");
/// # let _ = c;
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct CycleYieldNow {
    pub(crate) yielded: bool,
}

impl Future for CycleYieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            Poll::Ready(())
        } else {
            self.yielded = true;
            Poll::Pending
        }
    }
}

/// Future of [`Coroutine::wait`](crate::Coroutine::wait): ready at the first mount at or after
/// its deadline.
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, Wait};
/// let c = Command::no_requirements()
///     .executing(|co| async move {
///         let pause: Wait = co.wait(Duration::from_millis(250));
///         pause.await;
///     })
///     .named("c");
/// # let _ = c;
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Wait {
    pub(crate) deadline: Instant,
    pub(crate) inner: Weak<Inner>,
    pub(crate) bound: Mounted,
}

impl Future for Wait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let Some(inner) = self.inner.upgrade() else {
            return Poll::Pending;
        };
        if inner.clock.now() >= self.deadline && inner.still_running(self.bound) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Future of [`Coroutine::wait_until`](crate::Coroutine::wait_until): ready at the first mount
/// where its condition holds.
///
/// ```
/// use tickstep_commands::Command;
/// let c = Command::no_requirements()
///     .executing(|co| async move { co.wait_until(|| true).await })
///     .named("c");
/// # let _ = c;
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct CycleWaitUntil<F> {
    pub(crate) condition: F,
    pub(crate) inner: Weak<Inner>,
    pub(crate) bound: Mounted,
}

impl<F: FnMut() -> bool + Unpin> Future for CycleWaitUntil<F> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let this = Pin::into_inner(self);
        if (this.condition)() && may_continue(&this.inner, this.bound) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Future of [`Coroutine::wait_until_timeout`](crate::Coroutine::wait_until_timeout): a
/// [`WaitResult`] saying which came first.
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, WaitResult};
/// let c = Command::no_requirements()
///     .executing(|co| async move {
///         if co.wait_until_timeout(|| false, Duration::from_secs(2)).await == WaitResult::TimedOut {
///             // give up
///         }
///     })
///     .named("c");
/// # let _ = c;
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct CycleWaitUntilTimeout<F> {
    pub(crate) condition: F,
    pub(crate) deadline: Instant,
    pub(crate) inner: Weak<Inner>,
    pub(crate) bound: Mounted,
}

impl<F: FnMut() -> bool + Unpin> Future for CycleWaitUntilTimeout<F> {
    type Output = WaitResult;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<WaitResult> {
        let this = Pin::into_inner(self);
        if !may_continue(&this.inner, this.bound) {
            return Poll::Pending;
        }
        if (this.condition)() {
            return Poll::Ready(WaitResult::ConditionMet);
        }
        let timed_out = this
            .inner
            .upgrade()
            .is_some_and(|i| i.clock.now() >= this.deadline);
        if timed_out {
            Poll::Ready(WaitResult::TimedOut)
        } else {
            Poll::Pending
        }
    }
}

/// The instances a [`Join`] waits for: one run is kept inline, so awaiting a run allocates
/// nothing (docs/commands.md §13.5).
#[derive(Debug, Default)]
pub(crate) enum JoinKeys {
    #[default]
    None,
    One(Run),
    Many(Vec<Run>),
}

impl JoinKeys {
    fn as_slice(&self) -> &[Run] {
        match self {
            JoinKeys::None => &[],
            JoinKeys::One(key) => std::slice::from_ref(key),
            JoinKeys::Many(keys) => keys,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JoinMode {
    All,
    Any,
}

/// Future of [`Coroutine::await_cmd`](crate::Coroutine::await_cmd),
/// [`Coroutine::await_all`](crate::Coroutine::await_all) and
/// [`Coroutine::await_any`](crate::Coroutine::await_any): the children start when the method is
/// called; this resolves when they end (all, or any), or at once with the [`ForkError`] that kept
/// them from starting.
///
/// ```
/// use tickstep_commands::{Command, Join};
/// let step = Command::no_requirements().executing(|_co| async {}).named("step");
/// let outer = Command::no_requirements()
///     .executing_fallible(move |co| {
///         let step = step.clone();
///         async move {
///             let joined: Join = co.await_cmd(&step);
///             joined.await?;
///             Ok(())
///         }
///     })
///     .named("outer");
/// # let _ = outer;
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Join {
    pub(crate) inner: Weak<Inner>,
    pub(crate) bound: Mounted,
    pub(crate) keys: JoinKeys,
    pub(crate) error: Option<ForkError>,
    pub(crate) mode: JoinMode,
}

impl Future for Join {
    type Output = Result<(), ForkError>;
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(error) = self.error.take() {
            return Poll::Ready(Err(error));
        }
        let Some(inner) = self.inner.upgrade() else {
            return Poll::Pending;
        };
        if !inner.still_running(self.bound) {
            return Poll::Pending;
        }
        // Every child's end is checked at every poll: the join ends when the last (or the
        // first) child has ended, never after a fixed number of polls (docs/commands.md §13.4).
        let keys = self.keys.as_slice();
        let done = match self.mode {
            JoinMode::All => keys.iter().all(|r| !inner.is_live(r.key)),
            JoinMode::Any => keys.is_empty() || keys.iter().any(|r| !inner.is_live(r.key)),
        };
        if !done {
            return Poll::Pending;
        }
        if self.mode == JoinMode::Any {
            for run in std::mem::take(&mut self.keys).as_slice() {
                if inner.is_live(run.key) {
                    inner.cancel_key(run.key);
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}
