//! User code calling back into the runtime from inside the runtime: no borrow is held while a
//! verb, a command or a kernel task runs.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::commands::Command;
use tickstep::kernel::{ManualClock, Priority};
use tickstep::schedules::{ObjId, Options, Value};

const WIZARD: ObjId = ObjId(1);

fn runtime() -> Runtime {
    Runtime::builder()
        .manual_clock(ManualClock::new())
        .in_memory_store()
        .build()
        .unwrap()
}

fn at(rt: &Runtime, verb: &str, seconds_from_now: f64) {
    let mut txn = rt.schedules().begin(WIZARD);
    let when = rt.schedules().now_unix_seconds() + seconds_from_now;
    txn.schedule_at(ObjId(2), verb, when, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
}

#[test]
fn a_verb_may_schedule_a_command_and_a_kernel_task() {
    let rt = runtime();
    let command_ran = Rc::new(Cell::new(false));
    let task_ran = Rc::new(Cell::new(false));
    let c = command_ran.clone();
    let cmd = Command::no_requirements()
        .executing(move |_co| {
            let c = c.clone();
            async move { c.set(true) }
        })
        .named("from a verb");
    let (commands, kernel, t) = (
        rt.commands().clone(),
        rt.scheduler().clone(),
        task_ran.clone(),
    );
    rt.verb("kick", move |_call| {
        commands.schedule(&cmd);
        let t = t.clone();
        let _task = kernel.schedule(move || t.set(true), Priority::Low);
        Ok(Value::Int(0))
    });
    at(&rt, "kick", 1.0);
    rt.run_for(Duration::from_millis(1_100)).unwrap();
    assert!(command_ran.get() && task_ran.get());
}

#[test]
fn a_command_may_create_a_schedule_and_it_fires_on_time() {
    let rt = runtime();
    let rang_at = Rc::new(Cell::new(0.0));
    let (r, engine) = (rang_at.clone(), rt.schedules().clone());
    rt.verb("ring", move |_call| {
        r.set(engine.now_unix_seconds());
        Ok(Value::Int(0))
    });
    let engine = rt.schedules().clone();
    let cmd = Command::no_requirements()
        .executing(move |_co| {
            let engine = engine.clone();
            async move {
                let mut txn = engine.begin(WIZARD);
                let when = engine.now_unix_seconds() + 2.0;
                txn.schedule_at(ObjId(2), "ring", when, vec![], Options::new())
                    .unwrap();
                txn.commit().unwrap();
            }
        })
        .named("arm the bell");
    let start = rt.schedules().now_unix_seconds();
    rt.commands().schedule(&cmd);
    rt.run_for(Duration::from_secs(3)).unwrap();
    // Scheduled in the first command cycle (20 ms), due two seconds later, served within a frame.
    let late = rang_at.get() - (start + 2.02);
    assert!((0.0..0.05).contains(&late), "rang {late} s after due");
}

#[test]
fn a_verb_may_stop_its_own_schedule_and_register_another_verb() {
    let rt = Rc::new(runtime());
    let runs = Rc::new(Cell::new(0));
    let second = Rc::new(Cell::new(false));
    let (r, s, weak) = (runs.clone(), second.clone(), Rc::downgrade(&rt));
    rt.verb("once_only", move |call| {
        r.set(r.get() + 1);
        let mut txn = call.schedules().begin(WIZARD);
        assert!(txn.schedule_stop(call.schedule()).unwrap());
        txn.commit().unwrap();
        if let Some(rt) = weak.upgrade() {
            let s = s.clone();
            rt.verb("late_verb", move |_| {
                s.set(true);
                Ok(Value::Int(0))
            });
        }
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    txn.schedule_every(ObjId(2), "once_only", 1.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_millis(1_100)).unwrap();
    at(&rt, "late_verb", 1.0);
    rt.run_for(Duration::from_secs(5)).unwrap();
    assert_eq!(runs.get(), 1);
    assert!(second.get());
}

#[test]
fn a_kernel_task_may_read_stats_and_an_overload_listener_may_add_listeners() {
    let rt = Rc::new(runtime());
    let seen = Rc::new(Cell::new(None));
    let (s, weak) = (seen.clone(), Rc::downgrade(&rt));
    let _task = rt.scheduler().schedule(
        move || {
            if let Some(rt) = weak.upgrade() {
                s.set(Some(rt.stats().frames));
            }
        },
        Priority::Normal,
    );
    rt.step_frame().unwrap();
    assert_eq!(
        seen.get(),
        Some(0),
        "read mid-frame, before the frame was counted"
    );

    let weak = Rc::downgrade(&rt);
    rt.on_overload(move |_| {
        if let Some(rt) = weak.upgrade() {
            rt.on_overload(|_| {});
        }
    });
    let (sched, clock) = (rt.scheduler().clone(), rt.clock().manual().unwrap().clone());
    let _flood = rt
        .scheduler()
        .every(
            Duration::ZERO,
            move || {
                clock.advance(Duration::from_millis(20));
                let _task = sched.schedule(|| {}, Priority::Background);
            },
            Priority::Low,
        )
        .unwrap();
    rt.run_for(Duration::from_secs(4)).unwrap();
    assert!(rt.stats().overloads >= 1);
}
