//! World access from kernel tasks, commands and phase schedulers, and bad settings.

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

mod common;

use std::time::Duration;

use bevy_app::{App, FixedUpdate};
use bevy_ecs::prelude::*;
use common::{MS, app, frame};
use tickstep_bevy::{PluginError, SettingsError, TickstepCommands, TickstepKernel, TickstepPlugin};
use tickstep_commands::Command;
use tickstep_kernel::{FramePhase, Priority, Role};

#[derive(Component, Debug, PartialEq)]
struct Health(u32);

#[derive(Resource, Default, Debug, PartialEq)]
struct Log(Vec<&'static str>);

#[test]
fn a_task_spawns_through_the_queue_and_the_entity_exists_at_the_end_of_that_frame() {
    let (mut app, clock) = app();
    {
        let kernel = app.world().non_send::<TickstepKernel>();
        let world = kernel.world().clone();
        let _t = kernel.scheduler().schedule(
            move || {
                let _crate = world.spawn(Health(3));
            },
            Priority::Normal,
        );
    }
    frame(&mut app, &clock, 16 * MS);
    let mut q = app.world_mut().query::<&Health>();
    assert_eq!(q.iter(app.world()).collect::<Vec<_>>(), [&Health(3)]);
}

#[test]
fn a_task_runs_a_one_shot_system_and_reads_its_output_next_frame() {
    let (mut app, clock) = app();
    app.world_mut().spawn(Health(10));
    app.world_mut().spawn(Health(32));
    let total = app
        .world_mut()
        .register_system(|q: Query<'_, '_, &Health>| q.iter().map(|h| h.0).sum::<u32>());
    let answer = std::rc::Rc::new(std::cell::Cell::new(None));
    {
        let kernel = app.world().non_send::<TickstepKernel>();
        let world = kernel.world().clone();
        let a = answer.clone();
        let _t = kernel.scheduler().spawn(
            async move {
                let sum = world.run_system(total).await.expect("registered");
                a.set(Some(sum));
            },
            Priority::Low,
        );
    }
    frame(&mut app, &clock, 16 * MS); // polled: the request is queued, answered at the sync point
    assert_eq!(answer.get(), None);
    frame(&mut app, &clock, 16 * MS); // woken: the task resumes with the answer
    assert_eq!(answer.get(), Some(42));
}

#[test]
fn a_command_body_awaits_a_world_read_across_fixed_steps() {
    let (mut app, clock) = app();
    let hero = app.world_mut().spawn(Health(5)).id();
    let heal = {
        let commands = app.world().non_send::<TickstepCommands>();
        let world = commands.world().clone();
        Command::no_requirements()
            .executing(move |_co| {
                let world = world.clone();
                async move {
                    let hp = world.with(move |w| w.get::<Health>(hero).unwrap().0).await;
                    world.push(move |w| w.get_mut::<Health>(hero).unwrap().0 = hp + 10);
                }
            })
            .named("heal")
    };
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .schedule(&heal);
    frame(&mut app, &clock, 20 * MS); // no fixed step in the first frame
    frame(&mut app, &clock, 20 * MS); // cycle 1: the read is queued, answered after the cycle
    assert_eq!(app.world().get::<Health>(hero), Some(&Health(5)));
    frame(&mut app, &clock, 20 * MS); // cycle 2: the body resumes and queues the write
    assert_eq!(app.world().get::<Health>(hero), Some(&Health(15)));
    assert!(
        !app.world()
            .non_send::<TickstepCommands>()
            .scheduler()
            .is_running(&heal)
    );
}

#[test]
fn phase_schedulers_step_around_the_fixed_update_they_bracket() {
    let (mut app, clock) = common::app_with(
        TickstepPlugin::builder()
            .diagnostics(false)
            .phases([FramePhase::PreSimulation, FramePhase::PostSimulation]),
        20 * MS,
    );
    app.init_resource::<Log>()
        .add_systems(FixedUpdate, |mut log: ResMut<'_, Log>| {
            log.0.push("simulate");
        });
    {
        let kernel = app.world().non_send::<TickstepKernel>();
        for (phase, name) in [
            (FramePhase::PreSimulation, "pre"),
            (FramePhase::PostSimulation, "post"),
        ] {
            let world = kernel.world().clone();
            let _job = kernel
                .phase_scheduler(phase)
                .unwrap()
                .every(
                    Duration::ZERO,
                    move || world.push(move |w| w.resource_mut::<Log>().0.push(name)),
                    Priority::Normal,
                )
                .unwrap();
        }
    }
    frame(&mut app, &clock, 20 * MS);
    frame(&mut app, &clock, 20 * MS);
    frame(&mut app, &clock, 40 * MS); // two fixed steps
    assert_eq!(
        app.world().resource::<Log>().0,
        [
            "pre", "simulate", "post", "pre", "simulate", "post", "pre", "simulate", "post"
        ]
    );
}

#[test]
fn pre_render_is_client_only() {
    let (client, _) = common::app_with(
        TickstepPlugin::builder()
            .role(Role::Client)
            .phases([FramePhase::PreRender]),
        20 * MS,
    );
    let kernel = client.world().non_send::<TickstepKernel>();
    assert!(kernel.phase_scheduler(FramePhase::PreRender).is_some());
    let err = TickstepPlugin::builder()
        .phases([FramePhase::PreRender])
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "PreRender schedulers are client-only");
}

#[test]
fn bad_settings_are_typed_errors_naming_the_value_and_the_rule() {
    let zero = TickstepPlugin::builder()
        .budget(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        zero.to_string(),
        "budget must be greater than zero (got 0ns)"
    );
    let tick = TickstepPlugin::builder()
        .schedules_tick(Duration::ZERO)
        .build()
        .unwrap_err();
    assert!(matches!(
        tick,
        PluginError::Settings(SettingsError::ZeroDuration {
            what: "schedules tick",
            ..
        })
    ));
    let lease = TickstepPlugin::builder()
        .lease(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        lease.to_string(),
        "lease must be greater than zero (got 0ns)"
    );
    let above = TickstepPlugin::builder()
        .frame_target(2 * MS)
        .budget(3 * MS)
        .build()
        .unwrap_err();
    assert_eq!(
        above.to_string(),
        "budget 3ms must not exceed the frame target 2ms"
    );
    let client = TickstepPlugin::builder()
        .role(Role::Client)
        .diagnostics(true)
        .build()
        .unwrap_err();
    assert!(matches!(
        client,
        PluginError::Settings(SettingsError::DiagnosticsOnClient { role: Role::Client })
    ));
}

#[test]
#[should_panic(expected = "TickstepPlugin: cannot create the store directory")]
fn add_plugins_panics_with_the_error_when_the_store_cannot_open() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let plugin = TickstepPlugin::builder()
        .store_path(file.join("s.db"))
        .build()
        .unwrap();
    App::new().add_plugins(plugin);
}
