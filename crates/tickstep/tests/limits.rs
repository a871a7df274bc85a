//! Firings are tasks: time and tick limits, kill, listing — end to end in virtual time.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::kernel::{Clock, ManualClock};
use tickstep::schedules::{FaultKind, ObjId, Options, RetireReason, ScheduleId, Value};
use tickstep::{FiringLimits, Runtime};

const WIZARD: ObjId = ObjId(1);

fn runtime(clock: &ManualClock, limits: FiringLimits) -> Runtime {
    Runtime::builder()
        .manual_clock(clock.clone())
        .firing_limits(limits)
        .without_commands()
        .in_memory_store()
        .build()
        .unwrap()
}

fn every(rt: &Runtime, verb: &str, seconds: f64, options: Options) -> ScheduleId {
    let mut txn = rt.schedules().begin(WIZARD);
    let id = txn
        .schedule_every(ObjId(5), verb, seconds, vec![], options)
        .unwrap();
    txn.commit().unwrap();
    id
}

fn last_fault(rt: &Runtime, id: ScheduleId) -> Option<FaultKind> {
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    info.last_fault.map(|f| f.kind)
}

#[test]
fn an_async_verb_past_its_time_limit_is_dropped_at_the_limit_and_faults_time_limit() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none().seconds(Duration::from_secs(2)));
    let finished = Rc::new(Cell::new(false));
    let f = finished.clone();
    rt.async_verb("slow", move |call| {
        let f = f.clone();
        async move {
            call.sleep(Duration::from_secs(10)).await;
            f.set(true);
            Ok(Value::Int(0))
        }
    });
    let id = every(&rt, "slow", 60.0, Options::new());
    rt.run_for(Duration::from_secs(61)).unwrap();
    assert_eq!(rt.running_firings().len(), 1);
    // Asleep for 10 s, but woken and dropped at its 2 s limit.
    rt.run_for(Duration::from_millis(2_050)).unwrap();
    assert!(rt.running_firings().is_empty());
    assert!(!finished.get(), "dropped, never resumed");
    assert_eq!(last_fault(&rt, id), Some(FaultKind::TimeLimit));
    assert_eq!(rt.stats().firings_faulted, 1);
}

#[test]
fn an_async_verb_past_its_poll_budget_faults_tick_limit() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none().ticks(3));
    let polls = Rc::new(Cell::new(0));
    let p = polls.clone();
    rt.async_verb("chatty", move |_call| {
        let p = p.clone();
        async move {
            loop {
                p.set(p.get() + 1);
                tickstep::yield_now().await;
            }
        }
    });
    let id = every(&rt, "chatty", 60.0, Options::new());
    rt.run_for(Duration::from_secs(61)).unwrap();
    assert_eq!(polls.get(), 3, "three polls allowed, the fourth dropped it");
    assert_eq!(last_fault(&rt, id), Some(FaultKind::TickLimit));
    assert!(rt.running_firings().is_empty());
}

#[test]
fn a_sync_verb_that_overruns_is_measured_and_reported_after_it_returns() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none().seconds(Duration::from_secs(1)));
    let effects = Rc::new(Cell::new(0));
    let (e, c) = (effects.clone(), clock.clone());
    rt.verb("grind", move |_| {
        c.advance(Duration::from_secs(3)); // a 3 s computation, in virtual time
        e.set(e.get() + 1);
        Ok(Value::Int(0))
    });
    let id = every(&rt, "grind", 60.0, Options::new());
    rt.run_for(Duration::from_secs(60)).unwrap();
    assert_eq!(
        effects.get(),
        1,
        "it cannot be stopped mid-call: its effects stand"
    );
    assert_eq!(last_fault(&rt, id), Some(FaultKind::TimeLimit));
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    let Some(Value::Str(text)) = info.last_fault.map(|f| f.value) else {
        panic!("a text value")
    };
    assert!(text.contains("ran 3s, limit 1s"), "{text}");
}

#[test]
fn kill_firing_drops_an_async_verb_and_faults_killed() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none());
    rt.async_verb("stuck", |call| async move {
        call.wait_until(|| false).await;
        Ok(Value::Int(0))
    });
    let id = every(&rt, "stuck", 60.0, Options::new());
    rt.run_for(Duration::from_secs(60) + Duration::from_millis(100))
        .unwrap();
    let running = rt.running_firings();
    assert_eq!(running.len(), 1);
    assert_eq!((running[0].schedule, running[0].target), (id, ObjId(5)));
    assert!(
        running[0].polls >= 5,
        "polled every frame: {}",
        running[0].polls
    );
    // Started by the first frame at or after its 60 s deadline (60 fps frames: within 17 ms).
    let epoch = clock.unix_nanos() - clock.now().as_nanos();
    let started = running[0].started_unix_nanos - epoch;
    assert!(
        (60_000_000_000..60_017_000_000).contains(&started),
        "{started}"
    );
    assert!(rt.kill_firing(running[0].run));
    assert!(!rt.kill_firing(running[0].run), "no longer running");
    assert!(rt.running_firings().is_empty());
    assert_eq!(last_fault(&rt, id), Some(FaultKind::Killed));
    // Its schedule goes on: the next firing starts at 120 s.
    rt.run_for(Duration::from_secs(60)).unwrap();
    assert_eq!(rt.kill_firings_of(id), 1);
}

#[test]
fn limits_and_kills_count_toward_max_faults() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none().ticks(1));
    rt.async_verb("twice", |_call| async move {
        tickstep::yield_now().await;
        Ok(Value::Int(0))
    });
    let id = every(&rt, "twice", 10.0, Options::new().max_faults(3));
    rt.run_for(Duration::from_secs(40)).unwrap();
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    assert!(info.retired);
    assert_eq!(info.retire_reason, Some(RetireReason::MaxFaults));
    assert_eq!(info.fault_count, 3);
}

#[test]
fn a_schedule_may_have_its_own_limits() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none().ticks(1));
    rt.async_verb("two_polls", |_call| async move {
        tickstep::yield_now().await;
        Ok(Value::Int(0))
    });
    let strict = every(&rt, "two_polls", 10.0, Options::new());
    let relaxed = every(&rt, "two_polls", 10.0, Options::new());
    rt.set_firing_limits(relaxed, Some(FiringLimits::none().ticks(2)));
    rt.run_for(Duration::from_secs(10) + Duration::from_millis(100))
        .unwrap();
    assert_eq!(last_fault(&rt, strict), Some(FaultKind::TickLimit));
    assert_eq!(last_fault(&rt, relaxed), None);
    rt.set_firing_limits(relaxed, None);
    rt.run_for(Duration::from_secs(10)).unwrap();
    assert_eq!(last_fault(&rt, relaxed), Some(FaultKind::TickLimit));
}

#[test]
fn limits_from_a_scripts_options_map_apply_to_that_schedule() {
    let clock = ManualClock::new();
    let rt = runtime(&clock, FiringLimits::none());
    rt.async_verb("nap", |call| async move {
        call.sleep(Duration::from_secs(30)).await;
        Ok(Value::Int(0))
    });
    let map = Value::Map(vec![(Value::from("seconds"), Value::Float(1.5))]);
    let options = Options::from_map(&map).unwrap();
    // The schedule keeps its options' limits: the host hands nothing over.
    let id = every(&rt, "nap", 60.0, options);
    rt.run_for(Duration::from_secs(62)).unwrap();
    assert_eq!(last_fault(&rt, id), Some(FaultKind::TimeLimit));
    // A bad limit in the map is refused at the call site, nothing created.
    let bad = Value::Map(vec![(Value::from("ticks"), Value::Int(0))]);
    let err = Options::from_map(&bad).unwrap_err();
    assert!(err.to_string().contains("ticks"), "{err}");
}

/// A runtime on the store file `path`, on `clock`, with no default limits.
fn on_file(path: &std::path::Path, clock: &ManualClock) -> Runtime {
    Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .store_path(path)
        .build()
        .unwrap()
}

#[test]
fn a_schedules_own_limits_survive_a_restart_and_still_apply() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("limits.db");
    let clock = ManualClock::new();
    let (timed, polled) = {
        let rt = on_file(&path, &clock);
        // Code is not stored: the first run registers the names, the second the code it runs.
        rt.verb("nap", |_call| Ok(Value::Int(0)));
        rt.verb("twice", |_call| Ok(Value::Int(0)));
        let map = Value::Map(vec![(Value::from("seconds"), Value::Int(2))]);
        let timed = every(&rt, "nap", 60.0, Options::from_map(&map).unwrap());
        let polled = every(&rt, "twice", 60.0, Options::new().tick_limit(1));
        rt.shutdown().unwrap();
        (timed, polled)
    };
    // Nothing carries the limits over but the store: no override, no default.
    let rt = on_file(&path, &clock);
    rt.async_verb("nap", |call| async move {
        call.sleep(Duration::from_secs(10)).await;
        Ok(Value::Int(0))
    });
    rt.async_verb("twice", |_call| async move {
        tickstep::yield_now().await;
        Ok(Value::Int(0))
    });
    let info = rt.schedules().begin(WIZARD).schedule_info(timed).unwrap();
    assert_eq!(info.time_limit, Some(Duration::from_secs(2)));
    rt.run_for(Duration::from_secs(61)).unwrap();
    assert_eq!(last_fault(&rt, polled), Some(FaultKind::TickLimit));
    assert_eq!(last_fault(&rt, timed), None, "still asleep, inside its 2 s");
    rt.run_for(Duration::from_millis(2_050)).unwrap();
    assert_eq!(last_fault(&rt, timed), Some(FaultKind::TimeLimit));
}
