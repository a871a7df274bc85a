//! tickstep: run work on a tick, under a budget, on one clock.
//!
//! This crate is the front door. It re-exports the three layers — [`kernel`] (clocks, the
//! frame-budgeted scheduler, the frame loop), [`commands`] (coroutine commands, mechanisms,
//! triggers) and [`schedules`] (durable schedules on `SQLite`) — and adds [`Runtime`], which runs all
//! three on one clock and one frame loop.
//!
//! ```
//! use std::{cell::Cell, rc::Rc, time::Duration};
//! use tickstep::Runtime;
//! use tickstep::kernel::ManualClock;
//! use tickstep::schedules::{ObjId, Options, Value};
//!
//! let clock = ManualClock::new();
//! let rt = Runtime::builder().manual_clock(clock.clone()).in_memory_store().build()?;
//!
//! // A durable schedule: ring the bell every minute.
//! let rings = Rc::new(Cell::new(0));
//! let r = rings.clone();
//! rt.verb("ring", move |_call| { r.set(r.get() + 1); Ok(Value::Int(0)) });
//! let bell = ObjId(1);
//! let mut txn = rt.schedules().begin(bell);
//! txn.schedule_every(bell, "ring", 60.0, vec![], Options::new()).unwrap();
//! txn.commit().unwrap();
//!
//! rt.run_for(Duration::from_secs(3601))?; // a simulated hour (and a second), in virtual time
//! assert_eq!(rings.get(), 60);
//! # Ok::<(), tickstep::RuntimeError>(())
//! ```
//!
//! # The model
//!
//! (Specified in docs/runtime.md §1–§6.)
//!
//! A [`Runtime`] owns one [`RuntimeClock`] (real or virtual) and one kernel
//! ([`kernel::Kernel`]): a [`kernel::FrameLoop`] in the server or client role with the main
//! scheduler bound to its Heartbeat phase. The other two layers run *as kernel work*, so the
//! kernel's budget, priorities, error isolation and diagnostics cover all of it:
//!
//! * **Commands.** The command scheduler's `run()` is a kernel job at High priority every command
//!   period (20 ms by default, like a robot loop). A command that fails — `Err` or a panic —
//!   is not swallowed: the command layer says the robot program crashes, so here the command
//!   cycle stops and the `run_*` call that saw it returns [`RuntimeError::Command`] or
//!   [`RuntimeError::CommandPanicked`]. The kernel and the schedules keep their state; the host
//!   decides whether to carry on.
//! * **Schedules.** The engine is ticked by a kernel timer armed for its earliest deadline, at
//!   most once per schedules tick (10 ms by default). Each firing becomes its own kernel task at
//!   the firing priority (Normal by default): a sync [verb](Runtime::verb) runs as one task, an
//!   [async verb](Runtime::async_verb) as an async task that may wait across frames. The verb's
//!   return value, error value or panic is reported to the engine by run id, so each firing is
//!   isolated and counted — a panicking verb is a fault of its schedule, never of the runtime.
//! * **Driving.** [`Runtime::run_for`], [`Runtime::run_until`] and [`Runtime::step_frame`] run
//!   frames. With a [`kernel::ManualClock`] the frame loop's waits and idle sleeps move virtual
//!   time at once, so a test that simulates an hour or a day takes milliseconds: an idle runtime
//!   is an idle kernel that sleeps straight to its next deadline.
//! * **One thread.** Every handle is `Rc`-based and `!Send` (see the `compile_fail` example on
//!   [`Runtime`]). Re-entrancy is allowed everywhere: a verb may create schedules
//!   ([`VerbCall::schedules`]), schedule commands or kernel tasks; a command may create schedules.
//!   No borrow of the runtime is held while user code runs.
//!
//! # One host core
//!
//! (Specified in docs/runtime.md §8.)
//!
//! The wiring of the schedules engine onto a kernel is [`host::HostCore`], from the
//! `tickstep-host` crate, shared by every host: the [`Runtime`] (so the tokio driver and
//! `tickstep serve`) and the Bevy plugin (`tickstep-bevy`). It holds the kernel runner, sync and
//! async verbs, firing limits and kill, the running list, settling interrupted firings, opening
//! the store and the counters; a host keeps driving frames and its clock, the core's type
//! parameter. [`host::HostSettings`] is the one settings type: [`RuntimeBuilder`] and the
//! plugin's builder each hold one and delegate the same knobs to it (the kernel's budget and
//! frame target included), checked the same way ([`SettingsError`]).
//!
//! # Firings are tasks
//!
//! (Specified in docs/runtime.md §4.5–§4.10.)
//!
//! Each firing the runtime runs is a kernel task with limits ([`FiringLimits`]: a runtime-wide
//! default from [`RuntimeBuilder::firing_limits`], per schedule from its `seconds` and `ticks`
//! options — stored with the schedule, so they survive a restart — or, in memory, from
//! [`Runtime::set_firing_limits`]), listed by [`Runtime::running_firings`] and killed by
//! [`Runtime::kill_firing`]:
//!
//! * **`seconds`** is a wall-clock limit on the runtime's clock (virtual time included). An async
//!   verb past it is dropped at its next poll; the firing arms one kernel timer at its limit, so a
//!   verb asleep or waiting is woken then to be dropped. Fault `time_limit`. A sync verb cannot be
//!   preempted (Rust cannot stop a function mid-call): its run is measured and, past the limit,
//!   reported `time_limit` after it returns (its return value is discarded, its effects stand).
//! * **`ticks`** is a poll budget for async verbs: how many times its future may be polled (one
//!   poll is one kernel task run, at most one per step). The poll past it drops the verb: fault
//!   `tick_limit`. A sync verb is one poll.
//! * **Kill** cancels the firing's kernel task (an async verb's future is dropped at once, a
//!   queued sync verb never runs): fault `killed`. A sync verb that kills its own firing is
//!   reported `killed` when it returns.
//!
//! All three are faults of the schedule like any other: counted toward `max_faults`, shown in
//! `schedule_info`'s `last_fault`. A schedule's own limits are stored with it (docs/runtime.md
//! §4.5, docs/schedules.md §11.32): a restart keeps them, and only a `set_firing_limits` override,
//! held in memory, must be set again. Cost: one list entry per running firing, one counter per
//! poll, one kernel timer per firing with a `seconds` limit.
//!
//! # Inside a tokio server (feature `tokio`)
//!
//! (Specified in docs/runtime.md §5.6–§5.12; the server in docs/serve.md.)
//!
//! A network server runs the runtime as a future: `TokioDriver` runs its frames on the thread
//! that awaits it (`#[tokio::main]`'s body of either flavour, or a `LocalSet`; the future is
//! `!Send`, so `tokio::spawn` refuses it — docs/runtime.md §5.16), sleeping on tokio's timer between frames so
//! socket tasks share the thread, and straight to the kernel's next wake when idle (an idle
//! server runs no frames). A `RuntimeHandle` (`Send`) delivers work from other threads and wakes
//! an idle runtime; shutdown on a signal or a handle commits the store, and
//! `driver.run_until(tickstep::shutdown_signal()).await` stops on Ctrl-C or SIGTERM, the signal a
//! service manager stops a service with; with a `ManualClock` the runtime follows tokio's clock,
//! so tests use tokio's paused clock for virtual time. The
//! `tokio_driver` module docs say how (threading, wake-ups, shutdown, time); `tickstep serve`
//! in the CLI is a whole world server built on it.
//!
//! # A web dashboard (feature `dashboard`)
//!
//! (Specified in docs/serve.md §13.)
//!
//! The `dashboard` module serves the schedules (list, detail, actions), the frame budget live
//! with the hot tasks, the running commands and, on `PostgreSQL`, the cluster — as an axum router a
//! `TokioDriver` host mounts (`dashboard::router`, what a host adds coming through
//! `dashboard::DashboardHost`), or for a store with no engine running (`dashboard::store_router`,
//! the `tickstep dashboard --db` command). `tickstep serve --http` mounts the same router.
//!
//! # Costs
//!
//! On top of each layer's own costs, the runtime adds one kernel job per command period, one
//! kernel timer per schedules wake, and per firing one boxed kernel task under `catch_unwind`; a
//! runtime built [`RuntimeBuilder::without_commands`] with no due schedule takes no step at all.
//! docs/runtime.md §10 holds the details and the benchmark.
//!
//! # Decisions where the spec was open
//!
//! They are the rules of docs/runtime.md §9. Among them: the default world is [`OpenWorld`], in
//! which every principal is a wizard (docs/runtime.md §9.1); verbs are code registered after
//! `build()`, and a loaded schedule whose verb has no code faults rather than being skipped
//! (docs/runtime.md §9.2); firings in flight at the last save are abandoned at build time
//! (docs/runtime.md §9.3) unless the builder asks to run them again
//! ([`RuntimeBuilder::rerun_interrupted`], docs/runtime.md §6.7); after a command failure the cycle stays stopped until
//! [`Runtime::restart_commands`] (docs/runtime.md §9.4, §9.12).

#![forbid(unsafe_code)]
// docs.rs (and CI's docs.rs build) marks each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod builder;
mod clock;
mod cycle;
#[cfg(feature = "dashboard")]
pub mod dashboard;
mod error;
mod hosted;
#[cfg(feature = "prometheus")]
pub mod prometheus;
mod runtime;
#[cfg(feature = "tokio")]
mod signal;
#[cfg(feature = "tokio")]
pub mod tokio_driver;
mod wiring;

pub use tickstep_commands as commands;
pub use tickstep_kernel as kernel;
pub use tickstep_schedules as schedules;

pub use builder::{
    DEFAULT_COMMAND_PERIOD, DEFAULT_FRAME_RATE, RuntimeBuilder, STORE_FILE_NAME, Store,
    default_store_path,
};
pub use clock::RuntimeClock;
pub use cycle::CycleView;
pub use error::RuntimeError;
pub use host::{
    DEFAULT_SCHEDULES_TICK, DEFAULT_SCHEDULES_TICK_TIME, FiringLimits, RunningFiring,
    SettingsError, VerbCall, VerbResult,
};
pub use runtime::{Reporter, Runtime, RuntimeStats};
#[cfg(feature = "tokio")]
pub use signal::shutdown_signal;
/// The kernel's futures, which async verbs await through [`VerbCall`] (re-exported here so a verb
/// can name them): one implementation for kernel tasks and verbs alike.
pub use tickstep_kernel::{Sleep, TimedOut, Timeout, WaitUntil, wait_until, yield_now};
/// The one allow-everything world, the runtime's default (re-exported from the schedules layer).
pub use tickstep_schedules::OpenWorld;
#[cfg(feature = "tokio")]
pub use tokio_driver::{DriverStopped, RuntimeHandle, TokioDriver};

/// The host core every host shares, from `tickstep-host` (docs/runtime.md §8): what the
/// [`Runtime`] runs on and what the Bevy plugin and a host of your own build on.
///
/// ```
/// use tickstep::host::{HostCore, HostSettings};
/// use tickstep::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
/// let clock = ManualClock::new();
/// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
/// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
/// assert_eq!(core.running_count(), 0);
/// ```
pub mod host {
    pub use tickstep_host::{
        DEFAULT_SCHEDULES_TICK, DEFAULT_SCHEDULES_TICK_TIME, FiringLimits, HostCore, HostCounts,
        HostError, HostSettings, RunningFiring, SettingsError, VerbCall, VerbResult,
        program_namespace,
    };
}

/// The workspace README's examples, compiled and run as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
