//! `remaining_runs` (docs/schedules.md §16.5): a schedule fires N more times — every firing
//! counts, a trigger included — and retires `remaining_runs` once the last has settled. Checked
//! with no store, across a restart on both stores, and on a `PostgreSQL` takeover.

mod common;

use std::time::Duration;

use common::Host;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{Inspector, Options, Overlap, RetireReason, Value};

const SEC: u64 = 1_000_000_000;

on_every_store! {
    fn a_schedule_fires_its_runs_then_retires_once_the_last_has_settled(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().remaining_runs(3));
        let info = h.info(id);
        assert_eq!((info.run_limit, info.remaining_runs), (Some(3), Some(3)));
        for _ in 0..2 {
            h.after(1.0);
            h.finish_all();
        }
        h.after(1.0); // the third and last starts
        let info = h.info(id);
        assert_eq!(info.remaining_runs, Some(0));
        assert!(!info.retired, "live while its last run runs");
        assert!(info.next_run == 0.0 && info.next_runs.is_empty(), "nothing more is armed");
        h.after(1.0);
        assert_eq!(h.points_started(id), [1, 2, 3], "no fourth while the third runs");
        h.finish_all();
        let info = h.info(id);
        assert_eq!(info.retire_reason, Some(RetireReason::RemainingRuns));
        let map = info.to_value();
        assert_eq!(map.get("retire_reason"), Some(&Value::from("remaining_runs")));
        assert_eq!(map.get("run_limit"), Some(&Value::Int(3)));
        assert_eq!(map.get("remaining_runs"), Some(&Value::Int(0)));
        h.after(5.0);
        assert_eq!(h.points_started(id), [1, 2, 3]);
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 0, "a retired row goes");
        }
    }
}

#[test]
fn a_last_run_that_faults_retires_remaining_runs_and_keeps_its_fault() {
    let h = Host::new();
    let id = h.every(1.0, Options::new().remaining_runs(1));
    h.after(1.0);
    assert!(h.fault(h.last_run()));
    let info = h.info(id);
    assert_eq!(info.retire_reason, Some(RetireReason::RemainingRuns));
    assert_eq!(info.fault_count, 1);
    assert!(info.last_fault.is_some());
}

#[test]
fn a_point_queued_behind_the_last_run_is_dropped_and_the_schedule_retires() {
    let h = Host::new();
    let id = h.every(
        1.0,
        Options::new().remaining_runs(2).overlap(Overlap::Queue),
    );
    h.after(1.0);
    h.finish_all();
    h.after(1.0); // the last run starts
    h.after(1.0); // +3 arrives while it runs: nothing is armed, nothing queues
    h.finish_all();
    h.after(1.0);
    assert_eq!(h.points_started(id), [1, 2]);
    assert_eq!(h.info(id).retire_reason, Some(RetireReason::RemainingRuns));
}

#[test]
fn an_adaptive_one_shot_chain_stops_after_its_runs() {
    let h = Host::new();
    let id = h.at(1.0, Options::new().remaining_runs(2));
    h.after(1.0);
    assert!(h.finish(h.last_run(), Value::Int(5)), "again in 5 s");
    h.after(5.0);
    assert!(h.finish(h.last_run(), Value::Int(5)));
    h.after(5.0);
    assert_eq!(h.fired(), 2);
    assert_eq!(h.info(id).retire_reason, Some(RetireReason::RemainingRuns));
}

on_every_store! {
    fn a_trigger_counts_as_a_run_and_none_fires_after_the_last(store) {
        let h = Host::on(store);
        let id = h.every(60.0, Options::new().remaining_runs(2));
        assert!(h.engine.trigger_now(h.prog, id).unwrap());
        h.tick();
        assert_eq!(h.info(id).remaining_runs, Some(1));
        h.finish_all();
        h.after(60.0); // the cadence's first point is the last run
        assert!(h.engine.trigger_now(h.prog, id).unwrap());
        h.tick();
        assert_eq!(h.fired(), 2, "a trigger asked for after the last run started fires nothing");
        h.finish_all();
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::RemainingRuns));
    }
}

on_both_stores! {
    fn across_a_restart_the_runs_left_are_kept(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, Options::new().remaining_runs(3));
        for _ in 0..2 {
            h.after(1.0);
            h.finish_all();
        }
        let wall = h.clock.unix_nanos() + SEC / 2;
        drop(h);
        let stored = Inspector::open(path).unwrap().get(id).unwrap().unwrap();
        assert_eq!((stored.run_limit, stored.remaining_runs), (Some(3), Some(1)));
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        assert_eq!(h.info(id).remaining_runs, Some(1));
        h.after(0.5);
        h.finish_all();
        h.after(3.0);
        assert_eq!(h.points_started(id), [3], "one run was left");
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::RemainingRuns));
        h.engine.flush().unwrap();
        drop(h);
        assert!(Inspector::open(path).unwrap().get(id).unwrap().is_none());
    }
}

#[test]
fn postgres_only_a_node_taking_over_fires_only_the_runs_left() {
    let url = pg_or_skip!("remaining_runs_takeover");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let id = a.every(1.0, Options::new().remaining_runs(2));
    assert_eq!(a.after(1.0).started, 1);
    a.finish_all();
    a.engine.flush().unwrap();
    store.lapse_long_leases();
    b.advance(2.5); // +2 is due: B claims the row
    b.take_over(1);
    for _ in 0..5 {
        b.after(1.0);
        b.finish_all();
    }
    assert_eq!(b.points_started(id).len(), 1, "one run was left for B");
    assert_eq!(b.info(id).retire_reason, Some(RetireReason::RemainingRuns));
    drop(a);
}
