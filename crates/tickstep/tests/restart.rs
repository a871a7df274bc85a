//! The store across runtimes: schedules come back with ids and counters intact.

use std::time::Duration;

use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{ObjId, Options, Value};

/// A runtime on the store at `path`, in the virtual time of `clock`: each call is one "run" of
/// the server, so calling it again after a shutdown or drop is a restart.
fn open(path: &std::path::Path, clock: &ManualClock) -> Runtime {
    Runtime::builder()
        .manual_clock(clock.clone())
        .store_path(path)
        .build()
        .unwrap()
}

#[test]
fn a_second_runtime_on_the_same_store_finds_the_first_ones_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.db");
    let clock = ManualClock::new();
    let build = || {
        let rt = open(&path, &clock);
        rt.verb("ring", |_| Ok(Value::Int(0)));
        rt
    };
    let rt = build();
    let mut txn = rt.schedules().begin(ObjId(1));
    let id = txn
        .schedule_every(ObjId(1), "ring", 1.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_millis(3_100)).unwrap();
    rt.shutdown().unwrap();

    let rt = build();
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    assert_eq!(info.run_count, 3);
    rt.run_for(Duration::from_secs(2)).unwrap();
    drop(rt); // a plain drop commits too
    let rt = build();
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    assert_eq!(info.run_count, 5);
    assert_eq!(rt.store_path(), Some(path.as_path()));
}

#[test]
fn a_firing_in_flight_at_shutdown_is_abandoned_by_the_next_runtime_as_interrupted() {
    use tickstep::schedules::FaultKind;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.db");
    let clock = ManualClock::new();
    let build = || {
        let rt = open(&path, &clock);
        rt.async_verb("long_job", |call| async move {
            call.sleep(Duration::from_secs(3600)).await; // still running at shutdown
            Ok(Value::Int(0))
        });
        rt
    };
    let rt = build();
    let mut txn = rt.schedules().begin(ObjId(1));
    let id = txn
        .schedule_every(ObjId(1), "long_job", 10.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(11)).unwrap();
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    assert!(info.running_task.is_some(), "the firing is in flight");
    drop(rt); // the sleeping future is dropped with the kernel's queues; no panic

    let rt = build();
    assert_eq!(rt.abandoned_firings(), 1);
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    let fault = info.last_fault.expect("abandoned firings are faults");
    assert_eq!(fault.kind, FaultKind::Interrupted);
    assert_eq!(fault.value, Value::from("interrupted by restart"));
    assert!(info.running_task.is_none());
}

/// docs/runtime.md §6.7: with `rerun_interrupted`, the point in flight at the last save runs
/// again once its verb is registered, told that it is a rerun, and settles the schedule once.
#[test]
fn rerun_interrupted_runs_a_firing_in_flight_at_the_last_save_again_after_its_verb_is_registered() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.db");
    let clock = ManualClock::new();
    // Each call: (point served, is_rerun).
    let calls = Rc::new(RefCell::new(Vec::new()));
    let build = |hang: bool| {
        let rt = Runtime::builder()
            .manual_clock(clock.clone())
            .store_path(&path)
            .rerun_interrupted(true)
            .build()
            .unwrap();
        assert_eq!(rt.abandoned_firings(), 0, "none abandoned: they run again");
        let calls = Rc::clone(&calls);
        rt.async_verb("job", move |call| {
            calls
                .borrow_mut()
                .push((call.firing().nominal_unix_nanos, call.is_rerun()));
            async move {
                if hang {
                    call.sleep(Duration::from_secs(3600)).await; // in flight at shutdown
                }
                Ok(Value::Int(0))
            }
        });
        rt
    };
    let rt = build(true);
    let mut txn = rt.schedules().begin(ObjId(1));
    let id = txn
        .schedule_at(
            ObjId(1),
            "job",
            10.0 + rt.schedules().now_unix_seconds(),
            vec![],
            Options::new(),
        )
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(11)).unwrap();
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    assert!(info.running_task.is_some(), "the firing is in flight");
    drop(rt);

    let rt = build(false);
    rt.run_for(Duration::from_millis(100)).unwrap();
    let calls = calls.borrow().clone();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        calls[1],
        (calls[0].0, true),
        "the same point, told it is a rerun"
    );
    assert!(!calls[0].1, "the first run was not");
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    assert_eq!(info.running_task, None);
    assert_eq!(
        info.last_fault, None,
        "settled by the rerun's return, not abandoned"
    );
    assert_eq!(info.run_count, 1, "one point, counted once");
    assert!(info.retired, "the one-shot completed");
}

#[test]
fn a_loaded_schedule_whose_verb_has_no_code_yet_faults_as_start_failed() {
    use tickstep::schedules::FaultKind;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.db");
    let clock = ManualClock::new();
    let rt = open(&path, &clock);
    rt.verb("ring", |_| Ok(Value::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    let id = txn
        .schedule_every(ObjId(1), "ring", 1.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.shutdown().unwrap();

    let rt = open(&path, &clock); // no `ring` registered this time
    rt.run_for(Duration::from_millis(1_100)).unwrap();
    let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    assert_eq!(
        info.last_fault.map(|f| f.kind),
        Some(FaultKind::StartFailed)
    );
    assert_eq!(rt.stats().firings_not_started, 1);
}
