//! Coroutine commands: robot behaviour written as `async` bodies, run once per cycle by a
//! single-threaded scheduler on an injected clock.
//!
//! # What it is
//!
//! A port of the model of `WPILib`'s coroutine command framework ("commands v3") to Rust. A
//! [`Command`] has a name, a priority, the [`Mechanism`]s it requires and a body: an `async`
//! closure that receives a [`Coroutine`]. The [`Scheduler`] polls every running body once per
//! [`Scheduler::run`] (typically every 20 ms from the robot loop). A body runs until it finishes
//! or reaches a yield point (`co.yield_now()`, `co.wait(..)`, `co.await_cmd(..)`, …), so command
//! code reads top to bottom instead of being split into `initialize/execute/isFinished/end`.
//!
//! ```
//! use std::time::Duration;
//! use tickstep_commands::{compose, Mechanism, Scheduler, Trigger};
//! use tickstep_kernel::clock::ManualClock;
//!
//! let clock = ManualClock::new();
//! let scheduler = Scheduler::new(clock.clone());
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
//! * **Phases of `run()`** (the seed's order): cleanup of dead scopes (their bindings'
//!   commands canceled) → sideloads → trigger polling → default commands for idle mechanisms →
//!   promotion of queued commands → execution of running commands, newest first.
//! * **Scheduled vs mounted.** `schedule` from outside a command *queues* ([`Scheduler::is_scheduled`]);
//!   promotion makes it *running* ([`Scheduler::is_running`]). At promotion a higher priority
//!   interrupts the owner of a shared mechanism, a tie goes to the newcomer, a lower priority is
//!   discarded; `schedule` already answers with a [`ScheduleResult`] against running and queued
//!   rivals.
//! * **Nesting.** `schedule`, `fork` or `await_cmd` from inside a running body starts a *child*
//!   at once, inside the parent's poll (it runs its first step in that same cycle). Children may
//!   use their ancestors' mechanisms, run at the maximum priority of their ancestors, never
//!   outlive their parent, and run before their parent in each cycle — so a parent awaiting a
//!   child resumes in the cycle the child ends. Interrupting a child cancels its composition.
//! * **Events** ([`EventKind`]): Scheduled, Mounted, Yielded, Completed, Interrupted (always
//!   directly before Canceled), Canceled, `CompletedWithError`, and Overran (watchdog). A
//!   command's descendants end before it does. `on_cancel` runs only for an instance that was
//!   running, never on completion or error.
//! * **Errors.** A body that returns `Err` ([`NeedsBody::executing_fallible`]) or panics emits
//!   `CompletedWithError`; its children and its root composition are canceled; then `run()`
//!   returns a [`RunError`] naming the command and the `#[track_caller]` location where it was
//!   scheduled, forked, awaited or bound — or, for a panic, resumes the panic. Listeners see the
//!   event but cannot suppress the failure. The rest of that cycle is skipped, as when an
//!   exception leaves the reference's loop; the other commands run next cycle.
//! * **Scopes.** Bindings and sideloads made inside a command's body die with the command;
//!   made outside any command while an [`OpMode`] is active, they die when the opmode changes;
//!   otherwise they are global. A dying binding cancels the command it scheduled.
//! * **Time** comes only from the injected [`Clock`](tickstep_kernel::clock::Clock): waits,
//!   debounce, multi-press windows, event timestamps, telemetry and the watchdog. Tests use a
//!   `ManualClock` and never sleep.
//!
//! # Costs
//!
//! Per running command per cycle: two `RefCell` borrows and slab lookups, one boxed-future poll
//! inside `catch_unwind` (zero-cost unless it panics), and — while mount timing is on — one clock
//! read (a mount starts where the previous ended). No allocation and no hash lookup: instances
//! live in a generational slab whose per-cycle fields are kept apart from the cold ones, mechanisms
//! are indices, a command finds its live instance through a cached key, and a yield checks its
//! binding with one integer comparison. Events are not even built when no listener exists. Per
//! bound trigger per cycle: one `Rc` clone, one memoized signal evaluation and a few comparisons.
//! Scheduling allocates (the instance's cold half, its body future); cycles do not.
//! [`Scheduler::set_mount_timing`]`(false)` removes the per-mount clock read (and with it the
//! watchdog and per-command run times) for the tightest loops.
//!
//! Measured on a shared, loaded two-core VM (`cargo run --release -p tickstep-bench -- commands`):
//! with 1,000 commands yielding every cycle a `run()` costs about 43 ns per command with mount
//! timing on (`SystemClock`; the clock read is about 25 ns of it) and about 16 ns with it off —
//! 16–43 µs per 1,000-command cycle, well under the 100 µs budget, but 10–25× the bare limit of
//! polling the same futures from a `Vec` (about 1.7 ns each), which keeps no books at all. An idle
//! bound trigger costs about 8 ns per cycle.
//!
//! # Decisions where the seed was open
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
//!   (see [`Trigger`]). `retry_while_true` reschedules every cycle the command is not live while
//!   the signal holds. `unbind` ends a binding like its scope ending (its command is canceled).
//!   Each binding remembers only the last instance it scheduled, so global bindings never grow.
//! * Sideloads get a coroutine that can yield, wait and fork; a sideload is not a command, so
//!   what it forks is scheduled in the sideload's scope (as the reference does), not as a child.
//! * Replacing a default command does not stop a running instance of the old one.
//! * `cancel_all` cancels queued commands too (the reference keeps them queued); `on_cancel` runs
//!   only for the running ones.
//! * Interrupting a child cancels its composition (the highest ancestor the newcomer does not
//!   share), as in the reference; ties and priorities compare effective priorities.
//! * Listeners and `on_cancel` hooks run with no command mounted: what they schedule is queued at
//!   top level, never a child of whatever body happened to trigger them.
//! * `Mechanism::idle` runs at `i32::MIN`, so any command can take the mechanism from it.
//! * The watchdog (default [`DEFAULT_WATCHDOG_LIMIT`], 20 ms) can only *name* a greedy mount:
//!   Rust cannot preempt a poll.

#![forbid(unsafe_code)]

mod awaitables;
mod binding;
mod command;
pub mod compose;
mod coroutine;
mod error;
mod event;
mod mechanism;
mod scheduler;
mod scope;
mod telemetry;
mod trigger;

pub use awaitables::{Join, Wait, WaitUntil, WaitUntilTimeout, YieldNow};
pub use command::{Command, CommandBuilder, NeedsBody};
pub use coroutine::{Coroutine, WaitResult};
pub use error::{
    BoxError, CompositionError, ConflictPair, DefaultCommandError, ForkError, RunError,
    StateMachineError, TriggerError,
};
pub use event::{CommandId, Event, EventKind};
pub use mechanism::Mechanism;
pub use scheduler::{DEFAULT_WATCHDOG_LIMIT, ScheduleResult, Scheduler};
pub use scope::OpMode;
pub use telemetry::{CommandInfo, Telemetry};
pub use trigger::Trigger;
