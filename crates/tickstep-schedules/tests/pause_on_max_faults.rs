//! `on_max_faults = "pause"` (docs/schedules.md §16.6): at `max_faults` consecutive faults a
//! recurring schedule pauses with a note naming the fault instead of retiring, keeps its
//! counters, and fires again once resumed. Checked with no store, across a restart on both
//! stores, and on a `PostgreSQL` takeover.

mod common;

use std::time::Duration;

use common::Host;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{
    Inspector, ObjId, OnMaxFaults, Options, RetireReason, ScheduleStatus, Value,
};

fn pausing(max_faults: u32) -> Options {
    Options::new()
        .max_faults(max_faults)
        .on_max_faults(OnMaxFaults::Pause)
}

/// Ticks one second on and faults whatever started.
fn fault_once(h: &Host) {
    h.after(1.0);
    for (run, _) in h.started() {
        h.fault(run);
    }
}

on_every_store! {
    fn at_max_faults_the_schedule_pauses_with_a_note_naming_the_fault(store) {
        let h = Host::on(store);
        let id = h.every(1.0, pausing(2));
        let retiring = h.every(1.0, Options::new().max_faults(2));
        fault_once(&h);
        assert!(h.info(id).pause.is_none(), "one fault is not the limit");
        fault_once(&h);
        let info = h.info(id);
        assert!(!info.retired);
        assert_eq!(info.status(), ScheduleStatus::Paused);
        let pause = info.pause.clone().expect("paused");
        assert_eq!(pause.by, ObjId(-1), "by no one: the engine");
        assert!(
            pause.note.contains("max_faults") && pause.note.contains("2 faults")
                && pause.note.contains("error") && pause.note.contains("E_DIV"),
            "{}",
            pause.note
        );
        assert_eq!((info.fault_count, info.consecutive_faults), (2, 2));
        let map = info.to_value();
        assert_eq!(map.get("on_max_faults"), Some(&Value::from("pause")));
        assert_eq!(h.info(retiring).retire_reason.map(RetireReason::as_str), Some("max_faults"));
        // Paused: nothing fires.
        let fired = h.fired();
        h.after(5.0);
        assert_eq!(h.fired(), fired);
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            let stored = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
            assert_eq!(stored.on_max_faults, OnMaxFaults::Pause);
            assert_eq!(stored.pause.map(|p| p.note), Some(pause.note.clone()));
        }
        // Resumed, it fires again; a success resets the count, one more fault does not pause.
        assert!(h.engine.resume(h.prog, id).unwrap());
        h.after(1.0);
        assert!(h.fired() > fired);
        h.finish_all();
        assert_eq!(h.info(id).consecutive_faults, 0);
        fault_once(&h);
        assert!(h.info(id).pause.is_none());
    }
}

#[test]
fn resumed_while_still_failing_it_pauses_again_at_the_next_fault() {
    let h = Host::new();
    let id = h.every(1.0, pausing(1));
    fault_once(&h);
    assert!(h.info(id).pause.is_some());
    assert!(h.engine.resume(h.prog, id).unwrap());
    fault_once(&h);
    let info = h.info(id);
    assert!(info.pause.is_some(), "the consecutive count is kept");
    assert_eq!(info.consecutive_faults, 2);
}

#[test]
fn a_one_shot_still_retires_at_max_faults() {
    let h = Host::new();
    let id = h.at(1.0, pausing(1));
    fault_once(&h);
    assert_eq!(
        h.info(id).retire_reason.map(RetireReason::as_str),
        Some("max_faults")
    );
}

on_both_stores! {
    fn a_schedule_paused_at_max_faults_comes_back_paused_after_a_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, pausing(1));
        fault_once(&h);
        let note = h.info(id).pause.expect("paused").note;
        let wall = h.clock.unix_nanos() + 10_000_000_000;
        drop(h);
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        let info = h.info(id);
        assert_eq!(info.pause.map(|p| p.note), Some(note));
        assert_eq!(info.on_max_faults, OnMaxFaults::Pause);
        h.after(1.0);
        assert_eq!(h.fired(), 0, "it stays paused");
    }
}

#[test]
fn postgres_only_a_node_taking_over_counts_the_faults_in_a_row_across_nodes_and_pauses() {
    let url = pg_or_skip!("pause_on_max_faults_takeover");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let id = a.every(1.0, pausing(2));
    fault_once(&a);
    a.engine.flush().unwrap();
    store.lapse_long_leases();
    b.advance(2.5); // +2 is due: B claims the row
    b.take_over(1);
    // B's first firing faults: the second in a row, counted from A's.
    for (run, _) in b.started() {
        b.fault(run);
    }
    let info = b.info(id);
    assert_eq!(info.consecutive_faults, 2);
    assert!(info.pause.is_some(), "paused by B at the limit");
    drop(a);
}
