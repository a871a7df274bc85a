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
//! An explicit [`FrameScheduler::step_with_budget`] wins. Otherwise a target frame selects frame-aware
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
//! The per-task path is designed against the physical limit, a `VecDeque<Box<dyn FnOnce()>>`
//! with one clock read per task:
//!
//! * `schedule`: one `Box` holding the closure together with its call site and origin, pushed
//!   inline into its queue (two words, like the bare `Box<dyn FnOnce()>`); no slot, no other
//!   allocation. The handle is a weak pointer plus a per-queue sequence number.
//! * Per task in a step: one queue pop, one clock read for the budget check (none at Kernel
//!   priority), the call under `catch_unwind` (free unless it panics), one short `RefCell` borrow.
//!   [`SystemClock`] reads the CPU's time-stamp counter through `quanta` (~17 ns here, against
//!   30–90 ns for `std::time::Instant::now()` on a virtual machine), statically dispatched.
//! * The profiler reuses the budget-check read as the task's end time, so profiling adds no clock
//!   read, only one array update at an origin index interned once per call site.
//! * When the budget is spent with the profiler on, the step attributes its deferred tasks to
//!   their origins by looking at no more than 8 of them (all of them up to 8, else 8 evenly
//!   spaced samples whose shares add up to the exact count), so the cost does not grow with the
//!   backlog; the sampled attribution (cold entries spread over the backlog, ~2 µs) is made at
//!   the next step's start, inside its budget, not past the budget that ran out
//!   (`overrun_backlog_100k`: worst overrun past a 2 ms budget with 100,000 tasks waiting).
//! * Recurring jobs, timers, futures and entries live in a slab of one-cache-line slots.
//!   Timers sit on an indexed 4-ary heap: O(log n) arm and cancel (cancel removes at once), and a
//!   burst of due timers is split off in one sequential pass instead of popped one by one, put in
//!   firing order by one radix pass on the deadline plus a sort of each small bucket in cache. A
//!   due timer is queued straight from its heap node, without touching its slot.
//! * With 100k timers pending, cost is cache misses, not instructions: a burst fires in deadline
//!   order, which is random in memory. So an `after()` closure of up to 64 bytes is not boxed but
//!   moved into a pool of its own closure type (safe code, found by `TypeId`): no allocation per
//!   timer, and the closures sit densely side by side. Freed slots and pool cells are reused
//!   lowest index first (a two-level bitmap), not in the random order a burst freed them, so the
//!   arms of the next burst write their slots, closures and heap positions front to back, where
//!   the prefetcher hides the misses: -35% per timer at 100k pending, -46% at 1M, -19% per
//!   cancel, at the price of a few instructions per spawn (`spawn_run` 0.75 -> 0.79). The drain
//!   loads the slots and pooled closures of the next 32 tasks of a burst in one tight loop, where
//!   the misses overlap, instead of waiting for them one task at a time. A [`TaskHandle`] is two
//!   words, so a program's table of 100k handles stays in cache when it cancels them.
//! * `schedule_entry`: no allocation at all, for owners that queue the same work repeatedly.
//! * Async: the boxed future; wakers are pooled and reused. A wake takes one short mutex (wakers
//!   must be `Send`); the scheduler drains woken tasks once per step.
//!
//! Measured with `cargo run --release -p tickstep-bench -- kernel` (ours and the peer interleaved
//! in one process, both structures kept warm across rounds; medians of five runs on a shared
//! two-core virtual machine, where single runs swing by 20%), as ours / peer:
//!
//! | measure | ratio | per operation |
//! |---|---|---|
//! | `schedule_step`, against `VecDeque<Box<dyn FnOnce()>>` + `Instant::now()` per task | 0.95 | 43 ns |
//! | `timer_fire_100k`, against tokio-util `DelayQueue` (paused clock) | 0.39 | 158 ns |
//! | `timer_fire_1m`, same peer | 0.25 | 214 ns |
//! | `timer_cancel_100k`, `DelayQueue` insert + remove | 0.69 | 198 ns |
//! | `spawn_run`, against async-executor `LocalExecutor` | 0.80 | 175 ns |
//! | `profiler_overhead`, profiler on minus off | | 4 ns |
//!
//! # Decisions where the spec was open
//!
//! Each is a rule of docs/kernel.md §13.
//!
//! * **Use after destroy** panics with `scheduler is destroyed` (`#[track_caller]`), for every
//!   creating call and `bind`; `step` does nothing; `on_error` is ignored.
//! * **Handles** are owned, not clonable, and dropping one does not cancel (scopes own and cancel
//!   them). `is_cancelled` is true when a cancel took effect or destroy cancelled the task. A
//!   one-shot that is running counts as run: cancelling it from inside itself does nothing.
//!   A cancelled queued one-shot's captures are dropped when its turn is skipped.
//! * **Origins**: the `#[track_caller]` call site is the Rust form of `debug.info(fn, "sl")`;
//!   [`FrameScheduler::with_origin`] labels one task, [`FrameScheduler::set_task_origin`] renames a site.
//! * **Panic reporting** uses a process-wide panic hook installed once, which captures the panic
//!   location and backtrace while a step runs its tasks (and stays silent: the report goes to
//!   `on_error`, or to `tracing::error!` when no handler is connected). Panics outside steps reach
//!   the previous hook unchanged. A recurring job that panics keeps its cadence.
//! * **Stagger** `n` counts `every()` calls on the scheduler, the first being 1.
//! * **Binding** a scheduler that never stepped is not a "reattach": its first step is budgeted by
//!   the no-earlier-step rule (the floor). Nested `step()` from a task is a no-op.
//! * **TasksRun** counts each poll of a future as a run.
//! * **Entries** may be queued again while running (they run once more on a later step); queuing
//!   one that is already queued is [`ScheduleError::EntryBusy`] rather than a silent double run.
//! * **Diagnostics** are server-only ([`ScheduleError::DiagnosticsServerOnly`] on a client); after
//!   an [`Overload`] the streak starts over, so sustained overload reports every three windows.
//! * **Deferral attribution** (the window's deferred origins) is exact up to 8 deferred tasks
//!   a step, else estimated from 8 evenly spaced samples at a phase that moves each step (their
//!   shares sum to the exact count); the sampling is made at the next step's start (or by the
//!   first `stats()`/`take_step_window()` before it), so diagnostics stay inside a budget.
//!   [`Stats::pending`] counts distinct waiting tasks; the window's `deferred`, task-steps.
//! * **Ends are inclusive**: [`FrameLoop::run_for`] / [`FrameLoop::run_to`] serve every deadline
//!   at or before the end (the frame that serves it runs and is not slept past), as a manual
//!   step does for `deadline <= now`.
//! * **Waits**: a [`FrameScheduler::sleep`] past the end of the clock stays pending and arms nothing;
//!   its wake timer runs at Kernel priority (it only wakes); [`wait_until`] re-polls every step.
//! * **Phase schedulers**: `phase_scheduler(Heartbeat)` is the main scheduler.
//! * **Clocks**: [`SystemClock`] and [`ManualClock`] passed directly are statically dispatched
//!   (and a `SystemClock`'s budget check compares raw counter ticks); any other [`Clock`] works
//!   through a vtable. [`Kernel::boot`] takes a `Clone` clock so every scheduler it makes keeps
//!   the concrete type.
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
mod phase;
mod priority;
mod recorded;
mod scheduler;
mod stats;
mod task_error;
pub mod waits;
mod zones;

pub use clock::{Clock, Instant, ManualClock, SystemClock};
pub use clock_dispatch::AnyClock;
pub use config::{BudgetMode, DEFAULT_BUDGET, DEFAULT_TARGET_FRAME, SchedulerConfig};
pub use error::{ErrorChain, FrameLoopError, ScheduleError, panic_message, seconds_to_duration};
pub use frame_loop::FrameLoop;
pub use frame_stats::FrameStats;
pub use kernel::{DIAGNOSTICS_WINDOW, Kernel, KernelConfig, OVERLOAD_WINDOWS, Overload};
pub use phase::{FramePhase, Role};
pub use priority::Priority;
pub use scheduler::{FrameScheduler, Labeled, ReusableTask, TaskHandle, WAKE_WINDOW};
pub use stats::{HotTask, QueueDepths, Stats, StepWindow};
pub use task_error::TaskError;
pub use waits::{Sleep, TimedOut, Timeout, WaitUntil, YieldNow, wait_until, yield_now};
pub use zones::{profiler_zones, set_profiler_zones};
