//! A one-shot answer from a store's thread that the engine's thread may either block on or
//! await (docs/schedules.md §11.41): a `Mutex` and a `Condvar` for the blocking side, a `Waker`
//! for the async one. Std only, so the crate does not depend on any async runtime: the future
//! that awaits it runs on whatever executor polls it (tokio's, Bevy's, a test's `block_on`).
//!
//! The sending half closes the answer when dropped unsent (the store thread died), so a waiter
//! never waits forever.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

struct Slot<T> {
    value: Option<T>,
    /// The sender is gone: no value will come unless one is there.
    closed: bool,
    waker: Option<Waker>,
}

struct Shared<T> {
    slot: Mutex<Slot<T>>,
    ready: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Slot<T>> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The store thread's half: answers once.
pub(crate) struct Answer<T>(Option<Arc<Shared<T>>>);

/// The engine's half: blocks for the answer or polls for it.
pub(crate) struct Pending<T>(Arc<Shared<T>>);

/// A new answer and the pending end that receives it.
pub(crate) fn answer<T>() -> (Answer<T>, Pending<T>) {
    let shared = Arc::new(Shared {
        slot: Mutex::new(Slot {
            value: None,
            closed: false,
            waker: None,
        }),
        ready: Condvar::new(),
    });
    (Answer(Some(Arc::clone(&shared))), Pending(shared))
}

impl<T> Answer<T> {
    /// Delivers `value` and wakes whoever waits.
    pub(crate) fn send(mut self, value: T) {
        if let Some(shared) = self.0.take() {
            let waker = {
                let mut slot = shared.lock();
                slot.value = Some(value);
                slot.closed = true;
                slot.waker.take()
            };
            shared.ready.notify_all();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<T> Drop for Answer<T> {
    fn drop(&mut self) {
        if let Some(shared) = self.0.take() {
            let waker = {
                let mut slot = shared.lock();
                slot.closed = true;
                slot.waker.take()
            };
            shared.ready.notify_all();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<T> Pending<T> {
    /// An answer already there (a store that answers before returning).
    pub(crate) fn ready(value: T) -> Self {
        let (answer, pending) = answer();
        answer.send(value);
        pending
    }

    /// Blocks until the answer comes; `None` when the sender went away without one.
    pub(crate) fn wait(self) -> Option<T> {
        let mut slot = self.0.lock();
        while slot.value.is_none() && !slot.closed {
            slot = self
                .0
                .ready
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
        slot.value.take()
    }

    /// The answer if it has come (`Ready(None)`: the sender went away without one); otherwise
    /// registers `cx`'s waker for it.
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut slot = self.0.lock();
        if slot.value.is_some() || slot.closed {
            return Poll::Ready(slot.value.take());
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::{Pending, answer};
    use std::task::{Context, Poll, Waker};

    #[test]
    fn a_waiter_gets_the_value_sent_from_another_thread() {
        let (tell, pending) = answer();
        let thread = std::thread::spawn(move || tell.send(7));
        assert_eq!(pending.wait(), Some(7));
        thread.join().unwrap();
    }

    #[test]
    fn a_sender_dropped_unsent_ends_the_wait_with_none() {
        let (tell, pending) = answer::<u8>();
        drop(tell);
        assert_eq!(pending.wait(), None);
    }

    #[test]
    fn polling_is_pending_until_the_answer_then_ready() {
        let (tell, pending) = answer();
        let mut cx = Context::from_waker(Waker::noop());
        assert_eq!(pending.poll(&mut cx), Poll::Pending);
        tell.send("done");
        assert_eq!(pending.poll(&mut cx), Poll::Ready(Some("done")));
        assert_eq!(Pending::ready(1).wait(), Some(1));
    }
}
