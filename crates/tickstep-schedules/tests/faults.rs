//! Faults, `max_faults`, retirement and its 60-second retention.

mod common;

use common::Host;
use tickstep_schedules::{FaultKind, Options, Outcome, Overlap, RetireReason, Value};

on_every_store! {
    fn a_fault_in_one_firing_leaves_the_other_schedules_alone(store) {
        let h = Host::on(store);
        let a = h.every(1.0, Options::new());
        let b = h.every(1.0, Options::new());
        h.after(1.0);
        let runs: Vec<_> = h.started().iter().map(|(r, _)| *r).collect();
        h.fault(runs[0]);
        h.finish(runs[1], Value::Int(0));
        assert_eq!(h.info(a).fault_count + h.info(b).fault_count, 1);
        h.after(1.0);
        assert_eq!(h.fired(), 4);
    }
}

on_every_store! {
    fn max_faults_consecutive_faults_retire_the_schedule_with_max_faults(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().max_faults(3));
        for _ in 0..3 {
            h.after(1.0);
            h.fault(h.last_run());
        }
        let info = h.info(id);
        assert!(info.retired);
        assert_eq!(info.retire_reason, Some(RetireReason::MaxFaults));
        assert_eq!(info.consecutive_faults, 3);
        h.after(1.0);
        assert_eq!(h.fired(), 3, "retired: never fires again");
    }
}

on_every_store! {
    fn a_successful_firing_resets_the_consecutive_count_and_fault_count_is_lifetime(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().max_faults(2));
        for outcome_is_fault in [true, false, true, false, true] {
            h.after(1.0);
            if outcome_is_fault {
                h.fault(h.last_run());
            } else {
                h.finish(h.last_run(), Value::Int(0));
            }
        }
        let info = h.info(id);
        assert!(!info.retired);
        assert_eq!(info.fault_count, 3);
        assert_eq!(info.consecutive_faults, 1);
        assert_eq!(
            info.last_fault.unwrap().value,
            Value::from("E_DIV"),
            "last_fault keeps the value"
        );
    }
}

on_every_store! {
    fn max_faults_zero_means_unlimited(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().max_faults(0));
        for _ in 0..120 {
            h.after(1.0);
            h.fault(h.last_run());
        }
        assert!(!h.info(id).retired);
        assert_eq!(h.info(id).max_faults, 0);
    }
}

on_every_store! {
    fn max_faults_defaults_to_50(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        assert_eq!(h.info(id).max_faults, 50);
        for _ in 0..49 {
            h.after(1.0);
            h.fault(h.last_run());
        }
        assert!(!h.info(id).retired);
        h.after(1.0);
        h.fault(h.last_run());
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::MaxFaults));
    }
}

on_every_store! {
    fn a_killed_firing_counts_as_a_fault(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        h.after(1.0);
        h.runner.finish(&h.engine, h.last_run(), Outcome::Killed);
        let info = h.info(id);
        assert_eq!(info.fault_count, 1);
        assert_eq!(info.last_fault.unwrap().kind, FaultKind::Killed);
    }
}

on_every_store! {
    fn tick_and_time_limits_count_as_faults(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        for kind in [FaultKind::TickLimit, FaultKind::TimeLimit] {
            h.after(1.0);
            h.runner.finish(
                &h.engine,
                h.last_run(),
                Outcome::Fault {
                    kind,
                    value: Value::Int(0),
                },
            );
        }
        assert_eq!(h.info(id).consecutive_faults, 2);
    }
}

on_every_store! {
    fn a_runner_refusal_is_a_failure_to_start_and_counts_as_a_fault(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().max_faults(2));
        h.runner.set_refusing(Some("task queue full"));
        let report = h.after(1.0);
        assert_eq!((report.started, report.not_started), (0, 1));
        let info = h.info(id);
        assert_eq!(info.fault_count, 1);
        assert_eq!(info.run_count, 1);
        let fault = info.last_fault.unwrap();
        assert_eq!(fault.kind, FaultKind::StartFailed);
        assert_eq!(fault.value, Value::from("task queue full"));
        h.after(1.0);
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::MaxFaults));
    }
}

on_every_store! {
    fn a_verb_no_longer_callable_at_firing_time_is_a_failure_to_start(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        h.world.remove_verb(h.room, "tick");
        h.after(1.0);
        assert_eq!(h.fired(), 0, "the runner is never asked");
        let info = h.info(id);
        assert_eq!(info.last_fault.unwrap().kind, FaultKind::StartFailed);
        assert!(
            !info.retired,
            "a recurring schedule keeps trying until max_faults"
        );
    }
}

on_every_store! {
    fn recycling_the_target_does_not_cancel_but_the_next_firing_retires_invalid_target(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        h.world.recycle(h.room);
        assert!(h.valid(id), "recycling alone cancels nothing");
        h.after(1.0);
        let info = h.info(id);
        assert_eq!(info.retire_reason, Some(RetireReason::InvalidTarget));
        assert_eq!(info.fault_count, 0, "invalid_target is not a fault");
        assert_eq!(h.fired(), 0);
    }
}

on_every_store! {
    fn a_conflict_retry_is_not_a_fault_the_host_reports_one_outcome_per_firing(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        h.after(1.0);
        let run = h.last_run();
        assert!(h.finish(run, Value::Int(0)));
        assert!(
            !h.engine.report(run, Outcome::Killed),
            "a second outcome is ignored"
        );
        let info = h.info(id);
        assert_eq!((info.run_count, info.fault_count), (1, 0));
    }
}

on_every_store! {
    fn a_faulting_one_shot_retires_completed_with_its_last_fault(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.fault(h.last_run());
        let info = h.info(id);
        assert_eq!(info.retire_reason, Some(RetireReason::Completed));
        assert_eq!(info.fault_count, 1);
    }
}

on_every_store! {
    fn a_retired_schedule_keeps_its_entry_for_60_seconds_then_info_raises_invarg(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        h.advance(59.9);
        h.tick();
        assert!(h.info(id).retired);
        h.advance(0.1);
        let err = h.engine.begin(h.wiz).schedule_info(id).unwrap_err();
        assert_eq!(
            err.code(),
            "E_INVARG",
            "lookups see the drop even before a tick sweeps"
        );
        h.tick();
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
    }
}

on_every_store! {
    fn a_retired_schedule_is_not_valid_and_absent_from_listings_while_retained(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        let txn = h.engine.begin(h.prog);
        assert!(!txn.schedule_valid(id));
        assert!(txn.schedules(None).unwrap().is_empty());
        assert!(txn.schedules_for(h.room).is_empty());
        assert!(txn.schedule_info(id).unwrap().retired);
        assert_eq!(h.engine.live_count(), 0);
    }
}

on_every_store! {
    fn retirement_reports_run_counters_and_last_fault(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().max_faults(1));
        h.after(1.0);
        h.fault(h.last_run());
        let info = h.info(id);
        assert_eq!(info.run_count, 1);
        assert_eq!(info.retire_reason, Some(RetireReason::MaxFaults));
        let map = info.to_value();
        assert_eq!(map.get("retire_reason"), Some(&Value::from("max_faults")));
        assert_eq!(
            map.get("last_fault"),
            Some(&Value::List(vec![
                Value::from("error"),
                Value::from("E_DIV")
            ]))
        );
    }
}

on_every_store! {
    fn stopping_a_retired_schedule_returns_false_and_discards_its_entry_at_commit(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        let mut txn = h.engine.begin(h.prog);
        assert!(!txn.schedule_stop(id).unwrap());
        assert!(h.info(id).retired, "not before commit");
        txn.commit().unwrap();
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
    }
}

on_every_store! {
    fn stopping_someone_elses_retired_schedule_returns_false_and_discards_nothing(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        let mut txn = h.engine.begin(h.other);
        assert!(
            !txn.schedule_stop(id).unwrap(),
            "not live: no E_PERM either"
        );
        txn.commit().unwrap();
        assert!(h.info(id).retired);
    }
}

on_every_store! {
    fn schedule_stop_does_not_retire_it_removes_the_entry_outright(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        let mut txn = h.engine.begin(h.prog);
        assert!(txn.schedule_stop(id).unwrap());
        txn.commit().unwrap();
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
        h.after(5.0);
        assert_eq!(h.fired(), 0);
    }
}

on_every_store! {
    fn the_result_of_a_firing_whose_schedule_was_stopped_is_ignored(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        h.after(1.0);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        txn.commit().unwrap();
        assert!(!h.finish(h.last_run(), Value::Int(0)));
    }
}

on_every_store! {
    fn anonymous_objects_in_target_args_and_state_are_gc_roots_until_the_entry_is_dropped(store) {
        let h = Host::on(store);
        let anon_target = h.world.add_anonymous(h.prog);
        h.world.add_verb(anon_target, "tick");
        let (a1, a2) = (h.world.add_anonymous(h.prog), h.world.add_anonymous(h.prog));
        let plain = h.world.add_object(h.prog);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_at(
                anon_target,
                "tick",
                h.now(),
                vec![Value::List(vec![Value::Obj(a1), Value::Obj(plain)])],
                Options::new().state(Value::Map(vec![(Value::from("k"), Value::Obj(a2))])),
            )
            .unwrap();
        assert!(h.engine.anonymous_references().is_empty(), "uncommitted");
        txn.commit().unwrap();
        let mut expected = vec![anon_target, a1, a2];
        expected.sort_unstable();
        assert_eq!(h.engine.anonymous_references(), expected);
        h.tick();
        h.finish(h.last_run(), Value::Int(0)); // retired: still a root while retained
        assert_eq!(h.engine.anonymous_references(), expected);
        h.after(60.0);
        assert!(h.engine.anonymous_references().is_empty());
        let _ = id;
    }
}

on_every_store! {
    fn a_wizard_stopping_someone_elses_retired_schedule_discards_its_entry_too(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        let mut txn = h.engine.begin(h.wiz);
        assert!(!txn.schedule_stop(id).unwrap());
        txn.commit().unwrap();
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
    }
}

on_every_store! {
    /// docs/schedules.md §7.9: run ids are the engine's and name one run each. A retired
    /// schedule's run that ended, and a stopped schedule's, leave their ids behind; the runs
    /// after them get new ones, and dropping the earlier schedules touches none of them.
    fn run_ids_are_the_engines_and_never_name_two_runs(store) {
        let h = Host::on(store);
        let concurrent = Options::new().overlap(Overlap::Concurrent).max_faults(1);
        let retiring = h.every(1.0, concurrent);
        h.after(1.0);
        let first = h.last_run();
        h.after(1.0);
        let second = h.last_run();
        assert!(h.fault(first), "max_faults 1: it retires, `second` goes on");
        assert_eq!(h.info(retiring).running_task, Some(second));
        assert!(!h.finish(second, Value::Int(0)), "ignored: its schedule retired");
        assert_eq!(h.info(retiring).running_task, None, "the run is over");
        let stopped = h.every(1.0, Options::new());
        h.after(1.0);
        let mut txn = h.engine.begin(h.prog);
        assert!(txn.schedule_stop(stopped).unwrap());
        txn.commit().unwrap();

        let other = h.every(1.0, Options::new());
        h.after(1.0);
        let (run, firing) = h.started().last().cloned().unwrap();
        assert_eq!(firing.schedule, other);
        assert_eq!(run, firing.run, "the runner starts the run the engine named");
        let ids: Vec<_> = h.started().iter().map(|(run, _)| run.0).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "every run a new id, counting up: {ids:?}"
        );
        h.after(60.0);
        assert!(
            h.engine.begin(h.wiz).schedule_info(retiring).is_err(),
            "the retired entry has expired"
        );
        assert!(h.fault(run), "the new run is still awaited");
        assert_eq!(h.info(other).fault_count, 1);
    }
}
