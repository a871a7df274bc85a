//! Errors and isolation: what a failing verb, command or task does to the runtime.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::commands::Command;
use tickstep::host::HostError;
use tickstep::kernel::{ManualClock, Priority, Role};
use tickstep::schedules::{FaultKind, ObjId, Options, RetireReason, Value};
use tickstep::{Runtime, RuntimeError};

const WIZARD: ObjId = ObjId(1);

fn runtime() -> Runtime {
    Runtime::builder()
        .manual_clock(ManualClock::new())
        .in_memory_store()
        .build()
        .unwrap()
}

fn every(
    rt: &Runtime,
    verb: &str,
    seconds: f64,
    options: Options,
) -> tickstep::schedules::ScheduleId {
    let mut txn = rt.schedules().begin(WIZARD);
    let id = txn
        .schedule_every(ObjId(5), verb, seconds, vec![], options)
        .unwrap();
    txn.commit().unwrap();
    id
}

#[test]
fn a_panicking_verb_is_a_fault_of_its_schedule_and_others_keep_firing() {
    let rt = runtime();
    rt.verb("explode", |_| panic!("boom"));
    let fine = Rc::new(Cell::new(0));
    let f = fine.clone();
    rt.verb("fine", move |_| {
        f.set(f.get() + 1);
        Ok(Value::Int(0))
    });
    let bad = every(&rt, "explode", 1.0, Options::new().max_faults(3));
    every(&rt, "fine", 1.0, Options::new());
    rt.run_for(Duration::from_millis(10_100)).unwrap();
    assert_eq!(fine.get(), 10);
    let info = rt.schedules().begin(WIZARD).schedule_info(bad).unwrap();
    assert_eq!(info.fault_count, 3);
    assert_eq!(
        info.retire_reason.map(RetireReason::as_str),
        Some("max_faults")
    );
    let fault = info.last_fault.unwrap();
    assert_eq!(fault.kind, FaultKind::Error);
    assert_eq!(fault.value, Value::from("panic: boom"));
    assert_eq!(rt.stats().firings_faulted, 3);
}

#[test]
fn a_verb_returning_an_error_value_is_a_fault() {
    let rt = runtime();
    rt.verb("refuse", |_| Err(Value::from("E_PERM")));
    let id = every(&rt, "refuse", 1.0, Options::new());
    rt.run_for(Duration::from_millis(2_100)).unwrap();
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    assert_eq!((info.run_count, info.fault_count), (2, 2));
    assert_eq!(info.last_fault.unwrap().value, Value::from("E_PERM"));
}

#[test]
fn scheduling_an_unregistered_verb_is_invalid_at_the_call_site() {
    let rt = runtime();
    let mut txn = rt.schedules().begin(WIZARD);
    let err = txn
        .schedule_every(ObjId(5), "no_such_verb", 1.0, vec![], Options::new())
        .unwrap_err();
    assert_eq!(err.code(), "E_INVARG");
}

#[test]
fn an_adaptive_one_shot_reschedules_itself_by_its_return_value() {
    let rt = runtime();
    let checks = Rc::new(Cell::new(0));
    let c = checks.clone();
    // An adaptive lock-up (docs/schedules.md §7.2): while customers are present, check again in
    // 30 s; then lock and stop.
    rt.verb("lockup", move |_| {
        c.set(c.get() + 1);
        Ok(if c.get() < 3 {
            Value::Int(30)
        } else {
            Value::Int(0)
        })
    });
    let mut txn = rt.schedules().begin(WIZARD);
    let at = rt.schedules().now_unix_seconds() + 1.0;
    let id = txn
        .schedule_at(ObjId(5), "lockup", at, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(62)).unwrap();
    assert_eq!(checks.get(), 3);
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    assert_eq!(
        info.retire_reason.map(RetireReason::as_str),
        Some("completed")
    );
}

#[test]
fn an_async_verb_runs_across_frames_and_overlap_skip_counts_the_deadlines_it_covers() {
    let rt = runtime();
    let finished = Rc::new(Cell::new(0));
    let f = finished.clone();
    rt.async_verb("slow", move |call| {
        let f = f.clone();
        async move {
            call.sleep(Duration::from_millis(2_500)).await;
            f.set(f.get() + 1);
            Ok(Value::Int(0))
        }
    });
    let id = every(&rt, "slow", 1.0, Options::new());
    // Firings start at 1 s and 4 s (2 s and 3 s arrive mid-firing); the second ends at 6.5 s.
    rt.run_for(Duration::from_millis(6_600)).unwrap();
    assert_eq!(finished.get(), 2);
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    assert_eq!(info.overlap_count, 4);
}

#[test]
fn a_verb_may_create_schedules_from_inside_its_firing() {
    let rt = runtime();
    let echoes = Rc::new(Cell::new(0));
    let e = echoes.clone();
    rt.verb("echo", move |_| {
        e.set(e.get() + 1);
        Ok(Value::Int(0))
    });
    rt.verb("spawn_echo", |call| {
        let mut txn = call.schedules().begin(WIZARD);
        let soon = call.schedules().now_unix_seconds() + 0.5;
        txn.schedule_at(call.target(), "echo", soon, vec![], Options::new())
            .map_err(|e| Value::Str(e.to_string()))?;
        txn.commit().map_err(|e| Value::Str(e.to_string()))?;
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    let at = rt.schedules().now_unix_seconds() + 1.0;
    txn.schedule_at(ObjId(5), "spawn_echo", at, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(2)).unwrap();
    assert_eq!(echoes.get(), 1);
}

#[test]
fn a_failing_command_stops_the_command_cycle_and_run_for_returns_the_error() {
    let rt = runtime();
    let cmd = Command::no_requirements()
        .executing_fallible(|_co| async { Err("sensor unplugged".into()) })
        .named("read_sensor");
    rt.commands().schedule(&cmd);
    let err = rt.run_for(Duration::from_secs(3)).unwrap_err();
    assert!(matches!(err, RuntimeError::Command(_)), "{err}");
    assert!(err.to_string().contains("read_sensor"), "{err}");
    assert!(!rt.command_cycle_running());
    // The rest of the runtime goes on.
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let _task = rt.scheduler().schedule(move || r.set(true), Priority::Low);
    rt.step_frame().unwrap();
    assert!(ran.get());
}

#[test]
fn after_a_command_failure_the_host_can_restart_the_command_cycle() {
    let rt = runtime();
    let failing = Command::no_requirements()
        .executing_fallible(|_co| async { Err("sensor unplugged".into()) })
        .named("read_sensor");
    rt.commands().schedule(&failing);
    assert!(rt.run_for(Duration::from_secs(1)).is_err());
    assert!(!rt.command_cycle_running());
    let cycles = rt.stats().command_cycles;
    rt.run_for(Duration::from_secs(1)).unwrap();
    assert_eq!(rt.stats().command_cycles, cycles, "stopped until restarted");

    assert!(rt.restart_commands().unwrap());
    assert!(
        !rt.restart_commands().unwrap(),
        "already running: nothing to restart"
    );
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let next = Command::no_requirements()
        .executing(move |_co| {
            let r = r.clone();
            async move { r.set(true) }
        })
        .named("next");
    rt.commands().schedule(&next);
    rt.run_for(Duration::from_secs(1)).unwrap();
    assert!(ran.get(), "commands run again");
    assert_eq!(rt.stats().command_cycles, cycles + 50);
    // A second failure is returned again, and stops the cycle again.
    rt.commands().schedule(&failing);
    assert!(rt.run_for(Duration::from_secs(1)).is_err());
    assert!(!rt.command_cycle_running());
}

#[test]
fn restart_commands_on_a_runtime_without_commands_does_nothing() {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .without_commands()
        .in_memory_store()
        .build()
        .unwrap();
    assert!(!rt.restart_commands().unwrap());
    assert!(!rt.command_cycle_running());
}

#[test]
fn a_panicking_command_is_returned_not_swallowed() {
    let rt = runtime();
    let cmd = Command::no_requirements()
        .executing(|_co| async { panic!("gear slipped") })
        .named("shift");
    rt.commands().schedule(&cmd);
    let err = rt.run_for(Duration::from_millis(100)).unwrap_err();
    match err {
        RuntimeError::CommandPanicked { message } => assert!(message.contains("gear slipped")),
        other => panic!("{other}"),
    }
}

#[test]
fn a_user_task_carrying_the_command_cycles_label_is_not_taken_for_it() {
    let rt = runtime();
    rt.scheduler()
        .with_origin("tickstep commands run()")
        .schedule_detached(|| panic!("not a command"), Priority::Normal);
    rt.run_for(Duration::from_millis(100)).unwrap();
    assert!(
        rt.command_cycle_running(),
        "a failure is recognised by type, not by label"
    );
    assert_eq!(rt.stats().task_panics, 1);
}

#[test]
fn a_panicking_kernel_task_is_isolated_and_counted() {
    let rt = runtime();
    let _task = rt.scheduler().schedule(|| panic!("oops"), Priority::Normal);
    let after = Rc::new(Cell::new(false));
    let a = after.clone();
    let _task = rt.scheduler().schedule(move || a.set(true), Priority::Low);
    rt.step_frame().unwrap();
    assert!(after.get());
    assert_eq!(rt.stats().task_panics, 1);
}

#[test]
fn bad_settings_are_typed_errors_naming_the_value() {
    let build = |b: tickstep::RuntimeBuilder| {
        b.manual_clock(ManualClock::new())
            .in_memory_store()
            .build()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        build(Runtime::builder().command_period(Duration::ZERO)),
        "command period must be greater than zero (got 0ns)"
    );
    assert_eq!(
        build(Runtime::builder().schedules_tick(Duration::ZERO)),
        "schedules tick must be greater than zero (got 0ns)"
    );
    assert!(build(Runtime::builder().frame_rate(5000)).contains("(got 5000)"));
    assert!(build(Runtime::builder().role(Role::Client).diagnostics(true)).contains("server-only"));
}

#[test]
fn a_store_in_a_directory_that_cannot_exist_is_a_store_dir_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let err = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(file.join("sub").join("t.db"))
        .build()
        .unwrap_err();
    assert!(
        matches!(err, RuntimeError::Host(HostError::StoreDir { .. })),
        "{err}"
    );
}

#[test]
fn overload_events_reach_listeners() {
    let clock = ManualClock::new();
    let rt = Runtime::builder()
        .manual_clock(clock.clone())
        .in_memory_store()
        .build()
        .unwrap();
    let seen = Rc::new(Cell::new(0));
    let s = seen.clone();
    rt.on_overload(move |_| s.set(s.get() + 1));
    let (sched, c) = (rt.scheduler().clone(), clock.clone());
    let _flood = rt
        .scheduler()
        .every(
            Duration::ZERO,
            move || {
                c.advance(Duration::from_millis(20));
                let _task = sched.schedule(|| {}, Priority::Background);
            },
            Priority::Low,
        )
        .unwrap();
    rt.run_for(Duration::from_secs(4)).unwrap();
    assert!(seen.get() >= 1);
    assert_eq!(rt.stats().overloads, seen.get());
    assert!(rt.last_overload().is_some());
}

/// A `postgres://` store location is a server's address: a refused connection is a store error,
/// and nothing is created on disk for it (docs/runtime.md §6 — no directory named `postgres:`).
#[test]
fn a_refused_postgres_url_is_a_store_error_and_creates_no_directory() {
    let url = "postgres://nobody@127.0.0.1:1/tickstep";
    let Err(err) = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(url)
        .build()
    else {
        panic!("nothing listens on port 1");
    };
    assert!(
        matches!(err, RuntimeError::Host(HostError::Store { .. })),
        "{err}"
    );
    assert!(!std::path::Path::new("postgres:").exists());
}
