//! Mounting: polling one command's body once, then recording what it did.
//!
//! Cost per mount on the hot path: two `RefCell` borrows, one slab lookup each, one virtual poll
//! inside `catch_unwind` (free unless it panics), and one raw clock read when mount timing is on
//! (a top-level mount starts where the previous one ended; only nested mounts read the clock
//! twice). The span stays in raw clock units (time-stamp-counter ticks for a `SystemClock`) and is
//! compared with the watchdog limit converted to raw units once, when it is set: the only scaling
//! per mount is the event timestamp's. No allocation: the body future moves out of its slot and
//! back. Events are built only when a listener exists.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tickstep_kernel::AnyClock;

use super::Inner;
use super::state::{CycleEvent, Deferred, Failure, Listen, Phase, State};
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
        self.mount_picked(|_| key)
    }

    /// [`Inner::mount`] for the command at `index` of the running list, looked up under the
    /// same borrow that begins the mount (the execution phase's one borrow less per command).
    pub(crate) fn mount_running(self: &Rc<Self>, index: usize) -> bool {
        self.mount_picked(|s| s.running[index])
    }

    #[inline]
    fn mount_picked(self: &Rc<Self>, pick: impl FnOnce(&State) -> Key) -> bool {
        let Some((key, future, body, start)) = self.begin_mount(pick) else {
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
        let span = start.map(|start| (start, self.clock.raw()));
        let (needs_settle, failed) = {
            let mut s = self.state.borrow_mut();
            let s = &mut *s;
            let watchdog_raw = s.watchdog_raw;
            // Only the discriminant is read here: copying the whole result out of the slot the
            // poll just wrote would stall on store forwarding in every cycle.
            let yielded = matches!(polled, Ok(Poll::Pending));
            match s.entry_mut(key) {
                // The common cycle: still running, yielded, and (if timed) within the watchdog
                // limit. Record the raw span, put the body back; nothing else to decide.
                Some(e)
                    if yielded
                        && e.phase == Phase::Running
                        && span.is_none_or(|(start, end)| {
                            end.saturating_sub(start) <= watchdog_raw
                        }) =>
                {
                    e.mounted = false;
                    e.future = future;
                    if let Some((start, end)) = span {
                        e.record_run(end.saturating_sub(start));
                        s.now_raw = end;
                        if s.listen != Listen::Nothing {
                            s.now = self.clock.raw_instant(end);
                        }
                    }
                    s.emit_cycle(key, CycleEvent::Yielded);
                    // `Ok(Pending)` owns nothing: forgetting it spares the common cycle an
                    // out-of-line drop call for a value with nothing to drop.
                    std::mem::forget(polled);
                }
                _ => end_mount(&self.clock, s, key, polled, future, span),
            }
            (!s.deferred.is_empty(), s.failure.is_some())
        };
        if needs_settle {
            self.settle();
        }
        failed
    }

    /// Marks the command mounted and takes its future (or its body factory, on the first mount)
    /// and, when mount timing is on, the raw clock reading its span starts at.
    #[inline]
    fn begin_mount(&self, pick: impl FnOnce(&State) -> Key) -> Option<Begun> {
        let (begun, needs_settle) = {
            let mut s = self.state.borrow_mut();
            let key = pick(&s);
            let cycle = s.cycle;
            let e = s.entry_mut(key)?;
            if e.phase != Phase::Running || e.mounted || e.last_cycle == cycle {
                return None;
            }
            e.last_cycle = cycle;
            e.mounted = true;
            let future = e.future.take();
            let body = future.is_none().then(|| e.cmd.0.body.clone());
            s.emit_cycle(key, CycleEvent::Mounted);
            // A top-level mount starts where the previous one ended; a nested one (a child
            // started inside its parent's poll) reads the clock.
            let start = if !s.timing {
                None
            } else if self.mounted.get() == Mounted::NOTHING {
                Some(s.now_raw)
            } else {
                Some(self.clock.raw())
            };
            ((key, future, body, start), !s.deferred.is_empty())
        };
        if needs_settle {
            self.settle();
        }
        Some(begun)
    }
}

/// What [`Inner::begin_mount`] hands the poll: the key, the body future (or its factory) and
/// the raw reading the mount's timing starts at.
type Begun = (Key, Option<BodyFuture>, Option<BodyFn>, Option<u64>);

/// Records the outcome of one poll: timing and watchdog, then yield, completion or failure.
#[inline(never)]
fn end_mount(
    clock: &AnyClock,
    s: &mut State,
    key: Key,
    polled: Polled,
    future: Option<BodyFuture>,
    span: Option<(u64, u64)>,
) {
    let (watchdog, watchdog_raw) = (s.watchdog, s.watchdog_raw);
    let e = s
        .entry_mut(key)
        .expect("a mounted command keeps its slot until the poll returns");
    e.mounted = false;
    let mut overran = None;
    if let Some((start, end)) = span {
        let took = end.saturating_sub(start);
        e.record_run(took);
        overran = watchdog
            .filter(|_| took > watchdog_raw)
            .map(|limit| (Duration::from_nanos(clock.raw_to_nanos(took)), limit));
    }
    let ended_meanwhile = e.phase != Phase::Running;
    if let Some((_, end)) = span {
        s.now_raw = end;
        s.now = clock.raw_instant(end);
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
            s.emit_cycle(key, CycleEvent::Yielded);
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
