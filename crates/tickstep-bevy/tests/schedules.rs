//! Durable schedules inside Bevy: a schedule created from a system fires at the right frame and
//! survives restarting the app.

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

mod common;

use std::path::Path;

use bevy_app::{App, Startup};
use bevy_ecs::prelude::*;
use common::{MS, frame};
use tickstep_bevy::{
    HostError, PluginError, TickstepAppExt, TickstepPlugin, TickstepSchedules, VerbWorld,
};
use tickstep_kernel::ManualClock;
use tickstep_schedules::{ObjId, Options, ScheduleId, Value};

/// Frames in which the "ring" verb's world operation landed, and the elapsed seconds it was given.
#[derive(Resource, Default, Debug)]
struct Rings(Vec<(u32, f64)>);

#[derive(Resource, Default)]
struct FrameNo(u32);

#[derive(Resource)]
struct Bell(ScheduleId);

fn count_frames(mut n: ResMut<'_, FrameNo>) {
    n.0 += 1;
}

fn arm_bell(mut commands: Commands<'_, '_>, schedules: NonSend<'_, TickstepSchedules>) {
    let mut txn = schedules.engine().begin(ObjId(0));
    let id = txn
        .schedule_every(ObjId(0), "ring", 1.0, vec![], Options::new())
        .expect("a valid schedule");
    txn.commit().expect("committed");
    commands.insert_resource(Bell(id));
}

fn bell_app(clock: &ManualClock, store: Option<&Path>) -> App {
    let plugin = TickstepPlugin::builder()
        .diagnostics(false)
        .manual_clock(clock.clone());
    let plugin = match store {
        Some(path) => plugin.store_path(path),
        None => plugin,
    };
    let mut app = App::new();
    app.add_plugins(plugin.build().unwrap())
        .init_resource::<Rings>()
        .init_resource::<FrameNo>()
        .add_systems(bevy_app::First, count_frames)
        .add_verb("ring", |call| {
            let elapsed = match call.args().last() {
                Some(Value::Float(s)) => *s,
                _ => f64::NAN,
            };
            call.world().push(move |w| {
                let frame = w.resource::<FrameNo>().0;
                w.resource_mut::<Rings>().0.push((frame, elapsed));
            });
            Ok(Value::Int(0))
        });
    app
}

#[test]
fn a_schedule_created_from_a_system_fires_in_the_frame_its_deadline_passes() {
    let clock = ManualClock::new();
    let mut app = bell_app(&clock, None);
    app.add_systems(Startup, arm_bell);
    app.update(); // frame 1 at t = 0: the bell is armed for t = 1 s
    for _ in 0..25 {
        frame(&mut app, &clock, 100 * MS); // frame n + 1 at t = n x 100 ms
    }
    // t = 1.0 s is frame 11, t = 2.0 s frame 21; the world operation lands in the same frame.
    let rings = &app.world().resource::<Rings>().0;
    assert_eq!(rings, &[(11, 0.0), (21, 1.0)]);
    let schedules = app.world().non_send::<TickstepSchedules>();
    assert_eq!(schedules.ticks(), 2, "the engine is ticked only when due");
}

#[test]
fn restarting_the_app_keeps_the_schedule_its_id_and_its_cadence() {
    let dir = tempfile::tempdir().unwrap();
    restart_keeps_the_schedule(&dir.path().join("save").join("schedules.db"));
}

/// The same game on a `PostgreSQL` store, with the `postgres` feature (docs/bevy.md
/// §7.10): the clean close hands the rows back and the restarted app claims them.
#[test]
fn restarting_the_app_on_a_postgres_url_keeps_the_schedule_its_id_and_its_cadence() {
    let url = pg_or_skip!("bevy_restart");
    restart_keeps_the_schedule(Path::new(&url));
}

fn restart_keeps_the_schedule(store: &Path) {
    let clock = ManualClock::new();
    let id = {
        let mut app = bell_app(&clock, Some(store));
        app.add_systems(Startup, arm_bell);
        app.update();
        for _ in 0..15 {
            frame(&mut app, &clock, 100 * MS); // up to t = 1.5 s: one ring
        }
        assert_eq!(app.world().resource::<Rings>().0, [(11, 0.0)]);
        app.world().resource::<Bell>().0
    }; // the app (and its engine) is dropped: the store is closed cleanly

    clock.advance(200 * MS); // down for a while, t = 1.7 s
    let mut app = bell_app(&clock, Some(store));
    {
        let schedules = app.world().non_send::<TickstepSchedules>();
        assert_eq!(schedules.store_path(), Some(store));
        assert_eq!(schedules.abandoned_at_start(), 0);
        let info = schedules
            .engine()
            .begin(ObjId(0))
            .schedule_info(id)
            .unwrap();
        assert_eq!(info.run_count, 1);
    }
    app.update(); // frame 1 of the new app at t = 1.7 s
    for _ in 0..5 {
        frame(&mut app, &clock, 100 * MS); // t = 1.8 .. 2.2 s
    }
    // Due at t = 2.0 s: frame 4 of the new app; elapsed spans the restart (1 s of wall time).
    assert_eq!(app.world().resource::<Rings>().0, [(4, 1.0)]);
    let schedules = app.world().non_send::<TickstepSchedules>();
    let info = schedules
        .engine()
        .begin(ObjId(0))
        .schedule_info(id)
        .unwrap();
    assert_eq!(info.run_count, 2);
}

#[test]
fn a_verb_that_fails_or_panics_is_a_fault_of_its_schedule_not_of_the_app() {
    let (mut app, clock) = common::app();
    app.add_verb("broken", |call| {
        if call.args().first() == Some(&Value::Int(0)) {
            Err(Value::Str("no".into()))
        } else {
            panic!("verb exploded")
        }
    });
    let ids: Vec<ScheduleId> = {
        let schedules = app.world().non_send::<TickstepSchedules>();
        let mut txn = schedules.engine().begin(ObjId(0));
        let ids = (0..2)
            .map(|n| {
                txn.schedule_at(ObjId(0), "broken", 0.0, vec![Value::Int(n)], Options::new())
                    .unwrap()
            })
            .collect();
        txn.commit().unwrap();
        ids
    };
    for _ in 0..3 {
        frame(&mut app, &clock, 20 * MS);
    }
    let schedules = app.world().non_send::<TickstepSchedules>();
    for id in ids {
        let info = schedules
            .engine()
            .begin(ObjId(0))
            .schedule_info(id)
            .unwrap();
        assert_eq!(info.fault_count, 1, "{info:?}");
    }
}

#[test]
fn a_store_that_cannot_be_opened_is_a_typed_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, b"x").unwrap();
    let path = not_a_dir.join("schedules.db");
    let plugin = TickstepPlugin::builder().store_path(&path).build().unwrap();
    let err = plugin.try_install(&mut App::new()).unwrap_err();
    assert!(
        matches!(&err, PluginError::Host(HostError::StoreDir { path: p, .. }) if *p == not_a_dir),
        "{err}"
    );

    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0xAB; 4096]).unwrap();
    let plugin = TickstepPlugin::builder()
        .store_path(&garbage)
        .build()
        .unwrap();
    let err = plugin.try_install(&mut App::new()).unwrap_err();
    assert!(
        matches!(&err, PluginError::Host(HostError::Store { path: p, .. }) if *p == garbage),
        "{err}"
    );
}
