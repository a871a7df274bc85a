//! Mounting: polling one command's body once, then recording what it did.
//!
//! Cost per mount on the hot path: two `RefCell` borrows, one slab lookup each, one virtual poll
//! inside `catch_unwind` (free unless it panics), and one clock read when mount timing is on (a
//! top-level mount starts where the previous one ended; only nested mounts read the clock twice).
//! No allocation: the body future moves out of its slot and back. Events are built only when a
//! listener exists.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tickstep_kernel::clock::Instant;

use super::Inner;
use super::state::{Deferred, Failure, Phase, State};
use crate::error::{BoxError, RunError};
use crate::event::EventKind;
use crate::id::{Key, Mounted};
use crate::scheduler::Coroutine;
use crate::scheduler::command::{BodyFn, BodyFuture};

type Polled = Result<Poll<Result<(), BoxError>>, Box<dyn Any + Send>>;

impl Inner {
    /// Polls the command at `key` once, unless it is not running or already ran this cycle.
    /// Returns whether a body failure is waiting to leave `run()`.
    pub(crate) fn mount(self: &Rc<Self>, key: Key) -> bool {
        let Some((future, body, start)) = self.begin_mount(key) else {
            return false;
        };
        let previous = self.mounted.replace(Mounted::command(key));
        let mut future = future;
        let mut cx = Context::from_waker(Waker::noop());
        let polled = catch_unwind(AssertUnwindSafe(|| {
            let fut = future.get_or_insert_with(|| {
                let body = body.expect("a command without a future has a body factory");
                body(Coroutine::new(self, Mounted::command(key)))
            });
            fut.poll(&mut cx)
        }));
        self.mounted.set(previous);
        let span = start.map(|start| (start, self.clock.now()));
        let (needs_settle, failed) = {
            let mut s = self.state.borrow_mut();
            let s = &mut *s;
            let yielded = matches!(polled, Ok(Poll::Pending));
            let watchdog = s.watchdog;
            match s.entry_mut(key) {
                // The common cycle: still running, yielded, and (if timed) within the watchdog
                // limit. Record the time, put the body back; nothing else to decide.
                Some(e)
                    if yielded
                        && e.phase == Phase::Running
                        && span.is_none_or(|(start, end)| {
                            watchdog.is_none_or(|limit| end - start <= limit)
                        }) =>
                {
                    e.mounted = false;
                    e.future = future;
                    if let Some((start, end)) = span {
                        let took = end - start;
                        e.record_run(took);
                        s.now = end;
                    }
                    s.emit_cycle(key, EventKind::Yielded);
                }
                _ => end_mount(s, key, polled, future, span),
            }
            (!s.deferred.is_empty(), s.failure.is_some())
        };
        if needs_settle {
            self.settle();
        }
        failed
    }

    /// Marks the command mounted and takes its future (or its body factory, on the first mount).
    fn begin_mount(
        &self,
        key: Key,
    ) -> Option<(Option<BodyFuture>, Option<BodyFn>, Option<Instant>)> {
        let (begun, needs_settle) = {
            let mut s = self.state.borrow_mut();
            let cycle = s.cycle;
            let e = s.entry_mut(key)?;
            if e.phase != Phase::Running || e.mounted || e.last_cycle == cycle {
                return None;
            }
            e.last_cycle = cycle;
            e.mounted = true;
            let future = e.future.take();
            let body = future.is_none().then(|| e.cmd.0.body.clone());
            s.emit_cycle(key, EventKind::Mounted);
            let start = if !s.timing {
                None
            } else if self.mounted.get() == Mounted::NOTHING {
                Some(s.now)
            } else {
                Some(self.clock.now())
            };
            ((future, body, start), !s.deferred.is_empty())
        };
        if needs_settle {
            self.settle();
        }
        Some(begun)
    }
}

/// Records the outcome of one poll: timing and watchdog, then yield, completion or failure.
#[inline(never)]
fn end_mount(
    s: &mut State,
    key: Key,
    polled: Polled,
    future: Option<BodyFuture>,
    span: Option<(Instant, Instant)>,
) {
    let watchdog = s.watchdog;
    let e = s
        .entry_mut(key)
        .expect("a mounted command keeps its slot until the poll returns");
    e.mounted = false;
    let mut overran = None;
    if let Some((start, end)) = span {
        let took = end - start;
        e.record_run(took);
        overran = watchdog
            .filter(|limit| took > *limit)
            .map(|limit| (took, limit));
    }
    let ended_meanwhile = e.phase != Phase::Running;
    if let Some((_, end)) = span {
        s.now = end;
    }
    if let Some((elapsed, limit)) = overran {
        let name = s.entry(key).map(|e| e.cmd.0.name.clone());
        tracing::warn!(
            command = name.as_deref().unwrap_or("?"),
            ?elapsed,
            ?limit,
            "command ran longer than the watchdog limit without yielding (greedy loop?)"
        );
        s.emit(key, EventKind::Overran { elapsed, limit });
    }
    match polled {
        Ok(Poll::Pending) if !ended_meanwhile => {
            s.entry_mut(key).expect("still allocated").future = future;
            s.emit_cycle(key, EventKind::Yielded);
        }
        Ok(Poll::Ready(Ok(()))) if !ended_meanwhile => s.complete(key),
        Ok(Poll::Ready(Err(source))) if !ended_meanwhile => {
            let e = s.entry(key).expect("still allocated");
            let message = source.to_string();
            let error = RunError {
                command: e.cmd.0.name.clone(),
                id: e.id,
                scheduled_at: e.scheduled_at,
                source,
            };
            s.fail(key, message, Failure::Error(error));
        }
        Err(payload) => {
            let e = s.entry(key).expect("still allocated");
            let message = tickstep_kernel::panic_message(payload.as_ref());
            tracing::error!(
                command = %e.cmd.name(),
                id = %e.id,
                scheduled_at = %e.scheduled_at,
                "command panicked: {message}"
            );
            if ended_meanwhile {
                // Canceled earlier in this poll: no second end event, but a panic is never
                // swallowed.
                if s.failure.is_none() {
                    s.failure = Some(Failure::Panic(payload));
                }
                s.free(key);
            } else {
                s.fail(key, message, Failure::Panic(payload));
            }
        }
        // Ended while being polled (self-cancel, or a failing child canceled the root): the end
        // events were already emitted; only the body and the slot are left.
        Ok(_) => {
            if let Some(fut) = future {
                s.deferred.push_back(Deferred::Drop(fut));
            }
            s.free(key);
        }
    }
}
