//! tickstep inside a Bevy app: the frame budget, coroutine commands and durable schedules, added
//! with one plugin.
//!
//! # What it is
//!
//! Bevy runs systems every frame, but has no per-frame time budget for deferred work
//! (pathfinding, streaming, AI ticks that must spread over frames), no command framework in which
//! one ability owns a mechanism and a higher priority interrupts it, and no timer that survives a
//! restart. [`TickstepPlugin`] brings tickstep's three layers into an [`App`](bevy_app::App):
//!
//! * the **kernel**'s frame-budgeted scheduler, stepped once per Bevy frame in `Last`, with its
//!   budget computed from Bevy's own frame timing;
//! * the **commands** scheduler, one cycle per fixed step in `FixedUpdate` while it has work, on
//!   game time, with mechanisms that belong to entities ([`MechanismComponent`]);
//! * the **durable schedules** engine, ticked when a deadline is due, firing verbs (Rust code,
//!   sync or async) as budgeted kernel tasks under their `seconds` and `ticks` limits, listed and
//!   killable, stored in a `SQLite` file that survives restarting the app.
//!
//! It depends on `bevy_app`, `bevy_ecs` and `bevy_time` 0.20 only, with their default features
//! off (no reflection, no multi-threaded executor), never on the `bevy` crate; and on `tickstep`
//! with its default features off (no tokio), for the host core it shares with the `Runtime`.
//! It re-exports the layers ([`kernel`], [`commands`], [`schedules`]), so a game needs this crate
//! and Bevy's sub-crates only.
//!
//! # One host core
//!
//! The durable schedules run on `tickstep`'s host core ([`tickstep::host::HostCore`], specified
//! in docs/runtime.md §8), the same code the `Runtime`, its tokio driver and `tickstep serve` run
//! on: the tick, sync and async verbs ([`TickstepSchedules::verb`],
//! [`TickstepSchedules::async_verb`]), firing limits and kill
//! ([`TickstepSchedules::kill_firing`]), the running list, settling firings interrupted by a
//! restart, opening the store, and the counters. The plugin keeps what is Bevy's: when frames run,
//! and its [`RealClock`]. A verb reaches the ECS through [`VerbWorld::world`], the
//! [`WorldQueue`] the plugin hands the core. The builder shares the `Runtime`'s settings core
//! (role, budget, frame target, schedules tick and tick time, firing priority and limits, jitter
//! seed), checked the same way ([`SettingsError`]).
//!
//! ```
//! use std::time::Duration;
//! use bevy_app::App;
//! use bevy_ecs::prelude::*;
//! use tickstep_bevy::{MechanismComponent, TickstepAppExt, TickstepCommands, TickstepKernel,
//!     TickstepPlugin, TickstepSchedules, VerbWorld};
//! use tickstep_bevy::kernel::{ManualClock, Priority};
//! use tickstep_bevy::kernel::clock::Clock;
//! use tickstep_bevy::schedules::{ObjId, Options, Value};
//!
//! #[derive(Component)]
//! struct Legs;
//! impl MechanismComponent for Legs { const NAME: &'static str = "legs"; }
//!
//! let clock = ManualClock::new(); // tests drive virtual time; omit for the machine's clock
//! let mut app = App::new();
//! app.add_plugins(TickstepPlugin::builder().manual_clock(clock.clone()).build()?)
//!     .add_mechanism::<Legs>()
//!     .add_verb("respawn", |call| {
//!         call.world().push(|world| { world.spawn(Legs); });
//!         Ok(Value::Int(0))
//!     });
//! let hero = app.world_mut().spawn(Legs).id();
//! {
//!     // Budgeted background work: runs in `Last`, within what the frame has left.
//!     let kernel = app.world().non_send::<TickstepKernel>();
//!     let world = kernel.world().clone();
//!     let _path = kernel.scheduler().schedule(move || {
//!         world.push(move |w| { w.entity_mut(hero); }); // reach the ECS at the sync point
//!     }, Priority::Low);
//!
//!     // An ability: a command owning the hero's legs.
//!     let commands = app.world().non_send::<TickstepCommands>();
//!     let dash = commands.mechanism::<Legs>(hero)
//!         .run(|co| async move { co.wait(Duration::from_millis(300)).await })
//!         .with_priority(5)
//!         .named("dash");
//!     commands.scheduler().schedule(&dash);
//!
//!     // A durable schedule: respawn in a minute, even across a restart (with a store file).
//!     // `schedule_at` takes a Unix time in seconds, read from the plugin's wall clock.
//!     let now = kernel.clock().unix_nanos() as f64 / 1e9;
//!     let schedules = app.world().non_send::<TickstepSchedules>();
//!     let mut txn = schedules.engine().begin(ObjId(0));
//!     txn.schedule_at(ObjId(0), "respawn", now + 60.0, vec![], Options::new()).unwrap();
//!     txn.commit().unwrap();
//! }
//! for _ in 0..4 {
//!     clock.advance(Duration::from_millis(16));
//!     app.update();
//! }
//! // The respawn waits for its minute.
//! assert_eq!(app.world().non_send::<TickstepSchedules>().engine().live_count(), 1);
//! # Ok::<(), tickstep_bevy::PluginError>(())
//! ```
//!
//! # Frames and phases
//!
//! The plugin adds a few systems; each maps a tickstep notion onto a Bevy schedule
//! (docs/bevy.md §2):
//!
//! | tickstep | Bevy | why there |
//! |---|---|---|
//! | frame start (the frame meter) | `First`, before `TimeSystems` | the earliest point of a frame |
//! | physics time (`PhysicsStepTime`) | `RunFixedMainLoop`, around the fixed loop | Bevy's simulation is the fixed main loop |
//! | kernel phase `PreSimulation` | `FixedPreUpdate` (each fixed step) | work that must line up with each simulation step |
//! | commands cycle ([`CommandsCycleSystems`]) | `FixedUpdate` (each fixed step), while the commands have work | a robot loop is a fixed-rate loop; Bevy's is `FixedUpdate` |
//! | kernel phase `PostSimulation` | `FixedPostUpdate` (each fixed step) | after each simulation step |
//! | kernel phase `PreRender` (client) | `PostUpdate` | camera work, before the frame is handed to rendering |
//! | kernel phase `Heartbeat` (the main scheduler) | `Last` by default ([`TickstepPluginBuilder::kernel_schedule`]) | it spends what the frame has left |
//!
//! The main scheduler steps once per Bevy frame. A bound scheduler with nothing runnable takes no
//! step (the kernel's idle rule), so an idle plugin costs a few checks per frame. Phase
//! schedulers exist only when asked for ([`TickstepPluginBuilder::phases`]; each adds a system
//! to every fixed step) and run the kernel's fixed phase budget (the main scheduler's floor).
//!
//! # The budget
//!
//! On a server the main scheduler is frame-aware (target 16.5 ms, floor 1.5 ms, or
//! [`TickstepPluginBuilder::frame_target`] / [`TickstepPluginBuilder::budget`]); on a client it
//! gets a fixed 1.5 ms slice. Its engine statistics are Bevy's frame, measured on the plugin's
//! clock: `PhysicsStepTime` is the previous frame's time in the fixed main loop (the commands
//! cycle included); `HeartbeatTime` is the previous frame from `First` to the end of the kernel's
//! sync point, minus that physics time — so it contains the kernel's own step, which the kernel
//! subtracts back out with its `StepEma`, exactly as with its own frame loop. A frame that starts
//! 1.25 x target after the previous step is late, and the budget drops to the floor.
//!
//! # Clocks: one timeline, two speeds
//!
//! There is one source of time, the [`RealClock`]: the machine's clock, or a
//! [`ManualClock`](tickstep_kernel::ManualClock) in tests. With a manual clock the plugin feeds
//! Bevy the clock's movement each frame (`TimeUpdateStrategy::ManualDuration`), so `Time<Real>`
//! *is* the manual clock and a test just advances it and calls `App::update()`; with the
//! machine's clock both read the same monotonic counter. Bevy derives `Time<Virtual>` (pause,
//! speed) and `Time<Fixed>` from it. Who reads what:
//!
//! | layer | clock | pausing `Time<Virtual>` |
//! |---|---|---|
//! | kernel budget, `after`/`every` timers | real | does not pause them: the budget is CPU time, and background work (streaming, saves) goes on in a pause menu |
//! | commands (`wait`, timeouts, telemetry) | game: `Time<Fixed>` elapsed ([`GameClock`]) | pauses them: no fixed step runs, and game time stands still; relative speed scales them |
//! | durable schedules (deadlines, `elapsed`) | real wall clock | does not pause them: they are wall-clock promises that also run across restarts, when no game time passes either |
//!
//! A game that wants a paused world to stop its schedules stops or re-creates them itself (or
//! checks `Time<Virtual>::is_paused` in the verb).
//!
//! # World access
//!
//! Tasks, command bodies and verbs are `'static` and run by `!Send` schedulers; they cannot
//! borrow the `World`. They use the [`WorldQueue`]: a deferred queue of `FnOnce(&mut World)`
//! applied at a *sync point* — right after each kernel (or phase) step and after each commands
//! cycle — like Bevy's own `Commands`. A [`Reply`] carries an answer back: a future that an async
//! kernel task or a command body awaits (so `&mut World` is never held across an `.await`), or a
//! slot that sync code polls. [`WorldQueue::run_system`] runs a registered one-shot system
//! (`SystemId`). Nothing here uses `unsafe`.
//!
//! A trigger that reads the ECS is made from a Bevy run condition:
//! [`TickstepCommands::trigger`] takes any read-only system returning `bool` (a `Query`, a `Res`,
//! Bevy's own conditions), runs it with the world right before each commands cycle, and returns
//! the commands layer's `Trigger` to bind commands to (docs/bevy.md §6.7–§6.10).
//!
//! # Running headless
//!
//! No window is needed: Bevy's `ScheduleRunnerPlugin` (in `bevy_app`) runs the frames, and the
//! plugin brings `TimePlugin`. `examples/headless.rs` is the whole program — a durable schedule,
//! a trigger on ECS state, N frames, then `AppExit`.
//!
//! # Resources and messages
//!
//! tickstep's handles are `Rc`s, so the layers live in Bevy *non-send* resources
//! ([`TickstepKernel`], [`TickstepCommands`], [`TickstepSchedules`], read with `NonSend<T>`; Bevy
//! runs those systems on the main thread). Everything a system may want to read from another
//! thread is `Send`: the [`KernelStats`] resource, and the messages [`KernelOverload`],
//! [`CommandEvent`] and [`CommandsFailed`] (Bevy 0.20 calls buffered events *messages*).
//!
//! # Costs
//!
//! Measured with `cargo bench -p tickstep-bevy --bench plugin` (see `benches/plugin.rs`) on a
//! shared two-core machine, quiet, ratio = plugin / baseline; "paired" is the median difference of
//! frames run back to back, which holds still under load. One full run (21 rounds) and three
//! `--quick` runs. Absolute times move with the machine's host; the ratios and the instruction
//! counts are the figures to compare (this table is their one home; docs/bevy.md points here):
//!
//! | measure | baseline | result |
//! |---|---|---|
//! | a frame with nothing scheduled, wall time, paired (`frame_idle`) | the same headless app's bare `App::update()` (2.8–3.0 µs of wall time in these runs) | adds 0.42 µs (full run), 0.37–0.39 µs (quick runs): 1.13–1.14 |
//! | the same, CPU time (unpaired; the thread's CPU clock ticks too coarsely for a quick run) | the same | adds 0.40 µs (full run): 1.13 |
//! | a frame with nothing scheduled after a command has run (`frame_idle_commands_used`) | the same bare app | adds 0.45 µs (full run), 0.45–0.50 µs: 1.15–1.18 — the cycle left with the `FixedUpdate` the plugin made for it (docs/bevy.md §6.6) |
//! | the same in a game with its own `FixedUpdate` system (`frame_idle_fixed_game`) | that game's bare `App::update()` (3.0–3.3 µs) | adds 0.50 µs (full run), 0.46–0.48 µs: 1.15–1.16 — the idle cycle's run condition |
//! | a kernel task run through the plugin | the bare kernel (`schedule` + `step`), 48–50 ns | 0.91–0.96: the same path, the plugin adds nothing per task |
//! | the same, the task also queuing a world operation | the bare kernel | 1.33–1.36 (~17–20 ns per operation: one boxed closure, applied at the sync point) |
//!
//! Counted in instructions (valgrind's callgrind, collecting only the measured frames, which load
//! does not disturb), a bare frame of that app is ~31,200 instructions. The idle plugin adds
//! ~2,140; an app that has used its commands adds the same ~2,140 (the cycle's own `FixedUpdate`
//! is parked out of Bevy's map while idle, since Bevy runs every schedule that exists:
//! docs/bevy.md §6.6); a game with its own `FixedUpdate` system adds ~2,460 (the idle cycle's run
//! condition).
//!
//! Per frame the idle plugin adds four systems (frame start in `First`, two around the fixed
//! loop, the kernel frame in `Last`), three message types for Bevy to rotate, four clock reads,
//! an attachment check of the main scheduler (the idle kernel takes no step), a heap peek for the
//! schedules' next deadline, two idle checks of the commands scheduler and a couple of `Rc`
//! clones; no allocation. While the commands have work the cycle is a fifth system in
//! `FixedUpdate`, run once per fixed step (and, in a `FixedUpdate` the plugin made, that
//! schedule's cost, ~2,700 instructions); idle, only its run condition is left, and only in a
//! game's own `FixedUpdate`. Per world operation: one boxed closure. Per published message: one
//! copy into its `Send` form (a command's name becomes an `Arc<str>`, one allocation).
//!
//! Build cost: the three Bevy sub-crates with default features off (and the 40-odd crates they
//! pull in) add about 2.5 minutes of wall time to a debug build of this crate once the rest of
//! the workspace is built, on a shared two-core machine (`cargo build -p tickstep-bevy
//! --timings`); `bevy_ecs` alone is 60–90 s of it.
//!
//! # Decisions where the spec was open
//!
//! Each is a rule of docs/bevy.md §9.
//!
//! * **Kernel schedule**: `Last` by default, so the frame-aware budget is what the frame has
//!   left; any schedule label may be chosen.
//! * **Engine statistics**: `HeartbeatTime` = the previous frame from `First` to the kernel's
//!   sync point minus the fixed main loop; `PhysicsStepTime` = the fixed main loop.
//! * **Phases**: `PreSimulation`/`PostSimulation` step in `FixedPreUpdate`/`FixedPostUpdate`
//!   (once per fixed step, not once per frame); `PreRender` in `PostUpdate`, client only; each
//!   only when asked for at build time, so an unused phase costs nothing.
//! * **Clocks**: kernel and schedules on real time, commands on `Time<Fixed>` (pausing Bevy's
//!   virtual time pauses commands only); with a manual clock Bevy's `Time<Real>` follows it.
//! * **Sync points** right after each step and each commands cycle; operations queued while the
//!   queue is applied wait for the next sync point; a panicking operation propagates, as a Bevy
//!   command's does.
//! * **Mechanisms** are marker components; the `Mechanism` lives in the commands resource, made on
//!   first use; removing the component or despawning the entity cancels the commands requiring it.
//! * **Idle commands cycles** are left out (a run condition; the `FixedUpdate` the plugin made is
//!   parked), so an app that used its commands pays for an idle frame what one that never did
//!   pays; idle cycles are then not counted.
//! * **Command failures**: an `Err` stops the commands cycle (a [`CommandsFailed`] message, the
//!   error kept until [`TickstepCommands::resume`]); a panic propagates out of `FixedUpdate`, as
//!   the commands layer resumes it; the kernel and the schedules go on.
//! * **Per-cycle events** (`Mounted`, `Yielded`) are not published unless asked for.
//! * **Verbs** are Rust closures; every object is valid and every principal a wizard (a game has
//!   no MOO permissions, the one `OpenWorld`), and a verb is callable only once code is
//!   registered for it. They run under the same limits and kill as the `Runtime`'s.
//! * **Store**: in memory unless a file is named (a game names its own save file); firings in
//!   flight at the last save are abandoned at start-up ("interrupted by restart").
//! * **Triggers on ECS state** are Bevy run conditions, run right before each commands cycle,
//!   dropped with their trigger; one that cannot run is false, as a run condition is.
//! * **Dependencies**: `tickstep` with default features off, for the host core; it adds no crate
//!   the plugin did not already build.

#![forbid(unsafe_code)]

mod clock;
mod cycle_placement;
mod ecs_conditions;
mod ecs_triggers;
mod error;
mod frame_meter;
mod mechanisms;
mod messages;
mod plugin;
mod resources;
mod schedules_host;
mod settings;
mod systems;
mod world_queue;

pub use clock::{GameClock, RealClock};
pub use cycle_placement::CommandsCycleSystems;
pub use error::PluginError;
pub use mechanisms::{MechanismComponent, TickstepAppExt};
pub use messages::{CommandEvent, CommandEventKind, CommandsFailed, KernelOverload, KernelStats};
pub use plugin::{TickstepPlugin, TickstepPluginBuilder};
pub use resources::{TickstepCommands, TickstepKernel};
pub use schedules_host::{TickstepSchedules, VerbWorld};
/// The layers and the host core's names, re-exported so that `tickstep-bevy` and Bevy's
/// sub-crates are the only dependencies a game needs (the same items as `tickstep`'s: one name,
/// one meaning).
pub use tickstep::{
    DEFAULT_SCHEDULES_TICK, DEFAULT_SCHEDULES_TICK_TIME, FiringLimits, RunningFiring, RuntimeError,
    SettingsError, VerbCall, VerbResult, commands, kernel, schedules,
};
pub use world_queue::{Reply, WorldQueue};
