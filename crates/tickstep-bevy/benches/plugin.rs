//! What the plugin costs, against its baselines, measured in one run.
//!
//! ```text
//! cargo bench -p tickstep-bevy --bench plugin            # full
//! cargo bench -p tickstep-bevy --bench plugin -- --quick # a smoke run
//! ```
//!
//! * `frame_idle`: one `App::update()` of a headless app (`TimePlugin`, 60 fps of manual Bevy
//!   time, so `FixedUpdate` runs about once a frame) with the plugin and nothing scheduled,
//!   against the same app without the plugin. Reported: both, the difference (what the plugin adds
//!   per frame) and the ratio.
//! * `task_via_plugin`: per task, 1,000 empty kernel tasks scheduled through the plugin's
//!   scheduler and run by one `App::update()` (minus an idle update), against the bare kernel
//!   (`Scheduler::schedule` + `step`, same tasks, same budget, same clock).
//! * `task_with_world_op`: the same through the plugin, each task also queuing one world
//!   operation (a resource increment) applied at the sync point.
//!
//! Cases are interleaved round by round and each reports the median round, so load on the shared
//! machine hits both sides of a ratio alike.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use tickstep_bevy::{TickstepKernel, TickstepPlugin};
use tickstep_kernel::clock::{Clock, SystemClock};
use tickstep_kernel::{Priority, Scheduler, SchedulerConfig};

const TASKS: usize = 1_000;
const BIG_BUDGET: Duration = Duration::from_secs(1);

#[derive(Resource, Default)]
struct Counter(u64);

fn headless(plugin: bool) -> App {
    let mut app = App::new();
    app.add_plugins(TimePlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            16_666_667,
        )))
        .init_resource::<Counter>();
    if plugin {
        app.add_plugins(
            TickstepPlugin::builder()
                .budget(BIG_BUDGET)
                .diagnostics(false)
                .build()
                .expect("valid settings"),
        );
    }
    for _ in 0..10 {
        app.update(); // warm: schedules built, first-update special cases done
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn schedule_tasks(sched: &Scheduler, with_op: Option<&tickstep_bevy::WorldQueue>) {
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

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, frames, task_rounds) = if quick {
        (5, 2_000, 3)
    } else {
        (21, 20_000, 15)
    };
    let clock = SystemClock::new();

    let mut bare = headless(false);
    let mut with = headless(true);
    let kernel = Scheduler::new(clock.clone(), SchedulerConfig::server().budget(BIG_BUDGET));

    let (mut idle_bare, mut idle_with) = (Vec::new(), Vec::new());
    let (mut via_plugin, mut via_kernel, mut with_op) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        idle_bare.push(time(&clock, frames, || bare.update()));
        idle_with.push(time(&clock, frames, || with.update()));
        if round >= task_rounds {
            continue;
        }
        let idle = time(&clock, 200, || with.update());
        let plugin_sched = with
            .world()
            .non_send::<TickstepKernel>()
            .scheduler()
            .clone();
        let queue = with.world().non_send::<TickstepKernel>().world().clone();
        let mut per_task = Vec::new();
        let mut per_task_op = Vec::new();
        let mut per_task_bare = Vec::new();
        for _ in 0..50 {
            schedule_tasks(&plugin_sched, None);
            let t = time(&clock, 1, || with.update());
            per_task.push((t - idle).max(0.0) / TASKS as f64);

            schedule_tasks(&plugin_sched, Some(&queue));
            let t = time(&clock, 1, || with.update());
            per_task_op.push((t - idle).max(0.0) / TASKS as f64);

            let start = clock.now();
            schedule_tasks(&kernel, None);
            kernel.step();
            per_task_bare.push((clock.now() - start).as_nanos() as f64 / TASKS as f64);
        }
        // Scheduling is inside both measurements of the kernel side; add it on the plugin side.
        let schedule_only = {
            let start = clock.now();
            schedule_tasks(&plugin_sched, None);
            let t = (clock.now() - start).as_nanos() as f64 / TASKS as f64;
            with.update();
            t
        };
        via_plugin.push(median(per_task) + schedule_only);
        with_op.push(median(per_task_op) + schedule_only);
        via_kernel.push(median(per_task_bare));
    }
    assert!(
        with.world().resource::<Counter>().0 > 0,
        "the world ops ran"
    );

    let (b, w) = (median(idle_bare), median(idle_with));
    println!("tickstep-bevy bench ({rounds} rounds, medians; ratio = plugin / baseline)");
    println!(
        "frame_idle          plugin {w:>9.0} ns  bare App::update {b:>9.0} ns  adds {:>7.0} ns  ratio {:.2}",
        w - b,
        w / b
    );
    let (p, k, o) = (median(via_plugin), median(via_kernel), median(with_op));
    println!(
        "task_via_plugin     plugin {p:>9.1} ns  bare kernel      {k:>9.1} ns  ratio {:.2}",
        p / k
    );
    println!(
        "task_with_world_op  plugin {o:>9.1} ns  bare kernel      {k:>9.1} ns  ratio {:.2}",
        o / k
    );
}
