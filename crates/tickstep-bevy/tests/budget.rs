//! The kernel inside Bevy frames: the budget, deferral to the next frame, Bevy's frame timing as
//! the frame-aware budget's source, overload diagnostics.

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use bevy_app::{FixedUpdate, Update};
use bevy_ecs::message::Messages;
use bevy_ecs::prelude::*;
use common::{MS, app, app_with, frame};
use tickstep_bevy::{KernelOverload, KernelStats, TickstepKernel, TickstepPlugin};
use tickstep_kernel::{ManualClock, Priority};

fn ran_per_frame(frames: usize, budget: Duration, tasks: usize, cost: Duration) -> Vec<usize> {
    let (mut app, clock) = common::app_with(
        TickstepPlugin::builder().diagnostics(false).budget(budget),
        20 * MS,
    );
    let log = Rc::new(RefCell::new(Vec::new()));
    {
        let kernel = app.world().non_send::<TickstepKernel>();
        for i in 0..tasks {
            let (log, clock) = (log.clone(), clock.clone());
            let _t = kernel.scheduler().schedule(
                move || {
                    clock.advance(cost); // the task "takes" `cost` of real time
                    log.borrow_mut().push(i);
                },
                Priority::Normal,
            );
        }
    }
    let mut per_frame = Vec::new();
    for _ in 0..frames {
        let before = log.borrow().len();
        frame(&mut app, &clock, 16 * MS);
        per_frame.push(log.borrow().len() - before);
    }
    assert_eq!(*log.borrow(), (0..tasks).collect::<Vec<_>>(), "FIFO order");
    per_frame
}

#[test]
fn the_budget_is_respected_every_frame_and_the_rest_is_deferred_to_the_next() {
    // 2 ms of budget, 1 ms tasks: two per frame, the rest waits in order.
    assert_eq!(ran_per_frame(6, 2 * MS, 9, MS), [2, 2, 2, 2, 1, 0]);
}

#[test]
fn deferred_counts_are_published_as_kernel_stats() {
    let (mut app, clock) = app_with(
        TickstepPlugin::builder().diagnostics(false).budget(3 * MS),
        20 * MS,
    );
    {
        let kernel = app.world().non_send::<TickstepKernel>();
        for _ in 0..5 {
            let clock = clock.clone();
            let _t = kernel
                .scheduler()
                .schedule(move || clock.advance(2 * MS), Priority::Low);
        }
    }
    let mut seen = Vec::new();
    for _ in 0..4 {
        frame(&mut app, &clock, 16 * MS);
        let stats = app.world().resource::<KernelStats>();
        seen.push((stats.tasks_run, stats.tasks_deferred, stats.last_budget));
    }
    // 3 ms budget, 2 ms tasks: the check before the third task sees 4 ms spent.
    assert_eq!(
        seen,
        [
            (2, 3, 3 * MS),
            (4, 1, 3 * MS),
            (5, 0, 3 * MS),
            (5, 0, 3 * MS)
        ]
    );
}

#[test]
fn a_task_that_overruns_the_budget_holds_its_frame_but_not_the_next() {
    // The budget is checked between tasks: one 5 ms task in a 2 ms budget runs alone.
    assert_eq!(ran_per_frame(3, 2 * MS, 3, 5 * MS), [1, 1, 1]);
}

#[derive(Resource, Clone)]
struct Work(ManualClock, Duration);

fn game_logic(work: Res<'_, Work>) {
    work.0.advance(work.1);
}

#[test]
fn the_frame_aware_budget_reads_bevys_frame_timing() {
    // Target 16 ms, floor 1 ms. Update takes 6 ms of every frame and each fixed step 3 ms of
    // physics; the kernel has an every-frame job that costs nothing, so StepEma stays zero and
    // the budget is exactly Target - HeartbeatTime - PhysicsStepTime of the previous frame.
    let (mut app, clock) = app_with(
        TickstepPlugin::builder()
            .diagnostics(false)
            .frame_target(16 * MS)
            .budget(MS),
        16 * MS,
    );
    app.insert_resource(Work(clock.clone(), 6 * MS))
        .add_systems(Update, game_logic)
        .add_systems(FixedUpdate, |w: Res<'_, Work>| w.0.advance(3 * MS));
    let _every_frame = app
        .world()
        .non_send::<TickstepKernel>()
        .scheduler()
        .every(Duration::ZERO, || {}, Priority::Low)
        .unwrap();
    let mut with_physics = 0;
    for n in 0..20 {
        frame(&mut app, &clock, 7 * MS);
        let stats = app.world().resource::<KernelStats>().0.clone();
        if n < 2 {
            continue; // the first step has no earlier step: the floor
        }
        assert_eq!(stats.last_frame_busy, 6 * MS, "frame {n}: Update's share");
        assert!(
            stats.last_physics == Duration::ZERO || stats.last_physics == 3 * MS,
            "frame {n}: {:?}",
            stats.last_physics
        );
        with_physics += usize::from(stats.last_physics == 3 * MS);
        assert_eq!(stats.step_ema, Duration::ZERO);
        assert_eq!(
            stats.last_budget,
            (16 * MS).saturating_sub(stats.last_frame_busy + stats.last_physics),
            "frame {n}"
        );
    }
    assert!(
        with_physics >= 10,
        "fixed steps ran in {with_physics} frames"
    );
}

#[test]
fn a_late_frame_drops_the_budget_to_the_floor() {
    let (mut app, clock) = app_with(
        TickstepPlugin::builder()
            .diagnostics(false)
            .frame_target(16 * MS)
            .budget(MS),
        16 * MS,
    );
    let _every_frame = app
        .world()
        .non_send::<TickstepKernel>()
        .scheduler()
        .every(Duration::ZERO, || {}, Priority::Low)
        .unwrap();
    frame(&mut app, &clock, 16 * MS);
    frame(&mut app, &clock, 16 * MS);
    assert_eq!(app.world().resource::<KernelStats>().last_budget, 16 * MS);
    frame(&mut app, &clock, 20 * MS); // 1.25 x 16 ms: late
    assert_eq!(app.world().resource::<KernelStats>().last_budget, MS);
}

#[test]
fn sustained_deferral_publishes_kernel_overload_as_a_bevy_message() {
    let (mut app, clock) = app_with(TickstepPlugin::builder().budget(MS), 20 * MS);
    let c = clock.clone();
    let _load = app
        .world()
        .non_send::<TickstepKernel>()
        .scheduler()
        .with_origin("heavy")
        .every(Duration::ZERO, move || c.advance(2 * MS), Priority::Normal)
        .unwrap();
    let c = clock.clone();
    let _starved = app
        .world()
        .non_send::<TickstepKernel>()
        .scheduler()
        .with_origin("starved")
        .every(Duration::ZERO, move || c.advance(MS), Priority::Low)
        .unwrap();
    let mut overloads = Vec::new();
    let mut cursor = app
        .world()
        .resource::<Messages<KernelOverload>>()
        .get_cursor();
    for n in 0..45 {
        frame(&mut app, &clock, 100 * MS);
        let messages = app.world().resource::<Messages<KernelOverload>>();
        overloads.extend(cursor.read(messages).map(|o| (n, o.0.clone())));
    }
    // Windows close every second; the third consecutive window with deferrals publishes.
    assert_eq!(overloads.len(), 1, "{overloads:?}");
    let (at_frame, overload) = &overloads[0];
    assert!(
        (29..=33).contains(at_frame),
        "published at frame {at_frame}"
    );
    assert_eq!(overload.windows, 3);
    assert!(overload.window.deferred > 0);
    assert!(overload.window.top_deferred_summary().contains("starved"));
}

#[test]
fn an_idle_kernel_takes_no_step() {
    let (mut app, clock) = app();
    for _ in 0..10 {
        frame(&mut app, &clock, 16 * MS);
    }
    let kernel = app.world().non_send::<TickstepKernel>();
    assert_eq!(kernel.scheduler().stats().steps, 0);
}

#[test]
fn bevy_real_time_follows_the_manual_clock_one_timeline() {
    use bevy_time::{Real, Time};
    use tickstep_kernel::clock::Clock;
    let (mut app, clock) = app();
    frame(&mut app, &clock, 5 * MS); // Bevy's first update starts its real time here
    let start = clock.now();
    for ms in [16, 3, 40, 1] {
        frame(&mut app, &clock, ms * MS);
        assert_eq!(
            app.world().resource::<Time<Real>>().elapsed(),
            clock.now() - start
        );
    }
}
