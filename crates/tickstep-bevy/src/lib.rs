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
//! off (no reflection, no multi-threaded executor), never on the `bevy` crate; and on the layers
//! and `tickstep-host`, the host core it shares with the `Runtime` — not on the facade, so no
//! tokio and no `Runtime` are built for a game. It re-exports the layers ([`kernel`],
//! [`commands`], [`schedules`]) and the host core's names, so a game needs this crate and Bevy's
//! sub-crates only.
//!
//! # One host core
//!
//! The durable schedules run on the host core ([`tickstep_host::HostCore`], specified
//! in docs/runtime.md §8), the same code the `Runtime`, its tokio driver and `tickstep serve` run
//! on: the tick, sync and async verbs ([`TickstepSchedules::verb`],
//! [`TickstepSchedules::async_verb`]), firing limits and kill
//! ([`TickstepSchedules::kill_firing`]), the running list, settling firings interrupted by a
//! restart, opening the store, and the counters. The plugin keeps what is Bevy's: when frames run,
//! and its [`RealClock`]. A verb reaches the ECS through [`VerbWorld::world`], the
//! [`WorldQueue`] the plugin hands the core. The builder holds the one settings type the
//! `Runtime`'s builder holds too ([`tickstep_host::HostSettings`]: role, budget, frame target,
//! schedules tick and tick time, firing priority and limits, jitter seed, lease, namespace),
//! checked the same way ([`SettingsError`]).
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
//! An idle plugin adds a few small systems, clock reads and checks to a frame with nothing
//! scheduled, and no allocation. A kernel task run through the plugin takes the bare kernel's
//! path, so it costs what it costs there; a world operation adds one boxed closure, applied at the
//! sync point. Bevy's sub-crates are most of a first build. docs/bevy.md §10 holds the
//! measurements (time and instructions per frame and per task, build time) and the commands that
//! take them.
//!
//! # Decisions where the spec was open
//!
//! They are the rules of docs/bevy.md §9: among them, the kernel steps in `Last`; the kernel and
//! the schedules run on real time and the commands on `Time<Fixed>`; the store is in memory unless
//! a file is named; an idle commands cycle is left out rather than run empty.

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
/// The layers, re-exported so that `tickstep-bevy` and Bevy's sub-crates are the only
/// dependencies a game needs.
pub use tickstep_commands as commands;
/// The host core's names, re-exported from `tickstep-host` (the same items as `tickstep`'s: one
/// name, one meaning).
pub use tickstep_host::{
    DEFAULT_SCHEDULES_TICK, DEFAULT_SCHEDULES_TICK_TIME, FiringLimits, HostError, RunningFiring,
    SettingsError, VerbCall, VerbResult,
};
pub use tickstep_kernel as kernel;
pub use tickstep_schedules as schedules;
pub use world_queue::{Reply, WorldQueue};
