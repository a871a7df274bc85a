//! Firings inside a Bevy app run on the host core the `Runtime` runs on (docs/bevy.md §7.6–§7.9):
//! a schedule's stored `seconds` and `ticks` options are enforced, async verbs wait across frames,
//! and a running firing can be listed and killed — all on a `ManualClock`, one frame at a time.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use bevy_app::App;
use bevy_ecs::prelude::*;
use common::{MS, app, app_with, frames};
use tickstep_bevy::{FiringLimits, TickstepPlugin, TickstepSchedules, VerbWorld};
use tickstep_schedules::{FaultKind, ObjId, Options, Overlap, ScheduleId, Value};

const WIZARD: ObjId = ObjId(1);

/// A one-shot schedule of `verb`, due now.
fn fire_now(app: &App, verb: &str, options: Options) -> ScheduleId {
    let schedules = app.world().non_send::<TickstepSchedules>();
    let mut txn = schedules.engine().begin(WIZARD);
    let id = txn
        .schedule_at(ObjId(5), verb, 0.0, vec![], options)
        .expect("a valid schedule");
    txn.commit().expect("committed");
    id
}

fn last_fault(app: &App, id: ScheduleId) -> Option<FaultKind> {
    let schedules = app.world().non_send::<TickstepSchedules>();
    let info = schedules.engine().begin(WIZARD).schedule_info(id).ok()?;
    info.last_fault.map(|f| f.kind)
}

fn running(app: &App) -> usize {
    app.world()
        .non_send::<TickstepSchedules>()
        .running_firings()
        .len()
}

#[test]
fn a_schedules_seconds_option_drops_an_async_verb_at_its_limit_with_fault_time_limit() {
    let (mut app, clock) = app();
    let finished = Rc::new(Cell::new(false));
    let f = finished.clone();
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("slow", move |call| {
            let f = f.clone();
            async move {
                call.sleep(Duration::from_secs(10)).await;
                f.set(true);
                Ok(Value::Int(0))
            }
        });
    let id = fire_now(
        &app,
        "slow",
        Options::new().time_limit(Duration::from_secs(1)),
    );
    frames(&mut app, &clock, 5);
    assert_eq!(running(&app), 1, "started and asleep");
    // 20 ms frames: the limit passes within 1 s + a frame of the start.
    frames(&mut app, &clock, 50);
    assert_eq!(running(&app), 0);
    assert!(!finished.get(), "dropped at the limit, never resumed");
    assert_eq!(last_fault(&app, id), Some(FaultKind::TimeLimit));
    let counts = app.world().non_send::<TickstepSchedules>().counts();
    assert_eq!((counts.firings_started, counts.firings_faulted), (1, 1));
}

#[test]
fn a_schedules_ticks_option_drops_an_async_verb_past_its_poll_budget_with_fault_tick_limit() {
    let (mut app, clock) = app();
    let polls = Rc::new(Cell::new(0u32));
    let p = polls.clone();
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("chatty", move |_call| {
            let p = p.clone();
            async move {
                loop {
                    p.set(p.get() + 1);
                    tickstep_kernel::yield_now().await;
                }
            }
        });
    let id = fire_now(&app, "chatty", Options::new().tick_limit(3));
    frames(&mut app, &clock, 20);
    assert_eq!(polls.get(), 3, "three polls, the fourth dropped it");
    assert_eq!(running(&app), 0);
    assert_eq!(last_fault(&app, id), Some(FaultKind::TickLimit));
}

#[test]
fn a_sync_verb_that_ran_past_its_seconds_limit_is_reported_time_limit_when_it_returns() {
    let (mut app, clock) = app();
    let c = clock.clone();
    app.world()
        .non_send::<TickstepSchedules>()
        .verb("stall", move |_call| {
            c.advance(Duration::from_secs(2)); // the verb "runs" for two virtual seconds
            Ok(Value::Int(0))
        });
    let id = fire_now(
        &app,
        "stall",
        Options::new().time_limit(Duration::from_secs(1)),
    );
    frames(&mut app, &clock, 5);
    assert_eq!(last_fault(&app, id), Some(FaultKind::TimeLimit));
    let counts = app.world().non_send::<TickstepSchedules>().counts();
    assert_eq!((counts.firings_returned, counts.firings_faulted), (0, 1));
}

#[test]
fn the_plugins_default_firing_limits_apply_where_a_schedule_sets_none() {
    let (mut app, clock) = app_with(
        TickstepPlugin::builder()
            .diagnostics(false)
            .firing_limits(FiringLimits::none().ticks(2)),
        20 * MS,
    );
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("spin", |_call| async move {
            loop {
                tickstep_kernel::yield_now().await;
            }
        });
    let id = fire_now(&app, "spin", Options::new());
    frames(&mut app, &clock, 10);
    assert_eq!(last_fault(&app, id), Some(FaultKind::TickLimit));
}

#[test]
fn kill_firing_cancels_a_waiting_async_verb_and_records_fault_killed() {
    let (mut app, clock) = app();
    let dropped = Rc::new(Cell::new(false));
    let d = dropped.clone();
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("stuck", move |call| {
            let guard = DropFlag(d.clone());
            async move {
                let _guard = guard;
                call.wait_until(|| false).await;
                Ok(Value::Int(0))
            }
        });
    let id = fire_now(&app, "stuck", Options::new());
    frames(&mut app, &clock, 5);
    let listed = app
        .world()
        .non_send::<TickstepSchedules>()
        .running_firings();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].schedule, listed[0].target_verb()),
        (id, "#5:stuck".to_string())
    );
    let schedules = app.world().non_send::<TickstepSchedules>();
    assert!(schedules.kill_firing(listed[0].run));
    assert!(!schedules.kill_firing(listed[0].run), "killed once");
    assert!(dropped.get(), "the future is dropped at once");
    assert_eq!(running(&app), 0);
    assert_eq!(last_fault(&app, id), Some(FaultKind::Killed));
}

#[test]
fn kill_firings_of_a_schedule_kills_each_of_its_running_firings() {
    let (mut app, clock) = app();
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("wait", |call| async move {
            call.sleep(Duration::from_hours(1)).await;
            Ok(Value::Int(0))
        });
    let options = Options::new().overlap(Overlap::Concurrent);
    let id = {
        let schedules = app.world().non_send::<TickstepSchedules>();
        let mut txn = schedules.engine().begin(WIZARD);
        let id = txn
            .schedule_every(ObjId(5), "wait", 0.05, vec![], options)
            .expect("a valid schedule");
        txn.commit().expect("committed");
        id
    };
    frames(&mut app, &clock, 6); // 120 ms: two 50 ms points, each still asleep
    let before = running(&app);
    assert!(
        before >= 2,
        "overlapping firings run side by side: {before}"
    );
    let killed = app
        .world()
        .non_send::<TickstepSchedules>()
        .kill_firings_of(id);
    assert_eq!(killed, before);
    assert_eq!(running(&app), 0);
}

#[derive(Resource, Default)]
struct Arrivals(Vec<u32>);

#[test]
fn an_async_verb_waits_across_frames_and_reaches_the_world_when_it_wakes() {
    let (mut app, clock) = app();
    app.init_resource::<Arrivals>();
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("walk", |call| async move {
            call.sleep(Duration::from_millis(100)).await;
            call.world()
                .push(|w| w.resource_mut::<Arrivals>().0.push(1));
            Ok(Value::Int(0))
        });
    let id = fire_now(&app, "walk", Options::new());
    frames(&mut app, &clock, 2);
    assert_eq!(running(&app), 1, "asleep across frames");
    assert!(app.world().resource::<Arrivals>().0.is_empty());
    frames(&mut app, &clock, 8);
    assert_eq!(app.world().resource::<Arrivals>().0, vec![1]);
    assert_eq!(running(&app), 0);
    assert_eq!(last_fault(&app, id), None);
    let counts = app.world().non_send::<TickstepSchedules>().counts();
    assert_eq!((counts.firings_started, counts.firings_returned), (1, 1));
}

struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[test]
fn an_async_firing_in_flight_when_the_app_is_dropped_is_settled_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("save.db");
    let start = || {
        app_with(
            TickstepPlugin::builder()
                .diagnostics(false)
                .store_path(&path),
            20 * MS,
        )
    };
    let (mut app, clock) = start();
    app.world()
        .non_send::<TickstepSchedules>()
        .async_verb("long_job", |call| async move {
            call.sleep(Duration::from_hours(1)).await;
            Ok(Value::Int(0))
        });
    let id = fire_now(&app, "long_job", Options::new());
    frames(&mut app, &clock, 5);
    assert_eq!(running(&app), 1);
    drop(app); // the firing's task is cancelled, the engine's last handle commits

    let (app, _clock) = start();
    let schedules = app.world().non_send::<TickstepSchedules>();
    assert_eq!(schedules.abandoned_at_start(), 1);
    assert_eq!(last_fault(&app, id), Some(FaultKind::Interrupted));
}
