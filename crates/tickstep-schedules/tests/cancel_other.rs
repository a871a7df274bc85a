//! Overlap `"cancel_other"` (docs/schedules.md §16.7): a point due while the previous firing
//! runs kills that firing — a fault of kind `killed` naming why, as a kill is counted — asks the
//! runner to stop its task, and starts the new one. Checked with no store, on both stores across
//! a restart, and on a `PostgreSQL` takeover.

mod common;

use std::time::Duration;

use common::Host;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{
    Catchup, FaultKind, Inspector, OnMaxFaults, Options, Overlap, RetireReason, Value,
};

const SEC: u64 = 1_000_000_000;

fn cancelling() -> Options {
    Options::new().overlap(Overlap::CancelOther)
}

on_every_store! {
    fn a_point_due_while_a_firing_runs_kills_it_and_starts(store) {
        let h = Host::on(store);
        let id = h.every(1.0, cancelling());
        h.after(1.0);
        let first = h.last_run();
        h.after(1.0); // +2 arrives while +1 runs
        assert_eq!(h.points_started(id), [1, 2]);
        assert_eq!(h.runner.cancelled(), [first], "the runner was asked to stop +1");
        assert_eq!(h.runner.running(), [h.last_run()], "only +2 runs");
        let info = h.info(id);
        let fault = info.last_fault.clone().expect("the kill is a fault");
        assert_eq!(fault.kind, FaultKind::Killed);
        let Value::Str(why) = &fault.value else { panic!("{fault:?}") };
        assert!(why.contains("cancel_other"), "{why}");
        assert_eq!((info.fault_count, info.consecutive_faults, info.overlap_count), (1, 1, 0));
        assert_eq!(info.to_value().get("overlap"), Some(&Value::from("cancel_other")));
        // The killed run's own report is ignored: the engine no longer waits for it.
        assert!(!h.finish(first, Value::Int(0)));
        h.finish_all();
        assert_eq!(h.info(id).consecutive_faults, 0);
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            let stored = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
            assert_eq!(stored.overlap, Overlap::CancelOther);
            let history = Inspector::open(store.path()).unwrap().history(id).unwrap();
            assert_eq!(history.len(), 2, "the killed firing is in the history");
            assert!(history.iter().any(|r| r.fault.as_ref().is_some_and(|f| f.kind == FaultKind::Killed)));
        }
    }
}

#[test]
fn a_stall_while_a_firing_runs_starts_the_newest_point_and_counts_the_others_as_overlaps() {
    let h = Host::new();
    let id = h.every(1.0, cancelling());
    h.after(1.0);
    h.after(3.2); // +2, +3, +4 arrive while +1 runs
    assert_eq!(h.points_started(id), [1, 4]);
    assert_eq!(h.info(id).overlap_count, 2);
}

#[test]
fn kills_count_toward_max_faults_and_the_limit_stops_the_new_start() {
    let h = Host::new();
    let retiring = h.every(1.0, cancelling().max_faults(2));
    let pausing = h.every(
        1.0,
        cancelling().max_faults(2).on_max_faults(OnMaxFaults::Pause),
    );
    for _ in 0..3 {
        h.after(1.0); // nothing ever finishes: each point kills the one before
    }
    assert_eq!(
        h.points_started(retiring),
        [1, 2],
        "the second kill retired it: +3 did not start"
    );
    assert_eq!(
        h.info(retiring).retire_reason,
        Some(RetireReason::MaxFaults)
    );
    assert_eq!(h.points_started(pausing), [1, 2]);
    assert!(h.info(pausing).pause.is_some());
}

#[test]
fn a_trigger_while_a_firing_runs_kills_it_and_starts() {
    let h = Host::new();
    let id = h.every(60.0, cancelling());
    h.after(60.0);
    let first = h.last_run();
    assert!(h.engine.trigger_now(h.prog, id).unwrap());
    h.tick();
    assert_eq!(h.fired(), 2);
    assert_eq!(h.runner.cancelled(), [first]);
}

#[test]
fn a_bad_overlap_word_names_the_words_allowed() {
    let err = Options::from_map(&Value::Map(vec![(
        Value::from("overlap"),
        Value::from("cancel"),
    )]))
    .unwrap_err();
    assert_eq!(err.code(), "E_INVARG");
    assert!(err.to_string().contains("cancel_other"), "{err}");
}

on_both_stores! {
    fn a_firing_in_flight_at_a_restart_is_killed_by_the_next_point(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, cancelling());
        h.after(10.0);
        let wall = h.clock.unix_nanos() + 5 * SEC;
        drop(h); // a clean stop: +10 is still running
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        let back: Vec<_> = h.engine.interrupted();
        assert_eq!(back.len(), 1);
        assert!(h.engine.reattach(back[0].run), "the host's task survived the restart");
        h.after(5.0); // +20 arrives while the reattached +10 runs
        assert_eq!(h.points_started(id), [20]);
        assert_eq!(h.runner.cancelled(), [back[0].run]);
        assert_eq!(h.info(id).last_fault.map(|f| f.kind), Some(FaultKind::Killed));
    }
}

#[test]
fn postgres_only_a_node_taking_over_kills_nothing_of_the_old_node_and_starts() {
    let url = pg_or_skip!("cancel_other_takeover");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    // Catch-up "once": the claim applies catch-up to +2 (docs/schedules.md §11.39), which fires.
    let id = a.every(1.0, cancelling().catchup(Catchup::Once));
    assert_eq!(a.after(1.0).started, 1); // +1 runs on A, which then goes silent
    a.engine.flush().unwrap();
    store.lapse_long_leases();
    b.advance(2.5);
    b.take_over(1);
    // A's +1 was settled as taken over (docs/schedules.md §11.39); B's run is its own, and the
    // next point kills it.
    assert_eq!(b.points_started(id), [2]);
    let taken = b.info(id).last_fault.expect("taken over");
    assert_eq!(taken.kind, FaultKind::TakenOver);
    assert!(
        b.runner.cancelled().is_empty(),
        "B has no task of A's to stop"
    );
    b.after(1.0);
    assert_eq!(b.points_started(id), [2, 3]);
    assert_eq!(b.runner.cancelled().len(), 1);
    assert_eq!(b.info(id).overlap, Overlap::CancelOther);
    drop(a);
}
