//! The store across restarts, on `SQLite` and `PostgreSQL` alike: durability, ids, catch-up after
//! downtime, in-flight firings handed back, values and outcomes that survive a stop. The store's
//! file itself (schema, WAL, the write queue, what it refuses) is `store_file.rs`. Real files in
//! temp dirs.

mod common;

use std::path::Path;

use common::stores::Store;
use common::{Host, approx};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{
    Catchup, FaultKind, Options, Outcome, Overlap, RetireReason, RunId, ScheduleId, Value,
};

/// Drops `h` and opens the same file `secs_later` seconds of wall time later.
fn restart(h: Host, path: &Path, secs_later: f64) -> Host {
    let wall = h.clock.unix_nanos() + (secs_later * 1e9) as u64;
    drop(h);
    Host::open(path, ManualClock::starting_at_unix_nanos(wall))
}

/// A count read beside the engine, once the store has written what it was handed.
fn count(h: &Host, store: &Store, sql: &str) -> i64 {
    h.engine.wait_for_writes().unwrap();
    store.count(sql)
}

on_both_stores! {
    fn restart_keeps_ids_deadlines_counters_and_options_intact(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(
                h.room,
                "tick",
                10.0,
                common::nested_args(),
                common::unusual_options(h.prog),
            )
            .unwrap();
        txn.commit().unwrap();
        for _ in 0..3 {
            h.advance(10.25);
            h.tick();
            h.advance(0.5);
            h.fault(h.last_run());
        }
        h.tick(); // group commit of the last outcome
        let before = h.info(id);
        let h = restart(h, path, 0.0);
        let after = h.info(id);
        assert_eq!(
            after.mean_duration_ns, 0,
            "the duration window is per server run"
        );
        let mut expected = before.clone();
        expected.mean_duration_ns = 0;
        expected.p99_duration_ns = 0;
        assert_eq!(after, expected);
        assert_eq!(after.fault_count, 3);
        assert_eq!(after.last_fault.unwrap().value, Value::from("E_DIV"));
    }
}

on_both_stores! {
    fn the_id_high_water_mark_never_goes_back_across_restarts(store) {
        let path = store.path();
        let mut h = Host::open(path, ManualClock::new());
        let mut all: Vec<ScheduleId> = Vec::new();
        for round in 0..4 {
            for persist in [true, false] {
                let mut txn = h.engine.begin(h.prog);
                let id = txn
                    .schedule_every(h.room, "tick", 1.0, vec![], Options::new().persist(persist))
                    .unwrap();
                if round % 2 == 0 {
                    txn.commit().unwrap();
                }
                all.push(id);
            }
            h = restart(h, path, 1.0);
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    }
}

on_both_stores! {
    fn ids_continue_from_the_last_one_used_after_a_clean_stop(store) {
        // docs/schedules.md §11.47: a clean stop gives the unused end of its block back.
        let path = store.path();
        let mut h = Host::open(path, ManualClock::new());
        let mut ids = vec![h.every(1.0, Options::new()), h.every(1.0, Options::new())];
        for _ in 0..3 {
            h = restart(h, path, 1.0);
            ids.push(h.every(1.0, Options::new()));
        }
        let raw: Vec<u64> = ids.iter().map(|id| id.get()).collect();
        assert_eq!(raw, [1, 2, 3, 4, 5], "no jump after a clean stop");
    }
}

on_both_stores! {
    fn rolled_back_ids_never_appear_after_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let mut txn = h.engine.begin(h.prog);
        let ghost = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
            .unwrap();
        txn.rollback();
        let h = restart(h, path, 0.0);
        assert!(!h.valid(ghost));
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
        let fresh = h.every(1.0, Options::new());
        assert!(fresh > ghost);
    }
}

on_both_stores! {
    fn creation_and_stop_are_durable_when_commit_returns(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(60.0, Options::new());
        // Another connection sees the row at once: no tick, no flush needed.
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 1);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        assert_eq!(
            count(&h, store, "SELECT COUNT(*) FROM schedules"),
            1,
            "not before commit"
        );
        txn.commit().unwrap();
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
    }
}

on_both_stores! {
    fn cadence_updates_are_group_committed_once_per_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let ids: Vec<_> = (0..5).map(|_| h.every(1.0, Options::new())).collect();
        h.after(1.0);
        assert_eq!(
            count(&h, store, "SELECT SUM(run_count) FROM schedules"),
            5,
            "one tick, all five rows"
        );
        h.finish_all();
        assert_eq!(
            count(&h, store, "SELECT COUNT(*) FROM schedules WHERE running IS NULL"
            ),
            0
        );
        h.tick();
        assert_eq!(
            count(&h, store, "SELECT COUNT(*) FROM schedules WHERE running IS NULL"
            ),
            5
        );
        let _ = ids;
    }
}

on_both_stores! {
    fn non_persistent_schedules_never_touch_the_disk_and_vanish_on_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, Options::new().persist(false));
        h.after(1.0);
        h.finish_all();
        h.tick();
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
        let h = restart(h, path, 0.0);
        assert!(!h.valid(id));
        assert_eq!(h.engine.live_count(), 0);
    }
}

on_both_stores! {
    fn retired_entries_are_not_saved_so_a_restart_drops_them(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        h.tick();
        assert!(h.info(id).retired);
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
        let h = restart(h, path, 0.0);
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
    }
}

on_both_stores! {
    fn catchup_skip_after_downtime_drops_the_missed_points(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        let h = restart(h, path, 45.0); // points at +10 .. +40 passed while down
        h.tick();
        assert_eq!(h.fired(), 0);
        let info = h.info(id);
        assert_eq!(info.missed_count, 4);
        assert!(approx(info.next_run, common::t0() + 50.0));
    }
}

on_both_stores! {
    fn catchup_once_after_downtime_fires_one_late_firing(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new().catchup(Catchup::Once));
        let h = restart(h, path, 45.0);
        h.tick();
        assert_eq!(h.fired(), 1);
        assert_eq!(h.info(id).missed_count, 3);
    }
}

on_both_stores! {
    fn catchup_all_after_downtime_fires_each_missed_point_in_order(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(10.0, Options::new().catchup(Catchup::All));
        let h = restart(h, path, 45.0);
        for _ in 0..4 {
            h.tick();
            h.finish_all();
        }
        let nominals: Vec<f64> = (0..4).map(|i| h.nominal(i) - common::t0()).collect();
        assert_eq!(nominals, vec![10.0, 20.0, 30.0, 40.0]);
    }
}

on_both_stores! {
    fn catchup_skip_is_applied_at_open_so_info_is_true_before_the_first_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        let h = restart(h, path, 45.0); // points at +10 .. +40 passed while down
        let info = h.info(id);
        assert_eq!(info.missed_count, 4, "counted at open, no tick yet");
        assert!(approx(info.next_run, common::t0() + 50.0));
        assert_eq!(
            h.engine.next_deadline_unix_nanos(),
            Some((common::t0() + 50.0) as u64 * 1_000_000_000)
        );
        h.tick();
        assert_eq!(
            (h.fired(), h.info(id).missed_count),
            (0, 4),
            "the tick adds nothing"
        );
        // The first group commit writes what open decided.
        assert_eq!(count(&h, store, "SELECT missed_count FROM schedules"), 4);
    }
}

on_both_stores! {
    fn catchup_once_is_applied_at_open_and_the_kept_point_fires_at_the_first_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new().catchup(Catchup::Once));
        let h = restart(h, path, 45.0);
        let info = h.info(id);
        assert_eq!(info.missed_count, 3);
        assert!(approx(info.next_run, common::t0() + 40.0), "due now");
        h.tick();
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), common::t0() + 40.0));
        let info = h.info(id);
        assert_eq!(info.missed_count, 3);
        assert!(approx(info.next_run, common::t0() + 50.0));
    }
}

on_both_stores! {
    fn one_passed_point_at_open_is_an_ordinary_late_firing_not_a_catch_up(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        let h = restart(h, path, 15.0); // only +10 passed
        let info = h.info(id);
        assert_eq!(info.missed_count, 0);
        assert!(approx(info.next_run, common::t0() + 10.0));
        h.tick();
        assert_eq!(h.fired(), 1);
    }
}

on_both_stores! {
    fn an_in_flight_firing_is_handed_back_and_a_reattached_one_still_counts_as_running(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        let run = h.last_run();
        let h = restart(h, path, 3.0);
        let interrupted = h.engine.interrupted();
        assert_eq!(interrupted.len(), 1);
        assert_eq!((interrupted[0].schedule, interrupted[0].run), (id, run));
        assert!(h.engine.reattach(run));
        assert!(h.engine.interrupted().is_empty());
        assert_eq!(h.info(id).running_task, Some(run));
        // The deadline it was serving is not fired again; overlap applies to it as before.
        h.after(7.0);
        assert_eq!(h.fired(), 0);
        assert_eq!(h.info(id).overlap_count, 1);
        assert!(h.engine.report(run, Outcome::Returned(Value::Int(0))));
        h.after(10.0);
        assert_eq!(h.fired(), 1);
    }
}

on_both_stores! {
    fn an_abandoned_in_flight_firing_is_a_fault_interrupted_by_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.at(0.0, Options::new());
        h.tick();
        let run = h.last_run();
        let h = restart(h, path, 1.0);
        assert!(h.engine.abandon(run));
        let info = h.info(id);
        let fault = info.last_fault.unwrap();
        assert_eq!(fault.kind, FaultKind::Interrupted);
        assert_eq!(fault.value, Value::from("interrupted by restart"));
        assert_eq!(
            info.retire_reason,
            Some(RetireReason::Completed),
            "a one-shot then retires"
        );
    }
}

on_both_stores! {
    fn a_rerun_in_flight_firing_starts_again_for_its_point_under_its_run_and_settles_once(store) {
        // docs/schedules.md §11.57: the host runs the handed-back point again.
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        let (run, served) = (h.last_run(), h.nominal(0));
        let runs_before = h.info(id).run_count;
        let h = restart(h, path, 3.0);
        assert!(h.engine.rerun(run));
        assert!(!h.engine.rerun(run), "decided once");
        assert!(h.engine.interrupted().is_empty());
        let started = h.started();
        assert_eq!(started.len(), 1, "started again through the runner");
        assert_eq!(started[0].0, run, "under the run id it was handed back with");
        assert!(approx(started[0].1.nominal_unix_nanos as f64 / 1e9, served));
        assert_eq!(h.info(id).running_task, Some(run));
        assert_eq!(h.info(id).run_count, runs_before, "the first run counted it");
        // It is the schedule's running firing: the next point waits behind it (overlap).
        h.after(7.0);
        assert_eq!(h.started().len(), 1);
        assert!(h.engine.report(run, Outcome::Returned(Value::Int(0))));
        let info = h.info(id);
        assert_eq!((info.fault_count, info.running_task), (0, None));
        h.after(10.0);
        assert_eq!(h.started().len(), 2, "and the schedule goes on");
    }
}

on_both_stores! {
    fn a_restored_firing_of_an_interrupted_recurring_schedule_is_armed_for_the_next_point_with_catchup(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new().catchup(Catchup::Once));
        h.after(10.0); // serving +10; +20 armed
        let run = h.last_run();
        let h = restart(h, path, 35.0); // now +45: +20, +30, +40 passed while down
        h.engine.reattach(run);
        h.tick();
        assert_eq!(h.fired(), 0, "catch-up waits for the restored firing");
        assert_eq!(h.info(id).missed_count, 2);
        h.engine.report(run, Outcome::Returned(Value::Int(0)));
        h.tick();
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), common::t0() + 40.0));
    }
}

on_both_stores! {
    /// docs/schedules.md §7.9, §11.5: the reopened engine numbers its runs above the restored
    /// ones, even after the host abandoned them (their schedule retired at the first abandon),
    /// so no id names two runs; when that retired entry expires, the new runs are still settled
    /// by their outcomes.
    fn a_run_started_after_a_restart_is_settled_by_its_outcome(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let concurrent = Options::new().overlap(Overlap::Concurrent).max_faults(1);
        let retiring = h.every(1.0, concurrent.clone());
        h.after(1.0);
        h.after(1.0);
        let h = restart(h, path, 0.5);
        let mut restored: Vec<RunId> = h.engine.interrupted().iter().map(|f| f.run).collect();
        restored.sort_unstable();
        assert_eq!(restored.len(), 2);
        for &run in &restored {
            assert!(h.engine.abandon(run));
        }
        assert_eq!(h.info(retiring).retire_reason, Some(RetireReason::MaxFaults));
        assert_eq!(h.info(retiring).running_task, None, "both abandoned runs are over");

        let id = h.every(1.0, concurrent);
        h.after(1.0);
        h.after(1.0);
        let runs: Vec<RunId> = h.started().iter().map(|(run, _)| *run).collect();
        let above: Vec<RunId> = restored.iter().map(|r| RunId(r.0 + 2)).collect();
        assert_eq!(runs, above, "the new runs count on above the restored ones");
        h.after(60.0);
        assert!(!h.valid(retiring));
        for run in runs {
            assert!(h.finish(run, Value::Int(0)), "run {run:?} is awaited");
        }
        assert_eq!(h.info(id).consecutive_faults, 0);
    }
}

on_both_stores! {
    fn the_result_of_a_restored_firing_whose_schedule_was_stopped_is_ignored(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        let run = h.last_run();
        let h = restart(h, path, 1.0);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        txn.commit().unwrap();
        assert!(!h.engine.report(run, Outcome::Returned(Value::Int(0))));
    }
}

on_both_stores! {
    fn anonymous_object_references_are_still_enumerated_after_a_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let anon = h.world.add_anonymous(h.prog);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_every(h.room, "tick", 5.0, vec![Value::Obj(anon)], Options::new())
            .unwrap();
        txn.commit().unwrap();
        let world = h.world.clone();
        let wall = h.clock.unix_nanos();
        drop(h);
        let engine = tickstep_schedules::Schedules::open(
            path,
            ManualClock::starting_at_unix_nanos(wall),
            world,
            tickstep_schedules::testkit::TestRunner::new(),
            common::config(),
        )
        .unwrap();
        assert_eq!(engine.anonymous_references(), vec![anon]);
    }
}

on_both_stores! {
    fn a_clean_shutdown_saves_outcomes_reported_since_the_last_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        h.fault(h.last_run()); // reported, no tick after it
        let h = restart(h, path, 0.0);
        assert!(
            h.engine.interrupted().is_empty(),
            "the outcome was saved on drop"
        );
        let info = h.info(id);
        assert_eq!((info.fault_count, info.running_task), (1, None));
    }
}

on_both_stores! {
    fn values_at_the_deepest_allowed_nesting_survive_a_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let deep = (0..tickstep_schedules::MAX_VALUE_DEPTH).fold(Value::Int(7), |inner, i| {
            if i % 2 == 0 {
                Value::Map(vec![(Value::from("k"), inner)])
            } else {
                Value::List(vec![inner])
            }
        });
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(
                h.room,
                "tick",
                1.0,
                vec![deep.clone()],
                Options::new().state(deep.clone()),
            )
            .unwrap();
        txn.commit().unwrap();
        let h = restart(h, path, 0.0);
        let info = h.info(id);
        assert_eq!((info.args, info.state), (vec![deep.clone()], Some(deep)));
    }
}

on_both_stores! {
    fn a_fault_value_the_store_cannot_hold_is_kept_as_text_and_the_store_stays_readable(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, Options::new());
        h.after(1.0);
        let nan = Value::List(vec![Value::Float(f64::NAN)]);
        h.runner.finish(
            &h.engine,
            h.last_run(),
            Outcome::Fault {
                kind: FaultKind::Error,
                value: nan,
            },
        );
        h.tick();
        let h = restart(h, path, 0.0);
        let fault = h.info(id).last_fault.unwrap();
        assert_eq!(fault.value, Value::from("{NaN}"));
    }
}

on_both_stores! {
    fn an_in_flight_firing_of_a_non_persistent_schedule_is_unknown_after_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(1.0, Options::new().persist(false));
        h.after(1.0);
        let run = h.last_run();
        let h = restart(h, path, 1.0);
        assert!(h.engine.interrupted().is_empty());
        assert!(
            !h.engine.report(run, Outcome::Returned(Value::Int(0))),
            "its result is ignored"
        );
    }
}

on_both_stores! {
    fn elapsed_spans_a_restart_with_the_real_gap(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(10.0, Options::new());
        h.after(10.0);
        h.finish_all();
        let h = restart(h, path, 25.0); // down from +10 to +35
        h.tick(); // the driver ticks on open: skip drops +20 and +30
        h.after(5.0); // +40
        let elapsed = h.started()[0].1.elapsed.unwrap();
        assert!(approx(elapsed, 30.0), "{elapsed}");
    }
}
