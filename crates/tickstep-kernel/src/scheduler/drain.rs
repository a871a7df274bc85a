//! One step: read the frame, compute the budget, release ready work, drain the queues.
//!
//! The drain holds the core borrow only between tasks. Each task is taken out of its slot, run
//! with nothing borrowed, and put back (or freed) afterwards, so tasks may call back into the
//! scheduler. Per task the hot path is: one borrow, one queue pop, one clock read for the budget
//! check (none for Kernel priority), the call under `catch_unwind`, one borrow to finish. With
//! profiling on, the clock read after a task doubles as the budget check before the next one, so
//! the profiler adds no clock reads, only one array update. After a burst of due timers (over a
//! thousand in one step) the drain first loads the next 32 tasks' slots and pooled closures in one
//! tight loop ([`Core::warm`]), so their cache misses overlap instead of stalling task by task.

use std::any::Any;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::clock::Clock;
use crate::clock::Instant;
use crate::clock_dispatch::AnyClock;
use crate::{Priority, TaskError};

use super::Shared;
use super::panics::{TaskScope, run_task, take_caught};
use super::places::{Core, Front, Next, Outcome, Running, WARM_AHEAD};
use super::profile::NO_ORIGIN;
use super::profile::location_name;
use super::slab::Body;

type Panic = Box<dyn Any + Send>;
/// Where a task was scheduled and its profiler origin.
type Meta = (&'static std::panic::Location<'static>, u32);

/// The step runs on the shared state alone: it never needs a handle of its own.
impl Shared {
    /// Runs one step (see the crate docs). `explicit` overrides the budget mode.
    pub(super) fn run_step(&self, explicit: Option<Duration>) {
        let source = {
            let core = self.core.borrow();
            if core.destroyed || core.stepping {
                return;
            }
            core.frame_source.clone()
        };
        // Host code: read with nothing borrowed.
        let frame = source.map(|s| s.read()).unwrap_or_default();
        let start = self.clock.now();
        let (budget, profiling, burst, profiled_deadline) = {
            let mut core = self.core.borrow_mut();
            if core.destroyed || core.stepping {
                return;
            }
            core.begin_step(explicit, start, frame, &self.wakes)
        };
        let deadline_check = self.clock.deadline(start.saturating_add(budget));
        // With the profiler on: how many deferred entries the drain attributed when it stopped.
        let mut visited = 0;
        let _scope = TaskScope::enter();
        let _stepping = SteppingGuard(self);
        let zones = crate::zones::profiler_zones();
        let mut now = start;
        let mut deferred = 0;
        let mut ran = 0;
        // A profiled one-shot's time is recorded under the next task's borrow (one borrow per
        // task, not two); whatever is still pending when the drain ends is recorded after it.
        let mut unrecorded: Option<Meta> = None;
        'drain: for queue in 0..5 {
            let snapshot = self.core.borrow().queues.len(queue);
            for i in 0..snapshot {
                let next = {
                    let mut core = self.core.borrow_mut();
                    if burst && i % WARM_AHEAD == 0 {
                        std::hint::black_box(core.warm(queue));
                    }
                    if let Some((location, origin)) = unrecorded.take() {
                        now = record(&mut core, &self.clock, origin, location, now);
                    }
                    match core.front(queue) {
                        Front::Stop => break 'drain,
                        Front::Empty => break,
                        Front::Skipped(skipped) => {
                            // The skipped task's captures may run user code when dropped.
                            drop(core);
                            drop(skipped);
                            continue;
                        }
                        Front::Ready => {}
                    }
                    // The budget check: before every task outside Kernel priority.
                    if queue != 0 {
                        // With the profiler on, the read that ended the last task is fresh; off,
                        // the check reads the clock in its cheapest form.
                        let spent = if profiling {
                            now >= profiled_deadline
                        } else {
                            deadline_check.passed()
                        };
                        if spent {
                            (deferred, visited) = core.defer_from(queue);
                            break 'drain;
                        }
                    }
                    core.pop_to_run(queue, &self.wakes)
                };
                ran += 1;
                let running = match next {
                    Next::Inline(task) => {
                        // The hot path: no slot, nothing to put back.
                        let (panic, location, origin) = if zones {
                            let (location, origin) = task.meta();
                            let _span = self.zone(origin, location, Priority::ALL[queue]);
                            task.run()
                        } else {
                            task.run()
                        };
                        if let Some(payload) = panic {
                            // Cold: record first, so the error hooks' time is not the task's.
                            if profiling {
                                self.profile_run(origin, location, &mut now);
                            }
                            self.report_panic(&payload, origin, Priority::ALL[queue], location);
                        } else if profiling {
                            unrecorded = Some((location, origin));
                        }
                        continue;
                    }
                    Next::Slot(running) => running,
                };
                self.run_slot_task(running, zones, profiling, &mut now);
            }
        }
        let mut core = self.core.borrow_mut();
        let end = match unrecorded {
            Some((location, origin)) => record(&mut core, &self.clock, origin, location, now),
            None => self.clock.now(),
        };
        core.counters.tasks_run += ran;
        core.counters.attribution_visits = visited;
        core.finish_step(end - start, budget, frame, deferred);
        core.refresh_attachment(end, self.wakes.is_pending());
    }

    /// Runs a slab task (timer, recurring job, future, entry) and puts it back by its cadence.
    fn run_slot_task(&self, running: Running, zones: bool, profiling: bool, now: &mut Instant) {
        let index = running.index;
        let (outcome, panic) = if zones {
            let _span = self.zone(running.origin, running.location, running.priority);
            execute(running.body, running.waker.as_ref())
        } else {
            execute(running.body, running.waker.as_ref())
        };
        if profiling {
            self.profile_run(running.origin, running.location, now);
        }
        if !running.settled {
            let garbage = self
                .core
                .borrow_mut()
                .finish_run(index, outcome, &self.clock);
            drop(garbage);
        }
        if let Some(payload) = panic {
            self.report_panic(&payload, running.origin, running.priority, running.location);
        }
    }

    /// Attributes the task that just ended (see [`record`]).
    #[inline]
    fn profile_run(
        &self,
        origin: u32,
        location: &'static std::panic::Location<'static>,
        now: &mut Instant,
    ) {
        let mut core = self.core.borrow_mut();
        *now = record(&mut core, &self.clock, origin, location, *now);
    }

    /// A `tracing` span named by the task's origin (profiler zones).
    #[cold]
    fn zone(
        &self,
        origin: u32,
        location: &'static std::panic::Location<'static>,
        priority: Priority,
    ) -> tracing::span::EnteredSpan {
        let core = self.core.borrow();
        let origin = core
            .profiler
            .name(origin)
            .map_or_else(|| location_name(location), str::to_owned);
        tracing::trace_span!("tickstep.task", origin = %origin, priority = ?priority).entered()
    }

    /// Hands a caught panic to every error hook (or logs it when there are none).
    #[cold]
    fn report_panic(
        &self,
        payload: &Panic,
        origin: u32,
        priority: crate::Priority,
        location: &'static std::panic::Location<'static>,
    ) {
        let (panic_location, backtrace) = take_caught();
        let origin = self
            .core
            .borrow()
            .profiler
            .name(origin)
            .map_or_else(|| location_name(location), str::to_owned);
        let error = TaskError {
            message: crate::panic_message(&**payload),
            origin,
            panic_location,
            priority,
            backtrace,
        };
        let hooks: Vec<_> = self.hooks.borrow().iter().cloned().collect();
        if hooks.is_empty() {
            tracing::error!(target: "tickstep_kernel", "{error}");
        }
        for hook in hooks {
            if let Err(hook_panic) = run_task(|| hook(&error)) {
                let _ = take_caught();
                tracing::error!(
                    target: "tickstep_kernel",
                    "an on_error handler panicked: {}",
                    crate::panic_message(&*hook_panic)
                );
            }
        }
    }
}

/// Attributes the task that started at `started` and ends now to `origin` (interning its call
/// site if needed). Returns the end time, which doubles as the next task's budget check.
#[inline]
fn record(
    core: &mut Core,
    clock: &AnyClock,
    origin: u32,
    location: &'static std::panic::Location<'static>,
    started: Instant,
) -> Instant {
    let end = clock.now();
    let origin = if origin == NO_ORIGIN {
        core.profiler.intern_location(location)
    } else {
        origin
    };
    core.profiler
        .record(origin, (end - started).as_nanos() as u64);
    end
}

/// Clears the "a step is running" flag when the step ends, even by unwinding out of the
/// scheduler's own code, so one bug cannot turn every later step into a no-op.
struct SteppingGuard<'a>(&'a Shared);

impl Drop for SteppingGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut core) = self.0.core.try_borrow_mut() {
            core.stepping = false;
        }
    }
}

/// Runs (or polls) a task body with panics caught. Nothing is borrowed while this runs.
#[inline]
fn execute(body: Body, waker: Option<&Waker>) -> (Outcome, Option<Panic>) {
    match body {
        Body::Inline(task) => (Outcome::Done, task.run().0),
        Body::Once(f) => (Outcome::Done, run_task(f).err()),
        Body::Pooled(f) => (Outcome::Done, f.run()),
        Body::Repeat(mut f) => {
            // A recurring job that panics keeps its cadence: the error is isolated to this run.
            let panic = run_task(&mut f).err();
            (Outcome::Again(Body::Repeat(f)), panic)
        }
        Body::Future(mut future) => {
            let waker = waker.expect("futures always run with a waker");
            let mut cx = Context::from_waker(waker);
            match run_task(|| future.as_mut().poll(&mut cx)) {
                Ok(Poll::Ready(())) => (Outcome::Done, None),
                Ok(Poll::Pending) => (Outcome::Pending(Body::Future(future)), None),
                Err(panic) => (Outcome::Done, Some(panic)),
            }
        }
        Body::AsyncRepeat(mut job) => {
            let waker = waker.expect("futures always run with a waker");
            let mut cx = Context::from_waker(waker);
            let polled = run_task(|| {
                let job = &mut *job;
                let future = job.current.get_or_insert_with(&mut job.factory);
                Pin::as_mut(future).poll(&mut cx)
            });
            match polled {
                Ok(Poll::Pending) => (Outcome::Pending(Body::AsyncRepeat(job)), None),
                Ok(Poll::Ready(())) => {
                    job.current = None;
                    (Outcome::Again(Body::AsyncRepeat(job)), None)
                }
                Err(panic) => {
                    job.current = None;
                    (Outcome::Again(Body::AsyncRepeat(job)), Some(panic))
                }
            }
        }
        Body::Empty => (Outcome::Done, None),
    }
}
