//! The systems that map tickstep onto a Bevy frame (docs/bevy.md §2; the crate docs give the
//! mapping).
//!
//! | Bevy schedule | system | what it does |
//! |---|---|---|
//! | `First`, before `TimeSystems` | `begin_frame` (`begin_manual_frame` on a manual clock) | starts the frame meter; with a manual clock, feeds its movement to `Time<Real>` |
//! | `RunFixedMainLoop`, before the fixed loop | `begin_fixed` | starts measuring the physics share of the frame; when the commands have work and their cycle is not in `FixedUpdate`, puts it there (docs/bevy.md §6.5) |
//! | `RunFixedMainLoop`, after the fixed loop | `end_fixed` | ends the physics share; publishes `Time<Fixed>` to the game clock |
//! | `FixedPreUpdate` | `step_pre_simulation` | steps the `PreSimulation` phase scheduler (if asked for), then the sync point |
//! | `FixedUpdate` (while the commands have work), in `CommandsCycleSystems` | `run_commands`, if `commands_busy` | publishes `Time<Fixed>` to the game clock, runs the triggers' ECS conditions, one commands cycle, then the sync point |
//! | `FixedPostUpdate` | `step_post_simulation` | steps the `PostSimulation` phase scheduler (if asked for), then the sync point |
//! | `PostUpdate` (client) | `step_pre_render` | steps the `PreRender` phase scheduler (if asked for), then the sync point |
//! | the kernel schedule (`Last`) | `kernel_frame` | re-arms the schedules tick, steps the main scheduler, the sync point, closes the frame meter, publishes stats and messages; parks the plugin's own `FixedUpdate` when the commands ended the frame idle (docs/bevy.md §6.6) |
//!
//! The steppers that touch the world queue are exclusive systems (`&mut World`): the queue is
//! applied right after the step, in the same schedule, so work a task queued lands this frame.

use std::cell::RefCell;
use std::rc::Rc;

use bevy_app::{
    App, First, FixedPostUpdate, FixedPreUpdate, PostUpdate, RunFixedMainLoop,
    RunFixedMainLoopSystems,
};
use bevy_ecs::prelude::*;
use bevy_time::{Fixed, Time, TimePlugin, TimeSystems, TimeUpdateStrategy};
use tickstep_kernel::FramePhase;
use tickstep_kernel::clock::{Clock, Instant};

use crate::settings::Settings;
use crate::{
    CommandEvent, CommandsCycleSystems, CommandsFailed, KernelOverload, KernelStats,
    TickstepCommands, TickstepKernel,
};

pub(crate) fn install(app: &mut App, settings: &Settings) {
    if !app.is_plugin_added::<TimePlugin>() {
        app.add_plugins(TimePlugin);
    }
    app.init_resource::<KernelStats>()
        .add_message::<KernelOverload>()
        .add_message::<CommandEvent>()
        .add_message::<CommandsFailed>()
        .add_observer(crate::ecs_triggers::check_condition_ticks)
        .add_systems(
            First,
            if settings.manual_clock.is_some() {
                begin_manual_frame.before(TimeSystems)
            } else {
                begin_frame.before(TimeSystems)
            },
        )
        .add_systems(
            RunFixedMainLoop,
            (
                begin_fixed.in_set(RunFixedMainLoopSystems::BeforeFixedMainLoop),
                end_fixed.in_set(RunFixedMainLoopSystems::AfterFixedMainLoop),
            ),
        )
        .add_systems(settings.kernel_schedule, kernel_frame);
    for phase in &settings.phases {
        match phase {
            FramePhase::PreSimulation => app.add_systems(FixedPreUpdate, step_pre_simulation),
            FramePhase::PostSimulation => app.add_systems(FixedPostUpdate, step_post_simulation),
            FramePhase::PreRender => app.add_systems(PostUpdate, step_pre_render),
            FramePhase::Heartbeat => app,
        };
    }
}

// Bevy hands system parameters over by value.
#[allow(clippy::needless_pass_by_value)]
fn begin_frame(kernel: NonSend<'_, TickstepKernel>) {
    let parts = &kernel.parts;
    parts.meter.begin_frame(parts.clock.now());
}

/// [`begin_frame`] on a manual clock, which Bevy's real time then follows: one timeline for both.
#[allow(clippy::needless_pass_by_value)]
fn begin_manual_frame(
    kernel: NonSend<'_, TickstepKernel>,
    strategy: Option<ResMut<'_, TimeUpdateStrategy>>,
    mut last: Local<'_, Option<Instant>>,
) {
    let parts = &kernel.parts;
    let now = parts.clock.now();
    parts.meter.begin_frame(now);
    if let Some(mut strategy) = strategy {
        let moved = now - last.unwrap_or(now);
        *strategy = TimeUpdateStrategy::ManualDuration(moved);
        *last = Some(now);
    }
}

fn begin_fixed(world: &mut World) {
    let parts = Rc::clone(&world.non_send::<TickstepKernel>().parts);
    // The commands cycle is in the fixed main loop while the commands layer has work
    // (docs/bevy.md §6.5, §6.6). `FixedUpdate` is not running here, so changing it is safe; the
    // schedules are fetched only then.
    let mut placement = parts.cycle_placement.borrow_mut();
    if placement.must_join(parts.commands.is_idle()) {
        let cycle = run_commands
            .run_if(commands_busy)
            .in_set(CommandsCycleSystems);
        placement.join(&mut world.resource_mut::<Schedules>(), cycle);
    }
    drop(placement);
    parts.meter.begin_fixed(parts.clock.now());
}

#[allow(clippy::needless_pass_by_value)]
fn end_fixed(kernel: NonSend<'_, TickstepKernel>, fixed: Res<'_, Time<Fixed>>) {
    let parts = &kernel.parts;
    parts.meter.end_fixed(parts.clock.now());
    // The game clock stays current without a commands cycle too (docs/bevy.md §4.2).
    parts.game_clock.publish(fixed.elapsed());
}

/// The run condition of [`run_commands`]: an idle cycle is left out (docs/bevy.md §6.6).
#[allow(clippy::needless_pass_by_value)]
fn commands_busy(kernel: NonSend<'_, TickstepKernel>) -> bool {
    !kernel.parts.commands.is_idle()
}

fn run_commands(world: &mut World) {
    let elapsed = world.resource::<Time<Fixed>>().elapsed();
    let cycle = Rc::clone(&world.non_send::<TickstepCommands>().cycle);
    cycle.clock.publish(elapsed);
    let stopped = cycle.failure.borrow().is_some();
    if !stopped {
        // Triggers on ECS state read the world as the cycle starts (docs/bevy.md §6.7).
        cycle.conditions.evaluate(world);
    }
    if !stopped && let Err(error) = cycle.scheduler.run() {
        let message = tickstep_kernel::ErrorChain(&error).to_string();
        tracing::error!(target: "tickstep_bevy", "commands cycle stopped: {message}");
        *cycle.failure.borrow_mut() = Some(error);
        world.write_message(CommandsFailed { message });
    }
    cycle.world.apply(world);
    publish_command_events(world, &cycle.events);
}

fn publish_command_events(world: &mut World, events: &RefCell<Vec<CommandEvent>>) {
    if events.borrow().is_empty() {
        return;
    }
    let events = std::mem::take(&mut *events.borrow_mut());
    world.write_message_batch(events);
}

fn step_phase(world: &mut World, phase: FramePhase) {
    let kernel = world.non_send::<TickstepKernel>();
    let (Some(stepper), queue) = (kernel.phase(phase), kernel.parts.world.clone()) else {
        return;
    };
    stepper.frames.run_frames(1);
    queue.apply(world);
}

fn step_pre_simulation(world: &mut World) {
    step_phase(world, FramePhase::PreSimulation);
}

fn step_post_simulation(world: &mut World) {
    step_phase(world, FramePhase::PostSimulation);
}

fn step_pre_render(world: &mut World) {
    step_phase(world, FramePhase::PreRender);
}

fn kernel_frame(world: &mut World) {
    let parts = Rc::clone(&world.non_send::<TickstepKernel>().parts);
    parts.schedules.rearm();
    // One clock read serves an idle frame: the work check and the frame's end (docs/bevy.md
    // §3.4). The loop would find the same; asking first skips its per-frame bookkeeping.
    let now = parts.clock.now();
    let step = parts.main.is_attached() || parts.main.has_runnable_work_at(now);
    if step {
        parts.frames.run_frames(1);
    }
    let applied = parts.world.apply(world);
    // A step or world operations took time since `now`: the frame ends at a fresh reading.
    let end = if step || applied > 0 {
        parts.clock.now()
    } else {
        now
    };
    parts.meter.end_frame(end);

    let steps = parts.frames.steps_taken();
    if parts.published_steps.replace(steps) != steps {
        world.resource_mut::<KernelStats>().0 = parts.main.stats();
    }
    if !parts.overloads.borrow().is_empty() {
        let overloads = std::mem::take(&mut *parts.overloads.borrow_mut());
        world.write_message_batch(overloads.into_iter().map(KernelOverload));
    }
    // Events of commands scheduled or canceled outside the cycle (from Update systems).
    publish_command_events(world, &parts.command_events);
    // An idle commands layer leaves the fixed main loop until it has work (docs/bevy.md §6.6).
    let mut placement = parts.cycle_placement.borrow_mut();
    if placement.may_park(parts.commands.is_idle()) {
        placement.park(&mut world.resource_mut::<Schedules>());
    }
}
