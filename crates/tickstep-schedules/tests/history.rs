//! The bounded firing history (docs/schedules.md §9.11): what is kept, newest first, the ring's
//! retention, a restart, and a stop taking the history with the row; on both stores.
#![allow(clippy::float_cmp)] // virtual time is exact: these values are equal, not close

mod common;

use common::Host;
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{FaultKind, HISTORY_KEPT, Inspector, Options, Outcome, Value};

on_both_stores! {
    fn the_store_keeps_the_last_twenty_firings_newest_first(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new().max_faults(0));
        for n in 1..=25 {
            // Each firing ends half a second after it starts, in phase with the cadence.
            h.after(if n == 1 { 10.0 } else { 9.5 });
            h.advance(0.5);
            let run = h.last_run();
            if n == 24 {
                h.fault(run);
            } else {
                h.finish(run, Value::Int(n));
            }
        }
        let history = h.info(id).history;
        assert_eq!(history.len() as u64, HISTORY_KEPT);
        let nominals: Vec<f64> = history.iter().map(|r| r.nominal - t0).collect();
        let expected: Vec<f64> = (6..=25).rev().map(|n| f64::from(n) * 10.0).collect();
        assert_eq!(nominals, expected, "the last twenty, newest first");
        let newest = &history[0];
        assert_eq!((newest.started - t0, newest.ended - t0), (250.0, 250.5));
        assert_eq!(newest.outcome(), "returned");
        let fault = history[1].fault.clone().expect("the 24th faulted");
        assert_eq!((fault.kind, history[1].outcome()), (FaultKind::Error, "fault"));
        // The ring holds exactly twenty records, never more: on `SQLite` twenty rows of the
        // history table; on `PostgreSQL` twenty records of 25 bytes in the schedule's row, and
        // a row in the history table for the one faulted record, for its fault
        // (docs/schedules.md §13.54). The operator's view reads the same once the engine has
        // written what it holds (`flush`).
        h.engine.flush().unwrap();
        let rows = store.count(&format!("SELECT COUNT(*) FROM {}", table(store)));
        if store.kind() == common::stores::Kind::Postgres {
            let ring = format!("SELECT length(history) FROM schedules WHERE id = {}", id.get());
            assert_eq!(store.count(&ring), 500);
            assert_eq!(rows, 1, "only the faulted record has a row");
        } else {
            assert_eq!(rows, 20);
        }
        let inspected = Inspector::open(store.path()).unwrap().history(id).unwrap();
        assert_eq!(inspected, history);
    }
}

on_both_stores! {
    fn every_record_is_found_at_every_count_and_none_twice(store) {
        // A read seeks only the slots that the firings settled so far can have filled
        // (docs/schedules.md §9.11): at each count, before the writer has written them (odd
        // counts) or after (even ones), it finds each record once. A second read at the same
        // count is answered from the first (docs/schedules.md §11.44): the same records as the
        // store's own, read by the operator's view from every slot.
        let h = Host::on(store);
        let id = h.every(10.0, Options::new());
        assert!(h.info(id).history.is_empty(), "nothing has settled");
        for n in 1..=23_u64 {
            h.after(if n == 1 { 10.0 } else { 9.5 });
            h.advance(0.5);
            let run = h.last_run();
            h.finish(run, Value::Int(0));
            if n % 2 == 0 {
                h.engine.flush().unwrap();
            }
            let first = h.info(id).history;
            h.engine.flush().unwrap();
            let written = h.info(id).history;
            assert_eq!(written, first, "after {n}");
            let stored = Inspector::open(store.path()).unwrap().history(id).unwrap();
            assert_eq!(written, stored, "after {n}: as the store holds them");
            assert_eq!(written.len() as u64, n.min(HISTORY_KEPT), "after {n}");
            let mut nominals: Vec<f64> = written.iter().map(|r| r.nominal).collect();
            nominals.dedup();
            assert_eq!(nominals.len(), written.len(), "after {n}: a record twice");
        }
    }
}

on_both_stores! {
    fn history_survives_a_restart_and_goes_with_the_schedule(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new());
        let other = h.every(10.0, Options::new());
        h.after(10.0);
        for (run, _) in h.started() {
            h.runner.finish(&h.engine, run, Outcome::Killed);
        }
        let before = h.info(id).history;
        assert_eq!(before.len(), 1);
        assert_eq!(before[0].fault.as_ref().map(|f| f.kind), Some(FaultKind::Killed));
        let wall = h.clock.unix_nanos();
        drop(h);
        let h = Host::open(store.path(), ManualClock::starting_at_unix_nanos(wall + 1_000_000_000));
        assert_eq!(h.info(id).history, before, "kept across the restart");
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        txn.commit().unwrap();
        let inspector = Inspector::open(store.path()).unwrap();
        assert!(inspector.history(id).unwrap().is_empty(), "gone with the row");
        assert_eq!(inspector.history(other).unwrap().len(), 1, "the other schedule keeps its own");
        drop(inspector);
        // An operator's stop takes it too.
        assert!(Inspector::stop(store.path(), other).unwrap());
        assert!(Inspector::open(store.path()).unwrap().history(other).unwrap().is_empty());
    }
}

on_both_stores! {
    // Neither store has a foreign key from the history table (on `PostgreSQL` the faulted
    // records only, docs/schedules.md §13.54) to the schedule (docs/schedules.md §13.53): a
    // trigger deletes it with the row, and a record whose schedule is gone is not written.
    // Every firing here faults, so each has a row on both stores, and they are counted in the
    // table itself, so an orphan under any id would show.
    fn no_history_row_outlives_its_schedule(store) {
        let h = Host::on(store);
        let kept = h.every(10.0, Options::new().max_faults(0));
        let stopped = h.every(10.0, Options::new().max_faults(0));
        let once = h.at(10.0, Options::new());
        let kill_all = || {
            for (run, _) in h.started() {
                h.runner.finish(&h.engine, run, Outcome::Killed);
            }
        };
        h.after(10.0);
        kill_all();
        h.after(10.0);
        kill_all();
        assert_eq!(h.info(kept).history.len(), 2);
        assert_eq!(h.info(stopped).history.len(), 2);
        let orphans = format!(
            "SELECT COUNT(*) FROM {} WHERE schedule_id NOT IN ({}, {})",
            table(store),
            kept.get(),
            stopped.get()
        );
        // The one-shot retired as its outcome settled: its record and its delete in one batch.
        assert!(!h.valid(once));
        assert_eq!(store.count(&orphans), 0, "the retired one-shot left no record");
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(stopped).unwrap();
        txn.commit().unwrap();
        // One more firing of the live schedule settles and is written behind the next tick.
        h.after(10.0);
        kill_all();
        h.tick();
        let kept_records = h.info(kept).history.len();
        assert_eq!(kept_records, 3);
        let all = format!("SELECT COUNT(*) FROM {}", table(store));
        assert_eq!(
            store.count(&all),
            i64::try_from(kept_records).unwrap(),
            "only the live schedule's records remain"
        );
    }
}

on_both_stores! {
    // An operator stops a schedule from outside (another connection) while a record of it is
    // on its way: the record is handed to the store's writer before the engine has seen the
    // stop, so it is written after the row is gone and no trigger takes it. The engine's next
    // commit after it sees the stop deletes the schedule's records (docs/schedules.md §9.11).
    fn a_record_written_after_an_operators_stop_does_not_outlive_it(store) {
        let h = Host::on(store);
        let kept = h.every(10.0, Options::new().max_faults(0));
        let stopped = h.every(10.0, Options::new().max_faults(0));
        let kill_all = || {
            for (run, _) in h.started() {
                h.runner.finish(&h.engine, run, Outcome::Killed);
            }
        };
        h.after(10.0);
        kill_all();
        assert!(Inspector::stop(store.path(), stopped).unwrap());
        // No time has passed: this tick does not poll for stops, and hands both records over.
        h.tick();
        h.engine.flush().unwrap();
        // The next tick sees the stop; the one after it commits the firing it starts.
        h.after(10.0);
        kill_all();
        h.tick();
        h.engine.flush().unwrap();
        assert!(!h.valid(stopped));
        let all = format!("SELECT COUNT(*) FROM {}", table(store));
        assert_eq!(store.count(&all), 2, "the live schedule's two records, and no other");
        assert_eq!(h.info(kept).history.len(), 2);
    }
}

on_both_stores! {
    // `schedule_info` answers a read at the count of settled firings of the last one from
    // memory, for a live schedule the engine holds only (docs/schedules.md §11.44): a schedule
    // that retires as its last firing settles is read from the store, which takes its history
    // with the row (docs/schedules.md §9.11), so what the records in flight showed goes with it.
    fn a_schedule_retired_as_its_last_firing_settled_is_read_from_the_store(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new().remaining_runs(2));
        h.after(10.0);
        h.finish(h.last_run(), Value::Int(1));
        h.engine.flush().unwrap();
        assert_eq!(h.info(id).history.len(), 1, "live: read, and kept");
        h.after(10.0);
        h.finish(h.last_run(), Value::Int(2));
        let info = h.info(id);
        assert!(info.retired, "its last run settled");
        assert_eq!(info.history.len(), 2, "the second record is in flight");
        h.tick();
        h.engine.flush().unwrap();
        let info = h.info(id);
        assert!(info.retired);
        assert!(info.history.is_empty(), "gone with the row: {:?}", info.history);
    }
}

/// The history table's name in `store`.
fn table(store: &common::stores::Store) -> &'static str {
    match store.kind() {
        common::stores::Kind::Postgres => "tickstep_firing_history",
        _ => "firing_history",
    }
}

#[test]
fn an_engine_without_a_store_keeps_no_history() {
    let h = Host::new();
    let id = h.every(1.0, Options::new());
    h.after(1.0);
    h.finish_all();
    assert!(h.info(id).history.is_empty());
    assert_eq!(h.info(id).run_count, 1);
}

#[test]
fn a_schedule_that_does_not_persist_keeps_no_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let h = Host::open(&path, ManualClock::new());
    let id = h.every(1.0, Options::new().persist(false));
    h.after(1.0);
    h.finish_all();
    h.engine.flush().unwrap();
    assert!(h.info(id).history.is_empty());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM firing_history", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
}
