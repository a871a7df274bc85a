//! A simulated hour of a small world, in virtual time: the integration test.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::commands::{Mechanism, Trigger};
use tickstep::kernel::ManualClock;
use tickstep::kernel::clock::Clock;
use tickstep::schedules::{ObjId, Options, Value};

const HOUR: Duration = Duration::from_secs(3600);
/// One extra frame, so a deadline exactly at the end of the hour is served.
const AND_A_FRAME: Duration = Duration::from_millis(20);
const WIZARD: ObjId = ObjId(1);

fn runtime(clock: &ManualClock) -> Runtime {
    Runtime::builder()
        .manual_clock(clock.clone())
        .frame_rate(50)
        .in_memory_store()
        .build()
        .unwrap()
}

#[test]
fn bell_fires_exactly_60_times_in_an_hour_at_a_60_second_cadence() {
    let clock = ManualClock::new();
    let rt = runtime(&clock);
    let rings = Rc::new(RefCell::new(Vec::new()));
    let r = rings.clone();
    let c = clock.clone();
    rt.verb("ring", move |_| {
        r.borrow_mut().push(c.now());
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    let bell = txn
        .schedule_every(ObjId(10), "ring", 60.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();

    rt.run_for(HOUR + AND_A_FRAME).unwrap();

    let rings = rings.borrow();
    assert_eq!(rings.len(), 60);
    for (n, at) in rings.iter().enumerate() {
        let nominal = Duration::from_secs(60 * (n as u64 + 1));
        let late = Duration::from_nanos(at.as_nanos())
            .checked_sub(nominal)
            .unwrap();
        assert!(late <= AND_A_FRAME, "ring {n} was {late:?} late");
    }
    let info = rt.schedules().begin(WIZARD).schedule_info(bell).unwrap();
    assert_eq!(
        (info.run_count, info.fault_count, info.missed_count),
        (60, 0, 0)
    );
    assert_eq!(rt.stats().firings_returned, 60);
}

#[test]
fn regeneration_integrates_elapsed_over_the_hour() {
    let clock = ManualClock::new();
    let rt = runtime(&clock);
    let hp = Rc::new(Cell::new(0.0_f64));
    let h = hp.clone();
    rt.verb("regenerate", move |call| {
        h.set(h.get() + 0.5 * call.elapsed()); // 0.5 hp per second
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    txn.schedule_every(ObjId(20), "regenerate", 10.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();

    rt.run_for(HOUR + AND_A_FRAME).unwrap();

    // Firings at 10 s, 20 s, ... 3600 s; elapsed is 0.0 the first time, so the integral covers
    // 3590 s of real time at 0.5 hp/s.
    assert!((hp.get() - 1795.0).abs() < 0.05, "hp = {}", hp.get());
}

#[test]
fn regeneration_integrates_the_real_gap_when_the_scheduler_stalls() {
    let clock = ManualClock::new();
    let rt = runtime(&clock);
    let hp = Rc::new(Cell::new(0.0_f64));
    let starts = Rc::new(RefCell::new(Vec::new()));
    let (h, s, c) = (hp.clone(), starts.clone(), clock.clone());
    rt.verb("regenerate", move |call| {
        h.set(h.get() + call.elapsed());
        s.borrow_mut()
            .push(Duration::from_nanos(c.now().as_nanos()).as_secs_f64());
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    txn.schedule_every(ObjId(20), "regenerate", 10.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(15)).unwrap(); // first firing at 10 s
    // A 95-second stall: "skip" catch-up drops the missed points, but elapsed covers the gap.
    let stall = clock.clone();
    let _stall = rt.scheduler().schedule(
        move || stall.advance(Duration::from_secs(95)),
        tickstep::kernel::Priority::Kernel,
    );
    rt.step_frame().unwrap();
    rt.run_for(Duration::from_secs(30)).unwrap();
    let starts = starts.borrow();
    let covered = starts.last().unwrap() - starts[0];
    assert!(covered > 100.0, "{starts:?}");
    assert!(
        (hp.get() - covered).abs() < 1e-6,
        "hp = {} over {covered} s",
        hp.get()
    );
}

#[test]
fn lockdown_interrupts_the_keeper_and_the_keepers_default_comes_back() {
    let clock = ManualClock::new();
    let rt = runtime(&clock);
    let commands = rt.commands().clone();
    let door = Mechanism::new(&commands, "door");
    let door_open = Rc::new(Cell::new(false));
    let open = door_open.clone();
    let keeper = door.run_repeatedly(move || open.set(true)).named("keeper");
    door.set_default_command(&keeper).unwrap();
    let shut = door_open.clone();
    let lockdown = door
        .run(move |co| {
            let shut = shut.clone();
            async move {
                shut.set(false);
                co.wait(Duration::from_secs(30)).await;
            }
        })
        .with_priority(10)
        .named("lockdown");
    let alarm = Rc::new(Cell::new(false));
    let a = alarm.clone();
    Trigger::new(&commands, move || a.get()).on_true(&lockdown);
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    commands.on_event(move |e| {
        let line = e.to_string();
        if !line.starts_with("Mounted") && !line.starts_with("Yielded") {
            l.borrow_mut().push(line);
        }
    });
    // A durable schedule raises the alarm ten minutes in; the trigger does the rest.
    let raise = alarm.clone();
    rt.verb("sound_alarm", move |_| {
        raise.set(true);
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    let ten_minutes = rt.schedules().now_unix_seconds() + 600.0;
    txn.schedule_at(
        ObjId(30),
        "sound_alarm",
        ten_minutes,
        vec![],
        Options::new(),
    )
    .unwrap();
    txn.commit().unwrap();

    rt.run_for(Duration::from_secs(599)).unwrap();
    assert!(door_open.get(), "the keeper holds the door open");
    rt.run_for(Duration::from_secs(2)).unwrap();
    assert!(!door_open.get(), "the lockdown shut it");
    assert!(commands.running().iter().any(|c| c.name == "lockdown"));
    rt.run_for(Duration::from_secs(60)).unwrap();
    assert!(door_open.get(), "the keeper is back");

    let log = log.borrow();
    let at = |line: &str| {
        log.iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("no {line:?} in {log:?}"))
    };
    assert!(at("Interrupted keeper by lockdown") < at("Completed lockdown"));
    let back = log.iter().rposition(|l| l == "Scheduled keeper").unwrap();
    assert!(back > at("Completed lockdown"), "{log:?}");
    assert_eq!(rt.stats().firings_returned, 1);
}

#[test]
fn a_whole_idle_day_takes_no_steps_between_deadlines() {
    let clock = ManualClock::new();
    let rt = Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .diagnostics(false)
        .in_memory_store()
        .build()
        .unwrap();
    let rings = Rc::new(Cell::new(0));
    let r = rings.clone();
    rt.verb("ring", move |_| {
        r.set(r.get() + 1);
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(WIZARD);
    txn.schedule_every(ObjId(10), "ring", 3600.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(24 * 3600) + AND_A_FRAME)
        .unwrap();
    assert_eq!(rings.get(), 24);
    // Each hourly firing costs a handful of frames (wake window, tick, the firing); idle hours
    // cost none.
    assert!(rt.stats().frames_run < 24 * 10, "{:?}", rt.stats());
}
