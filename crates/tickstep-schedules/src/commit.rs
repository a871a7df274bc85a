//! [`Commit`]: a transaction's commit as a future, for a host whose thread must not block on a
//! network round trip (docs/schedules.md §11.41).
//!
//! The durable half is handed to the store at once ([`Txn::commit_async`](crate::Txn)); the
//! future completes when the store's thread answers, and only then does the engine apply the
//! transaction in memory — the same order, and the same all-or-nothing promise, as the blocking
//! [`Txn::commit`](crate::Txn::commit). The answer is a std one-shot (a `Mutex`, a `Condvar`
//! and a `Waker`), so the future runs on any executor and the crate depends on none.
//!
//! Meanwhile the engine keeps running: ticks fire what is due, other transactions commit (in
//! order behind this one on the store's thread). A schedule this transaction stops may fire in
//! that window; its stop still lands, and the engine drops it when the future completes.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::Error;
use crate::engine::access::Draft;
use crate::engine::core::Shared;
use crate::store::answer::Pending;

/// What the transaction changes, kept until its write is durable.
struct Parts {
    drafts: Vec<Draft>,
    stops: Vec<u64>,
    discards: Vec<u64>,
}

/// A transaction's commit in flight: completes with `Ok(())` once its creations and stops are
/// durable and applied, or with the store's error and nothing applied. Returned by
/// [`Txn::commit_async`](crate::Txn::commit_async).
///
/// Dropping it before it completes does not undo the commit: the write was already handed to
/// the store, so the drop waits for the answer (blocking, as [`Txn::commit`](crate::Txn::commit)
/// does) and applies the transaction if it landed.
///
/// ```
/// # use tickstep_schedules::kernel::clock::ManualClock;
/// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// # use tickstep_schedules::{Options, Schedules};
/// # let world = TestWorld::new();
/// # let wiz = world.add_wizard();
/// # world.add_verb(wiz, "tidy");
/// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
/// let mut txn = engine.begin(wiz);
/// let id = txn.schedule_every(wiz, "tidy", 60.0, vec![], Options::new()).unwrap();
/// let commit: tickstep_schedules::Commit = txn.commit_async();
/// // An executor polls it; with nothing to send over the network it is ready at once.
/// let waker = std::task::Waker::noop();
/// let mut cx = std::task::Context::from_waker(&waker);
/// let mut commit = std::pin::pin!(commit);
/// assert!(matches!(commit.as_mut().poll(&mut cx), std::task::Poll::Ready(Ok(()))));
/// assert!(engine.begin(wiz).schedule_valid(id));
/// ```
#[must_use = "a commit does nothing in memory until it is awaited (or dropped)"]
pub struct Commit {
    shared: Rc<Shared>,
    parts: Option<Parts>,
    answer: Option<Pending<Result<usize, Error>>>,
    /// Why the commit was refused before anything was written.
    refused: Option<Error>,
}

impl Commit {
    pub(crate) fn start(
        shared: Rc<Shared>,
        drafts: Vec<Draft>,
        stops: Vec<u64>,
        discards: Vec<u64>,
    ) -> Self {
        match shared.start_commit(&drafts, &stops, &discards) {
            Ok(answer) => Commit {
                shared,
                parts: Some(Parts {
                    drafts,
                    stops,
                    discards,
                }),
                answer,
                refused: None,
            },
            // Refused before anything was written: nothing to apply, the error to return.
            Err(error) => Commit {
                shared,
                parts: None,
                answer: None,
                refused: Some(error),
            },
        }
    }

    /// Applies the transaction in memory, once.
    fn finish(&mut self) {
        if let Some(Parts {
            drafts,
            stops,
            discards,
        }) = self.parts.take()
        {
            self.shared.finish_commit(drafts, &stops, &discards);
        }
    }
}

/// The store's thread went away without answering.
fn no_answer() -> Error {
    Error::Database {
        context: "committing a transaction",
        source: "the store's thread stopped before it answered".into(),
    }
}

impl Future for Commit {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(error) = this.refused.take() {
            return Poll::Ready(Err(error));
        }
        if let Some(answer) = &this.answer {
            let result = match answer.poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => result.unwrap_or_else(|| Err(no_answer())),
            };
            this.answer = None;
            if let Err(e) = result {
                // Nothing was written: nothing is applied.
                let e = match this.parts.take() {
                    Some(parts) => this.shared.refusal(e, &parts.drafts),
                    None => e,
                };
                return Poll::Ready(Err(e));
            }
        }
        this.finish();
        Poll::Ready(Ok(()))
    }
}

impl Drop for Commit {
    fn drop(&mut self) {
        if self.parts.is_none() {
            return;
        }
        let landed = self
            .answer
            .take()
            .is_none_or(|answer| matches!(answer.wait(), Some(Ok(_))));
        if landed {
            self.finish();
        }
    }
}
