//! What the plugin costs, against its baselines, measured in one run.
//!
//! ```text
//! cargo bench -p tickstep-bevy --bench plugin            # full
//! cargo bench -p tickstep-bevy --bench plugin -- --quick # a smoke run
//! ```
//!
//! * `frame_idle`: one `App::update()` of a headless app (`TimePlugin`, 60 fps of manual Bevy
//!   time, so `FixedUpdate` runs about once a frame) with the plugin and nothing scheduled,
//!   against the same app without the plugin. The headline is the median difference of *paired*
//!   frames (one of each, back to back, alternating which goes first), because on a loaded shared
//!   machine two separately timed averages of ~15 µs frames differ by more than the ~1 µs asked
//!   about; the unpaired medians and the fastest rounds are printed beside it. On Linux the same
//!   comparison is also made in CPU time (the thread's `schedstat`), which leaves out the time
//!   slices other processes take: on an oversubscribed machine it is the closest to an idle one.
//! * `frame_idle_commands_used`: the same pair of apps, except that the plugin's app has used its
//!   commands layer once (a command ran and finished): its cycle came into `FixedUpdate` and, the
//!   layer idle again, left with the schedule the plugin made for it (docs/bevy.md §6.5, §6.6).
//!   Paired frames only.
//! * `frame_idle_fixed_game`: both apps also have one game system of their own in `FixedUpdate`
//!   (as a game with a fixed-step simulation does), the plugin's commands layer used: its cycle
//!   stays in the game's `FixedUpdate`, left out by its run condition while idle. Paired frames
//!   only.
//! * `task_via_plugin`: per task, 1,000 empty kernel tasks scheduled through the plugin's
//!   scheduler and run by one `App::update()` (minus an idle update), against the bare kernel
//!   (`FrameScheduler::schedule` + `step`, same tasks, same budget, same clock).
//! * `task_with_world_op`: the same through the plugin, each task also queuing one world
//!   operation (a resource increment) applied at the sync point.
//!
//! Cases are interleaved round by round and each reports the median round, so load on the shared
//! machine hits both sides of a ratio alike.

use std::time::Duration;

use bevy_app::{App, FixedUpdate};
use bevy_ecs::prelude::*;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use tickstep_bevy::{TickstepCommands, TickstepKernel, TickstepPlugin};
use tickstep_commands::Command;
use tickstep_kernel::clock::{Clock, SystemClock};
use tickstep_kernel::{FrameScheduler, Priority, SchedulerConfig};

const TASKS: usize = 1_000;
const BIG_BUDGET: Duration = Duration::from_secs(1);

#[derive(Resource, Default)]
struct Counter(u64);

/// What the app has besides `TimePlugin`.
#[derive(Clone, Copy, PartialEq)]
enum Setup {
    /// Nothing: the baseline.
    Bare,
    /// The plugin, nothing scheduled, its commands layer never reached.
    Plugin,
    /// The plugin after one command ran to its end (the commands cycle is in `FixedUpdate`).
    PluginCommandsUsed,
}

fn headless(setup: Setup, fixed_game_system: bool) -> App {
    let mut app = App::new();
    app.add_plugins(TimePlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            16_666_667,
        )))
        .init_resource::<Counter>();
    if fixed_game_system {
        app.add_systems(FixedUpdate, |mut c: ResMut<'_, Counter>| c.0 += 1);
    }
    if setup != Setup::Bare {
        app.add_plugins(
            TickstepPlugin::builder()
                .budget(BIG_BUDGET)
                .diagnostics(false)
                .build()
                .expect("valid settings"),
        );
    }
    if setup == Setup::PluginCommandsUsed {
        let once = Command::no_requirements()
            .executing(|_co| async {})
            .named("once");
        let commands = app.world().non_send::<TickstepCommands>();
        assert!(commands.scheduler().schedule(&once).is_success());
    }
    for _ in 0..10 {
        app.update(); // warm: schedules built, first-update special cases done
    }
    if setup == Setup::PluginCommandsUsed {
        let commands = app.world().non_send::<TickstepCommands>();
        assert!(commands.scheduler().running().is_empty(), "the command ran");
    }
    app
}

/// Nanoseconds per call of `f`, over `iters` calls.
fn time(clock: &SystemClock, iters: u32, mut f: impl FnMut()) -> f64 {
    let start = clock.now();
    for _ in 0..iters {
        f();
    }
    (clock.now() - start).as_nanos() as f64 / f64::from(iters)
}

/// This thread's time on a CPU (Linux `schedstat`, nanoseconds), or `None` elsewhere. Unlike wall
/// time it does not count the slices other processes take while the bench waits for a core.
fn cpu_time() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// CPU nanoseconds per call of `f`, over `iters` calls.
fn cpu_per_call(iters: u32, mut f: impl FnMut()) -> Option<f64> {
    let start = cpu_time()?;
    for _ in 0..iters {
        f();
    }
    Some((cpu_time()? - start) as f64 / f64::from(iters))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fastest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn schedule_tasks(sched: &FrameScheduler, with_op: Option<&tickstep_bevy::WorldQueue>) {
    for _ in 0..TASKS {
        match with_op {
            None => {
                let _t = sched.schedule(|| {}, Priority::Normal);
            }
            Some(queue) => {
                let queue = queue.clone();
                let _t = sched.schedule(
                    move || queue.push(|w| w.resource_mut::<Counter>().0 += 1),
                    Priority::Normal,
                );
            }
        }
    }
}

/// Frame by frame, alternating which app goes first: the difference of a pair sees the same load
/// on both sides, which a difference of two averages on this machine does not.
fn paired_differences(
    clock: &SystemClock,
    frames: u32,
    bare: &mut App,
    with: &mut App,
    added: &mut Vec<f64>,
) {
    for i in 0..frames {
        let (first, second) = if i % 2 == 0 {
            (&mut *bare, &mut *with)
        } else {
            (&mut *with, &mut *bare)
        };
        let t0 = clock.now();
        first.update();
        let t1 = clock.now();
        second.update();
        let t2 = clock.now();
        let (a, b) = ((t1 - t0).as_nanos() as f64, (t2 - t1).as_nanos() as f64);
        added.push(if i % 2 == 0 { b - a } else { a - b });
    }
}

/// One round of per-task samples: the medians (ns per task) through the plugin, through the plugin
/// with a world operation, and on the bare kernel.
fn task_round(clock: &SystemClock, with: &mut App, kernel: &FrameScheduler) -> (f64, f64, f64) {
    let plugin_sched = with
        .world()
        .non_send::<TickstepKernel>()
        .scheduler()
        .clone();
    let queue = with.world().non_send::<TickstepKernel>().world().clone();
    let (mut per_task, mut per_task_op, mut per_task_bare) = (Vec::new(), Vec::new(), Vec::new());
    // Each sample: an idle frame, then scheduling 1,000 tasks and the frame that runs them,
    // back to back; per task = (schedule + frame - idle frame) / 1,000. The bare kernel's
    // sample (schedule + step) sits right beside it.
    let mut through_plugin = |op: Option<&tickstep_bevy::WorldQueue>| {
        let idle = time(clock, 1, || with.update());
        let start = clock.now();
        schedule_tasks(&plugin_sched, op);
        with.update();
        ((clock.now() - start).as_nanos() as f64 - idle) / TASKS as f64
    };
    for _ in 0..50 {
        per_task.push(through_plugin(None));
        per_task_op.push(through_plugin(Some(&queue)));
        let start = clock.now();
        schedule_tasks(kernel, None);
        kernel.step();
        per_task_bare.push((clock.now() - start).as_nanos() as f64 / TASKS as f64);
    }
    (median(per_task), median(per_task_op), median(per_task_bare))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, frames, task_rounds) = if quick {
        (3, 2_000, 3)
    } else {
        (21, 10_000, 15)
    };
    let clock = SystemClock::new();

    let mut bare = headless(Setup::Bare, false);
    let mut with = headless(Setup::Plugin, false);
    let mut used = headless(Setup::PluginCommandsUsed, false);
    let mut bare_fixed = headless(Setup::Bare, true);
    let mut used_fixed = headless(Setup::PluginCommandsUsed, true);
    let (mut added_used, mut added_fixed_game) = (Vec::new(), Vec::new());
    let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server().budget(BIG_BUDGET));

    let (mut idle_bare, mut idle_with) = (Vec::new(), Vec::new());
    let (mut via_plugin, mut via_kernel, mut with_op) = (Vec::new(), Vec::new(), Vec::new());
    let mut added = Vec::new();
    let (mut cpu_bare, mut cpu_with) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        idle_bare.push(time(&clock, frames, || bare.update()));
        idle_with.push(time(&clock, frames, || with.update()));
        if let (Some(b), Some(w)) = (
            cpu_per_call(frames, || bare.update()),
            cpu_per_call(frames, || with.update()),
        ) {
            cpu_bare.push(b);
            cpu_with.push(w);
        }
        paired_differences(&clock, frames, &mut bare, &mut with, &mut added);
        paired_differences(&clock, frames, &mut bare, &mut used, &mut added_used);
        paired_differences(
            &clock,
            frames,
            &mut bare_fixed,
            &mut used_fixed,
            &mut added_fixed_game,
        );
        if round >= task_rounds {
            continue;
        }
        let (plugin, plugin_op, bare_kernel) = task_round(&clock, &mut with, &kernel);
        via_plugin.push(plugin);
        with_op.push(plugin_op);
        via_kernel.push(bare_kernel);
    }
    assert!(
        with.world().resource::<Counter>().0 > 0,
        "the world ops ran"
    );

    let (bare_fast, with_fast) = (fastest(&idle_bare), fastest(&idle_with));
    let (bare_ns, with_ns) = (median(idle_bare), median(idle_with));
    let adds = median(added);
    println!("tickstep-bevy bench ({rounds} rounds, medians; ratio = plugin / baseline)");
    println!(
        "frame_idle          adds {adds:>5.0} ns per frame (median of paired frames): ratio {:.3} to a bare App::update of {bare_ns:.0} ns",
        (bare_ns + adds) / bare_ns
    );
    println!(
        "                    unpaired medians: plugin {with_ns:.0} ns, bare {bare_ns:.0} ns (ratio {:.2}); fastest rounds: {with_fast:.0} / {bare_fast:.0} ns",
        with_ns / bare_ns
    );
    if !cpu_bare.is_empty() {
        let (bare_cpu, with_cpu) = (median(cpu_bare), median(cpu_with));
        println!(
            "frame_idle (CPU)    adds {:>5.0} ns per frame: plugin {with_cpu:.0} ns, bare App::update {bare_cpu:.0} ns of CPU, ratio {:.3}",
            with_cpu - bare_cpu,
            with_cpu / bare_cpu
        );
    }
    let bare_fixed_ns = time(&clock, frames, || bare_fixed.update());
    for (name, adds, base) in [
        ("frame_idle_commands_used", median(added_used), bare_ns),
        (
            "frame_idle_fixed_game",
            median(added_fixed_game),
            bare_fixed_ns,
        ),
    ] {
        println!(
            "{name:<24} adds {adds:>5.0} ns per frame (paired): ratio {:.3} to the same app's bare App::update of {base:.0} ns",
            (base + adds) / base
        );
    }
    let kernel_ns = median(via_kernel);
    for (name, plugin_ns) in [
        ("task_via_plugin   ", median(via_plugin)),
        ("task_with_world_op", median(with_op)),
    ] {
        println!(
            "{name}  plugin {plugin_ns:>9.1} ns  bare kernel      {kernel_ns:>9.1} ns  ratio {:.2}",
            plugin_ns / kernel_ns
        );
    }
}
