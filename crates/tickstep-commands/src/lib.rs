//! Coroutine commands: robot behaviour written as `async` bodies, run once per cycle by a
//! single-threaded scheduler on an injected clock.
//!
//! # What it is
//!
//! A port of the model of `WPILib`'s coroutine command framework ("commands v3") to Rust. A
//! [`Command`] has a name, a priority, the [`Mechanism`]s it requires and a body: an `async`
//! closure that receives a [`Coroutine`]. The [`CommandScheduler`] polls every running body once per
//! [`CommandScheduler::run`] (typically every 20 ms from the robot loop). A body runs until it finishes
//! or reaches a yield point (`co.yield_now()`, `co.wait(..)`, `co.await_cmd(..)`, …), so command
//! code reads top to bottom instead of being split into `initialize/execute/isFinished/end`.
//!
//! ```
//! use std::time::Duration;
//! use tickstep_commands::{compose, Mechanism, CommandScheduler, Trigger};
//! use tickstep_commands::kernel::clock::ManualClock;
//!
//! let clock = ManualClock::new();
//! let scheduler = CommandScheduler::new(clock.clone());
//! let arm = Mechanism::new(&scheduler, "arm");
//! arm.set_default_command(&arm.idle()).unwrap();
//!
//! let raise = arm
//!     .run(|co| async move {
//!         co.wait(Duration::from_millis(100)).await; // drive the motor up for 100 ms
//!     })
//!     .with_priority(5)
//!     .named("raise");
//! let score = compose::sequence([&raise, &compose::wait(Duration::from_millis(40))]).unwrap();
//! Trigger::new(&scheduler, || true).on_true(&score);
//!
//! for _ in 0..10 {
//!     scheduler.run().unwrap();
//!     clock.advance(Duration::from_millis(20));
//! }
//! assert!(!scheduler.is_running(&score));
//! ```
//!
//! # The model
//!
//! * **One thread, no executor.** Handles are `Rc`-based and `!Send`. The scheduler polls each
//!   body with a no-op waker; every running command is mounted once per cycle, so awaitables
//!   simply re-check their condition when polled. Nothing runs between `run()` calls.
//! * **Phases of `run()`** (docs/commands.md §2.1): cleanup of dead scopes (their bindings'
//!   commands canceled) → sideloads → trigger polling → default commands for idle mechanisms →
//!   promotion of queued commands → execution of running commands, newest first.
//! * **Scheduled vs mounted.** `schedule` from outside a command *queues* ([`CommandScheduler::is_scheduled`]);
//!   promotion makes it *running* ([`CommandScheduler::is_running`]). At promotion a higher priority
//!   interrupts the owner of a shared mechanism, a tie goes to the newcomer, a lower priority is
//!   discarded; `schedule` already answers with a [`ScheduleResult`] against running and queued
//!   rivals.
//! * **Nesting.** `schedule`, `fork` or `await_cmd` from inside a running body starts a *child*
//!   at once, inside the parent's poll (it runs its first step in that same cycle). Children may
//!   use their ancestors' mechanisms, run at the maximum priority of their ancestors, never
//!   outlive their parent, and run before their parent in each cycle — so a parent awaiting a
//!   child resumes in the cycle the child ends. Interrupting a child cancels its composition.
//! * **Events** ([`EventKind`]): Scheduled, Mounted, Yielded, Completed, Interrupted (always
//!   directly before Canceled, and its text names the interrupter), Canceled,
//!   `CompletedWithError`, and Overran (watchdog). Endings are reported top-down, as the
//!   reference does: a command's Completed / `CompletedWithError` / Canceled comes before its
//!   descendants' Canceled. `on_cancel` runs only for an instance that was running, never on
//!   completion or error. [`CommandScheduler::on_lifecycle_event`] listens without the per-cycle
//!   Mounted/Yielded (which are then not even built).
//! * **Errors.** A body that returns `Err` ([`NeedsBody::executing_fallible`]) or panics emits
//!   `CompletedWithError`; its children and its root composition are canceled; then `run()`
//!   returns a [`RunError`] naming the command and the `#[track_caller]` location where it was
//!   scheduled, forked, awaited or bound — or, for a panic, resumes the panic. Listeners see the
//!   event but cannot suppress the failure. The rest of that cycle is skipped, as when an
//!   exception leaves the reference's loop; the other commands run next cycle.
//! * **Scopes.** Everything made inside a command's body lives in that command's scope: its
//!   bindings and sideloads die with it, and what a binding made there schedules runs as the
//!   command's child (at its priority). Made outside any command while an [`OpMode`] is active,
//!   bindings, sideloads, default commands *and scheduled commands* die when the opmode changes;
//!   otherwise they are global. A dying binding cancels the command it scheduled. Default
//!   commands stack by scope: the narrowest live one applies (a command-scoped one runs at once
//!   as that command's child), and the wider one returns when the scope ends.
//! * **Robot state** (docs/commands.md §12). A host says whether the robot is enabled, and
//!   optionally its mode, through [`RobotState`] (none installed: always enabled). A
//!   [`Mechanism`] is not controllable while disabled unless it says so; while the robot is
//!   disabled a command that requires one is refused ([`ScheduleResult::RobotDisabled`]), and the
//!   first disabled cycle cancels every such command with its whole composition
//!   ([`EventKind::Disabled`] then `Canceled`). Robot modes are [`OpMode`]s; a mode's
//!   [`CommandScheduler::on_mode`] setups make its defaults and bindings, torn down when it ends.
//! * **Runs** (docs/commands.md §13). Every scheduled instance is a [`Run`] with its own id:
//!   [`CommandScheduler::schedule_run`], [`Coroutine::fork_run`], [`Coroutine::await_run`] and
//!   [`CommandScheduler::cancel_run`] act on that run, never on a later run of the same command.
//! * **State machine graphs** (docs/commands.md §14): [`compose::StateMachine::graph`] as
//!   Graphviz DOT or Mermaid text.
//! * **Guards** (docs/commands.md §5.9, §6.8). Nothing loops without bound inside one `run()`: a command may start at most
//!   10,000 children per run ([`ScheduleResult::TooManyStarts`]) and a state machine may enter at
//!   most [`compose::MAX_STATE_ENTRIES_PER_RUN`] states without yielding
//!   ([`StateMachineError::TooManyEntries`]); both are typed errors naming the command.
//! * **Time** comes only from the injected [`Clock`](crate::kernel::clock::Clock): waits,
//!   debounce, multi-press windows, event timestamps, telemetry and the watchdog. Tests use a
//!   `ManualClock` and never sleep.
//!
//! # Costs
//!
//! A running command costs one boxed-future poll, a few borrows and slab lookups, and (while mount
//! timing is on) one clock read per cycle, with no allocation and no hash lookup: tens of
//! nanoseconds per command, under half of what a tokio `LocalSet` spends per poll. Scheduling
//! allocates; cycles do not. An idle bound trigger costs about ten nanoseconds a cycle.
//! [`CommandScheduler::set_mount_timing`]`(false)` removes the clock read for the tightest loops.
//! docs/commands.md §15 holds the cost model and the measurements.
//!
//! # Layout
//!
//! `scheduler/` is the engine and the only place its state is read or changed; handles
//! ([`Mechanism`], [`Trigger`], [`Coroutine`], bindings) reach it through a narrow crate-private
//! API. Identity and value types are leaves that import nothing of the crate: `id` (instance keys,
//! the mount marker), `trigger_node` (the signals a trigger is built from), `schedule_result`,
//! `event`, `scope`, `error`. The
//! handles and the engine still name each other (a mechanism builds commands that require it,
//! a command's body receives a coroutine that reaches the scheduler, and the scheduler stores
//! commands and creates coroutines), so those modules form one import cycle by design.
//!
//! # Decisions where the spec was open
//!
//! They are the rules of docs/commands.md §11, each naming where it departs from or follows the
//! reference. Among them: bodies are Rust futures (docs/commands.md §11.1); a fork is
//! all-or-nothing, and one refused for priority returns a [`ForkError`] the body handles instead
//! of cancelling the composition (docs/commands.md §11.4); `cancel_all` also cancels queued
//! commands (docs/commands.md §11.9); the watchdog names a greedy mount but cannot preempt it
//! (docs/commands.md §11.13).
//!
//! # Conformance: the reference's test suite
//!
//! The tests named `tests/ref_<class>.rs` port `WPILib` Commands v3's own suite
//! (`commandsv3/src/test/java/org/wpilib/command3/` of `wpilibsuite/allwpilib` at commit
//! `caf0fb2dccb462a1507888246646daa5ba38cd82`), one Rust test per Java test and named after it,
//! one test per parameter for parameterised tests, all on a `ManualClock`. What the reference
//! checks through JVM internals (cached trigger signals, scope objects, protobuf messages) is
//! checked through what a user can observe. Not expressible in Rust, so not ported:
//! * the null-argument tests: `CoroutineTest.waitUntilNullParamThrows`;
//!   `SequentialGroupBuilderTest.{andThenSingleNull, andThenThenVarargNullArray,
//!   andThenNullInVarargs, namedWithNull}`; `ParallelGroupBuilderTest.{optionalVarargNullArray,
//!   optionalNullInVarargs, requiringVarargNullArray, requiringNullInVarargs, namedWithNull}`;
//!   the thirteen `StagedCommandBuilderTest.*_throwsNPE` — Rust references cannot be null;
//! * builders reused after build: the eleven `StagedCommandBuilderTest.*_throwsAfterBuild` — the
//!   builder stages are consumed by value, so reuse does not compile;
//! * `epilogue/SchedulerIsLoggableWithEpilogue` (a compile check for the Java logging
//!   annotation processor; it has no tests) — no Epilogue in Rust.

#![forbid(unsafe_code)]

pub mod compose;
mod error;
mod event;
mod id;
mod metrics;
mod robot;
mod run;
mod schedule_result;
mod scheduler;
mod scope;
mod trigger;
mod trigger_node;

pub use error::{
    BoxError, CompositionError, ConflictPair, DefaultCommandError, ForkError, RunError,
    StateMachineError, TriggerError,
};
pub use event::{CommandId, Event, EventKind};
pub use robot::{RobotState, RobotStateCell};
pub use run::Run;
pub use schedule_result::ScheduleResult;
pub use scheduler::Coroutine;
pub use scheduler::Mechanism;
pub use scheduler::awaitables::WaitResult;
pub use scheduler::awaitables::{CycleWaitUntil, CycleWaitUntilTimeout, CycleYieldNow, Join, Wait};
pub use scheduler::command::{Command, CommandBuilder, NeedsBody};
pub use scheduler::telemetry::{CommandInfo, Telemetry};
pub use scheduler::{CommandScheduler, DEFAULT_WATCHDOG_LIMIT};
pub use scope::OpMode;
pub use trigger::Trigger;

/// The kernel layer (`tickstep-kernel`), whose clocks a [`CommandScheduler`] runs on: a user of
/// this crate alone names [`kernel::clock::ManualClock`] or [`kernel::clock::SystemClock`] from
/// here, with no second dependency (docs/crates.md §1.3).
pub use tickstep_kernel as kernel;
