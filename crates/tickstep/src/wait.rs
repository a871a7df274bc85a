//! Futures an async verb awaits: [`Sleep`] (virtual or real time, via a kernel timer) and
//! [`WaitUntil`] (a condition re-checked once per step).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use tickstep_kernel::{Priority, Scheduler, TaskHandle};

/// Completes once `duration` has passed on the runtime's clock. The first poll arms one kernel
/// timer whose task wakes the verb's task; dropping the future cancels the timer.
///
/// ```
/// use std::time::Duration;
/// use tickstep::Runtime;
/// use tickstep::schedules::Value;
/// let rt = Runtime::builder().in_memory_store().build()?;
/// rt.async_verb("slow", |call| async move {
///     call.sleep(Duration::from_secs(5)).await;
///     Ok(Value::Int(0))
/// });
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    kernel: Scheduler,
    duration: Duration,
    done: Rc<Cell<bool>>,
    timer: Option<TaskHandle>,
}

impl Sleep {
    pub(crate) fn new(kernel: Scheduler, duration: Duration) -> Self {
        Sleep {
            kernel,
            duration,
            done: Rc::new(Cell::new(false)),
            timer: None,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.done.get() {
            return Poll::Ready(());
        }
        if self.timer.is_none() {
            let (done, waker) = (Rc::clone(&self.done), cx.waker().clone());
            let armed = self.kernel.with_origin("tickstep verb sleep").after(
                self.duration,
                move || {
                    done.set(true);
                    waker.wake();
                },
                Priority::High,
            );
            match armed {
                Ok(timer) => self.timer = Some(timer),
                // Past the end of the clock: it will never come, but never is not a hang either.
                Err(_) => return Poll::Ready(()),
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
            .field("duration", &self.duration)
            .field("done", &self.done.get())
            .finish_non_exhaustive()
    }
}

/// Completes when `condition()` is true, checked at every poll; while false it asks to be polled
/// again at the next step (one poll per frame while waiting).
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep::Runtime;
/// use tickstep::schedules::Value;
/// let rt = Runtime::builder().in_memory_store().build()?;
/// let open = Rc::new(Cell::new(false));
/// rt.async_verb("enter", move |call| {
///     let open = open.clone();
///     async move {
///         call.wait_until(move || open.get()).await;
///         Ok(Value::Int(0))
///     }
/// });
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct WaitUntil<F> {
    condition: F,
}

impl<F> WaitUntil<F> {
    pub(crate) fn new(condition: F) -> Self {
        WaitUntil { condition }
    }
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
