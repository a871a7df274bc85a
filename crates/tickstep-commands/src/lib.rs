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
//! Per running command per cycle: two `RefCell` borrows and slab lookups, one boxed-future poll
//! inside `catch_unwind` (zero-cost unless it panics), and — while mount timing is on — one raw
//! clock read (a mount starts where the previous ended; for a `SystemClock` one time-stamp-counter
//! read, kept in ticks and scaled to nanoseconds only when telemetry reads it, docs/commands.md
//! §10.4). No allocation and no hash lookup: instances live in a generational slab whose per-cycle
//! fields are kept apart from the cold ones, mechanisms are indices, a command finds its live
//! instance through a cached key, and a yield checks its binding with one integer comparison.
//! Events are not even built when no listener exists. Per bound trigger per cycle: one `Rc`
//! clone, one memoized signal evaluation and a few comparisons. Scheduling allocates (the
//! instance's cold half, its body future); cycles do not.
//! [`CommandScheduler::set_mount_timing`]`(false)` removes the per-mount clock read (and with it the
//! watchdog and per-command run times) for the tightest loops.
//!
//! Measured on a shared two-core VM while other builds ran (load average 6–8;
//! `cargo build --release -p tickstep-bench && target/release/tickstep-bench commands --quick
//! --json`, five runs, ratios from the same run): with 1,000 commands yielding every cycle, a
//! `run()` costs 0.43–0.47× (median 0.45×) what a tokio current-thread `LocalSet` spends per task
//! poll on long-lived tasks looping on `tokio::task::yield_now` with mount timing on, 0.21–0.22×
//! with it off, and 0.36–0.38× of `async_executor::LocalExecutor`. In absolute terms 56–58 ns per
//! command timed (20–28 ns of it is the time-stamp-counter read itself on that machine) and 26–28 ns
//! untimed, against 124–138 ns per tokio poll — still 9–21× the bare limit of polling the same
//! futures from a `Vec`, which keeps no books at all. An idle bound trigger costs about 13 ns per
//! cycle.
//!
//! The robot's state and runs (docs/commands.md §12, §13) against the build before them (main at
//! `b47eedf`), counted in instructions because timings on the shared VM swung by 2× between runs
//! of the same binary: valgrind's callgrind over a release build of a program that runs 1,000
//! commands on a `ManualClock` for 201 cycles and for 1, the difference divided by 200 cycles.
//! Yielding every cycle: 224.4 → 225.5 instructions per command (+0.5 %, the host's state read
//! once per `run()`). Starting a child that ends at once and awaiting it, every cycle: 3,418 →
//! 3,475 per command by command (`await_cmd`, +1.7 %), 3,498 by run (`fork_run` + `await_run`,
//! +2.3 %). Most of a fork is the start itself (the instance's two allocations, its body, the
//! ancestry walk); a run adds only its id beside the key. In time, by run against by command in
//! the same process (`target/release/tickstep-bench commands --quick`, row `fork_await_run`,
//! three runs at load average 10–12): 311–318 ns against 310–314 ns per fork and await, a ratio
//! of 1.006–1.011.

//! # Layout
//!
//! `scheduler/` is the engine and the only place its state is read or changed; handles
//! ([`Mechanism`], [`Trigger`], [`Coroutine`], bindings) reach it through a narrow crate-private
//! API. Identity and value types are leaves that import nothing of the crate: `id` (instance keys,
//! the mount marker), `signal` (trigger nodes), `schedule_result`, `event`, `scope`, `error`. The
//! handles and the engine still name each other (a mechanism builds commands that require it,
//! a command's body receives a coroutine that reaches the scheduler, and the scheduler stores
//! commands and creates coroutines), so those modules form one import cycle by design.
//!
//! # Decisions where the spec was open
//!
//! Each is a rule of docs/commands.md §11.
//!
//! * Bodies are Rust futures; a [`Coroutine`] used by any command other than its own panics with
//!   "Coroutines can only be used by the command bound to them" (it is a programmer error, and
//!   inside another body the panic becomes that body's failure).
//! * Infallible bodies use [`NeedsBody::executing`] (output `()`, so `loop { .. }` bodies type
//!   check); fallible ones use [`NeedsBody::executing_fallible`] (`Result<(), BoxError>`, so `?`
//!   works on any error).
//! * `await_cmd`, `await_all` and `await_any` start their children when called (not at the first
//!   poll of the returned future), like the reference's blocking calls. On a command that is
//!   already running they wait for that instance instead of failing; awaiting oneself, or two
//!   commands awaiting each other, blocks only those commands.
//! * A fork is all-or-nothing: mutual conflicts (every pair listed), an already-running command,
//!   or a lost priority conflict fail it before anything starts. Propagating the error with `?`
//!   fails — and so cancels — the composition; compositions in [`compose`] do exactly that.
//! * A queued command displaced by a newer conflicting schedule emits Interrupted then Canceled;
//!   a queued command discarded at promotion emits Canceled. Neither runs `on_cancel`.
//! * Trigger edges on the first poll: true counts as a rising edge; false is not a falling edge
//!   (see [`Trigger`]) — kept because a button never pressed was not released, so `on_false`
//!   firing at startup surprises; [`Trigger::first_low_is_falling_edge`] gives the reference's
//!   rule to code that relies on it. `retry_while_true` reschedules every cycle the command is not live while
//!   the signal holds. `unbind` ends a binding like its scope ending (its command is canceled).
//!   Each binding remembers only the last instance it scheduled, so global bindings never grow.
//! * Sideloads get a coroutine that can yield, wait and fork; a sideload is not a command, so
//!   what it forks is scheduled in the sideload's scope (as the reference does), not as a child.
//! * Matching the reference where tickstep used to differ: state machines check a state's
//!   transitions right after entering it (a condition already true fires), let the last
//!   `on_completion` win and check `on_completion_if` first, run `on_enter` after the state's
//!   command started and `on_exit` before it is canceled, move one state per cycle when a state
//!   completes before the machine yielded in it, and restart a state on a `switch_from_any` into
//!   itself; `multi_press` stays true while N presses fall in the window (also after release);
//!   `until` names `(A | Until Condition)`; an empty sequence is allowed and named `""`;
//!   `request_cancellation` stops the body at its await; replacing a default command stops the
//!   old one.
//! * `cancel_all` cancels queued commands too (the reference keeps them queued); `on_cancel` runs
//!   only for the running ones.
//! * Interrupting a child cancels its composition (the highest ancestor the newcomer does not
//!   share), as in the reference; ties and priorities compare effective priorities.
//! * Listeners and `on_cancel` hooks run with no command mounted: what they schedule is queued at
//!   top level, never a child of whatever body happened to trigger them.
//! * `Mechanism::idle` runs at `i32::MIN`, so any command can take the mechanism from it.
//! * The watchdog (default [`DEFAULT_WATCHDOG_LIMIT`], 20 ms) can only *name* a greedy mount:
//!   Rust cannot preempt a poll.
//! * A fork or await refused because a higher-priority command holds a mechanism returns a
//!   [`ForkError`] the body handles (the reference instead interrupts and cancels the whole
//!   composition): the error stays visible in the body and in `run()`'s result, where a silent
//!   cancellation only shows as an event. [`Coroutine::set_cancel_on_fork_failure`]`(true)` gives
//!   the reference's behaviour.
//! * `multi_press` with a count below 1 or a zero window is a [`TriggerError`] (the reference
//!   returns an always-true or always-false trigger): such a trigger is almost surely a mistake.
//! * A state machine starts in its first state unless [`compose::StateMachine::start_in`] says
//!   otherwise, so it cannot lack an initial state (the reference fails at run time), and it
//!   requires its states' mechanisms at their highest priority (the reference's requires
//!   nothing), so it claims everything before any state starts. Canceling it runs the current
//!   state's `on_exit` (the reference's does not), so cleanup does not depend on how a state
//!   was left.
//! * A default command that sets its own mechanism's default replaces itself; the new one starts
//!   at the next default-command step (no recursion within one `run()`).
//! * Unbound triggers are evaluated only when read ([`Trigger::get`]) or bound; the reference
//!   polls every trigger each cycle. Stateful combinators must therefore be bound or read every
//!   cycle to see every edge.
//! * The robot's state comes through a trait the host implements, always enabled without one;
//!   the disabled sweep runs once, in the first disabled cycle; a child refused because the
//!   robot is disabled cancels its whole composition whatever `set_cancel_on_fork_failure` says;
//!   robot modes are opmodes (docs/commands.md §11.26–§11.31).
//! * Runs are the instance ids the scheduler already had, handed out with their slab key, so a
//!   run costs nothing to keep; `schedule` still answers a plain `ScheduleResult`
//!   (docs/commands.md §11.32–§11.34).
//! * A state machine's graph comes from its declarations, with picked targets drawn as choice
//!   nodes and edges named by `labeled` (docs/commands.md §11.35–§11.36).
//! * Doc examples use this crate's own paths (`tickstep_commands::…`, and the clock through the
//!   re-exported [`kernel`]: `tickstep_commands::kernel::clock::…`), so each compiles for a user
//!   who depends on this crate alone (docs/crates.md §1.3); the facade re-exports this crate as
//!   `tickstep::commands`.
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
mod recorded;
mod robot;
mod run;
mod schedule_result;
mod scheduler;
mod scope;
mod signal;
mod trigger;

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
