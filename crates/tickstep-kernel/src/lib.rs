//! The kernel of tickstep: one clock, a frame-budgeted scheduler, and the frame loop it runs on.
//!
//! # What it is
//!
//! A [`FrameScheduler`] decides when kernel work runs. It keeps five priority queues, drains them once
//! per step under a time budget, and defers whatever does not fit to a later step instead of
//! blowing the frame. Timers live in a deadline heap. A scheduler bound to a [`FrameLoop`] with
//! nothing ready detaches from its phase and arms one wake for its earliest deadline, so an idle
//! scheduler costs nothing per frame. A [`Kernel`] boots one scheduler on the Heartbeat phase and
//! hands out one more per other phase.
//!
//! ```
//! use std::{cell::RefCell, rc::Rc, time::Duration};
//! use tickstep_kernel::{FrameLoop, ManualClock, Priority, Role, FrameScheduler, SchedulerConfig};
//!
//! let clock = ManualClock::new();
//! let frames = FrameLoop::new(clock.clone(), Role::Server, 60);
//! let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
//! sched.bind(&frames)?;
//!
//! let log = Rc::new(RefCell::new(Vec::new()));
//! let l = log.clone();
//! let _reminder = sched.after(Duration::from_secs(5), move || l.borrow_mut().push("reminder"), Priority::Normal)?;
//! let l = log.clone();
//! sched.schedule(move || l.borrow_mut().push("now"), Priority::High);
//!
//! frames.run_for(Duration::from_secs(6)); // virtual time: returns at once
//! assert_eq!(*log.borrow(), ["now", "reminder"]);
//! assert!(sched.stats().steps < 10); // idle frames in between took no steps
//! # Ok::<(), tickstep_kernel::ScheduleError>(())
//! ```
//!
//! # The model
//!
//! (Specified in docs/kernel.md §2, §3, §4 and §6: work, the step, the budget, idle sleep.)
//!
//! A scheduler holds three kinds of pending work: five FIFO queues (one per [`Priority`],
//! `Kernel = 1` first, `Background = 5` last), a deadline min-heap for `after()` and positive
//! `every()`, and a frame list for `every(0)` jobs. A step, in order:
//!
//! 1. reads the engine's [`FrameStats`] once and computes the budget;
//! 2. moves woken futures, every due heap entry and every `every(0)` job into their queues;
//! 3. drains queue 1 to queue 5. Before each task outside Kernel priority it compares the clock
//!    with the deadline; once the budget is spent, every live task still waiting in that queue
//!    and the ones after it counts as deferred and waits for the next step;
//! 4. records its time and deferrals, then decides whether to stay attached to its phase.
//!
//! Each queue's depth is snapshotted when its drain begins: work added to the queue being drained,
//! or to one already drained, waits for the next step, so a task that reschedules itself cannot
//! livelock the frame. Work added to a lower queue not yet reached may run this step. Kernel
//! priority is budget-exempt (deferring the kernel's own work would stall the thing deferring);
//! Background starves first. A panicking task is caught, reported to
//! [`FrameScheduler::on_error`] with its message, origin, location and backtrace, and the step goes
//! on. A recurring entry is in exactly one place at a time (heap or frame list, queued, running),
//! and its next deadline is set only after it runs: a starved job runs once when budget frees,
//! never in a burst; a positive interval is drift-free (previous deadline + interval, snapped to
//! now + interval once a whole interval was missed).
//!
//! # The budget
//!
//! An explicit [`FrameScheduler::step_with_budget`] wins. Otherwise a frame target selects frame-aware
//! mode, and without one the fixed slice applies ([`BudgetMode`]). The server defaults to
//! frame-aware against 16.5 ms with a 1.5 ms floor; the client to a fixed 1.5 ms, because its
//! heartbeat time excludes rendering and a frame-aware client would starve it. With Target and
//! Floor:
//!
//! ```text
//! first step after reattaching:  Budget = max(Target - HeartbeatTime - PhysicsStepTime, Floor)
//! no earlier step, or late:      Budget = Floor        (last step at least 1.25 x Target ago)
//! otherwise:                     Others = max(HeartbeatTime - StepEma, 0) + PhysicsStepTime
//!                                Budget = max(Target - Others, Floor)
//! ```
//!
//! StepEma is the scheduler's own smoothed step cost (alpha 0.1), subtracted because the engine's
//! heartbeat time already contains it. The reattach step skips both the correction and the late
//! rule: the scheduler did nothing in the frames it slept through.
//!
//! The correction lags: StepEma moves a tenth of the way each frame, so when a sustained load
//! arrives the budget zig-zags for some 25-45 frames (a frame that used the whole budget makes
//! the next heartbeat look busy, the next budget small, and so on) before it settles
//! (`tickstep sim --load normal=45x300us` shows it, with a StepEma column). That is the rule as
//! specified, kept. **Pass an explicit budget** ([`FrameScheduler::step_with_budget`]) instead when
//! the host knows its own slack each frame (it measures its frame itself, or its engine stats do
//! not include the scheduler's work), when a sudden sustained load must not see the budget swing,
//! or when it runs the scheduler outside a frame loop (a tool, a test, a batch job).
//!
//! # Sleeping while idle
//!
//! A bound scheduler is attached only with runnable work: a live queued task, an `every(0)` job
//! that is not mid-run, a woken future, or a deadline at most [`WAKE_WINDOW`] (34 ms) away.
//! Otherwise it detaches and its wake is its earliest deadline minus 34 ms; scheduling earlier
//! work moves the wake, cancelling the last timer clears it. The loop sleeps through frames in
//! which no scheduler is attached, so 1,000 timers in the future cost zero steps until the first
//! comes due.
//!
//! # Async tasks
//!
//! [`FrameScheduler::spawn`] runs a future as a task, polled under the same budget. A `Pending` future
//! does not suspend the rest of its step: it lets the step move on (docs/kernel.md §9.1);
//! its waker queues it for a later step, and step statistics count poll time only.
//! [`FrameScheduler::every_async`] arms its next deadline only after the run's future completes, so a
//! recurring async job never overlaps itself.
//!
//! # Costs
//!
//! The per-task path is built against the physical limit, a `VecDeque<Box<dyn FnOnce()>>` with
//! one clock read per task, and matches it: one box per task and tens of nanoseconds per task in
//! a step. Timers, recurring jobs and futures live in a slab and an indexed 4-ary heap, and fire
//! in a fraction of the time of tokio-util's `DelayQueue` at 100k–1M pending (hundreds of
//! nanoseconds each); the profiler adds a few nanoseconds per task. docs/kernel.md §14 holds the
//! design of that path and the measurements.
//!
//! # Decisions where the spec was open
//!
//! They are the rules of docs/kernel.md §13. Among them: use after destroy panics
//! (docs/kernel.md §13.1); handles are owned and dropping one does not cancel
//! (docs/kernel.md §13.2); origins are `#[track_caller]` call sites (docs/kernel.md §13.3); the
//! built-in clocks are dispatched statically (docs/kernel.md §13.11).
//!
//! # Time
//!
//! Everything reads time through [`Clock`]; nothing else calls the OS clocks. Tests use
//! [`ManualClock`], and a task that "takes time" advances it.

#![forbid(unsafe_code)]

pub mod clock;
mod clock_dispatch;
mod config;
mod error;
mod frame_loop;
mod frame_stats;
mod kernel;
mod metrics;
mod phase;
mod priority;
mod scheduler;
mod stats;
mod task_error;
mod zones;

pub use clock::{Clock, Instant, ManualClock, SystemClock};
pub use clock_dispatch::AnyClock;
pub use config::{BudgetMode, DEFAULT_BUDGET, DEFAULT_FRAME_TARGET, SchedulerConfig};
pub use error::{ErrorChain, FrameLoopError, ScheduleError, panic_message, seconds_to_duration};
pub use frame_loop::FrameLoop;
pub use frame_stats::FrameStats;
pub use kernel::{DIAGNOSTICS_WINDOW, Kernel, KernelConfig, OVERLOAD_WINDOWS, Overload};
pub use phase::{FramePhase, Role};
pub use priority::Priority;
pub use scheduler::{FrameScheduler, Labeled, ReusableTask, TaskHandle, WAKE_WINDOW, waits};
pub use stats::{HotTask, QueueDepths, Stats, StepWindow};
pub use task_error::TaskError;
pub use waits::{Sleep, TimedOut, Timeout, WaitUntil, YieldNow, wait_until, yield_now};
pub use zones::{profiler_zones, set_profiler_zones};
