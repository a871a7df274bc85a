//! Cadence, overlap, catch-up, jitter, adaptive, elapsed and state: one test per rule of
//! docs/schedules.md §4, §5 and §7, on virtual time.

#![allow(clippy::float_cmp)] // virtual time is exact: these values are equal, not close

mod common;

use common::{Host, approx, t0};
use tickstep_schedules::{Catchup, Options, Overlap, RetireReason, Value};

on_every_store! {
    fn recurring_deadlines_are_computed_from_the_previous_deadline_not_from_completion(store) {
        let h = Host::on(store);
        let id = h.every(60.0, Options::new());
        h.after(60.0);
        h.advance(17.0); // the first upkeep takes 17 s
        h.finish_all();
        h.after(43.0);
        let run = h.last_run();
        h.advance(59.0);
        h.fault(run); // the second one faults after 59 s
        h.after(1.0);
        assert_eq!(h.fired(), 3);
        for (i, expected) in [60.0, 120.0, 180.0].into_iter().enumerate() {
            assert!(approx(h.nominal(i), t0() + expected), "firing {i}");
        }
        assert_eq!(h.info(id).run_count, 3);
    }
}

on_every_store! {
    fn next_deadline_is_armed_as_soon_as_a_firing_starts(store) {
        let h = Host::on(store);
        let id = h.every(60.0, Options::new());
        h.after(60.0);
        let info = h.info(id);
        assert_eq!(info.running_task, Some(h.last_run()));
        assert!(approx(info.next_run, t0() + 120.0));
    }
}

on_every_store! {
    fn worked_example_skip_one_second_schedule_running_t_to_t_plus_2_5_fires_next_at_t_plus_3(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().overlap(Overlap::Skip));
        h.after(1.0); // t
        let first = h.last_run();
        h.after(1.0); // t+1 arrives mid-firing: dropped
        h.after(1.0); // t+2 arrives mid-firing: dropped
        h.advance(0.5);
        h.finish(first, Value::Int(0)); // firing ends at t+2.5
        h.tick();
        assert_eq!(h.fired(), 1, "nothing starts at t+2.5 under skip");
        assert!(approx(h.info(id).next_run, t0() + 4.0), "next at t+3");
        h.after(0.5);
        assert_eq!(h.fired(), 2);
        assert!(approx(h.nominal(1), t0() + 4.0));
        assert_eq!(h.info(id).overlap_count, 2);
    }
}

on_every_store! {
    fn worked_example_queue_starts_one_at_t_plus_2_5_counts_one_overlap_then_t_plus_3(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().overlap(Overlap::Queue));
        h.after(1.0); // t
        let first = h.last_run();
        h.after(1.0); // t+1 waits
        h.after(1.0); // t+2: the queue is full, counted
        h.advance(0.5);
        h.finish(first, Value::Int(0));
        h.tick(); // t+2.5: the queued firing starts
        assert_eq!(h.fired(), 2);
        assert!(
            approx(h.nominal(1), t0() + 2.0),
            "it serves the t+1 deadline"
        );
        assert_eq!(h.info(id).overlap_count, 1);
        h.advance(0.25);
        h.finish_all();
        h.after(0.25); // t+3
        assert_eq!(h.fired(), 3);
        assert!(approx(h.nominal(2), t0() + 4.0));
        assert_eq!(h.info(id).overlap_count, 1);
    }
}

on_every_store! {
    fn overlap_concurrent_starts_a_firing_per_deadline_and_running_task_is_the_oldest(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().overlap(Overlap::Concurrent));
        h.after(1.0);
        let oldest = h.last_run();
        h.after(1.0);
        h.after(1.0);
        assert_eq!(h.fired(), 3);
        let info = h.info(id);
        assert_eq!(info.running_task, Some(oldest));
        assert_eq!(info.overlap_count, 0);
    }
}

on_every_store! {
    fn queue_holds_at_most_one_deadline_and_counts_the_rest(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().overlap(Overlap::Queue));
        h.after(1.0);
        for _ in 0..5 {
            h.after(1.0);
        }
        assert_eq!(h.info(id).overlap_count, 4);
        h.finish_all();
        h.tick();
        assert_eq!(h.fired(), 2);
    }
}

on_every_store! {
    fn pass_elapsed_appends_real_seconds_since_the_previous_firing_and_zero_the_first_time(store) {
        let h = Host::on(store);
        h.every(10.0, Options::new());
        h.after(10.0);
        h.finish_all();
        h.after(10.0);
        h.finish_all();
        h.advance(25.0); // a stall: the scheduler gets there 25 s late (skip catch-up drops points)
        h.tick();
        h.after(5.0);
        let elapsed: Vec<f64> = h
            .started()
            .iter()
            .map(|(_, f)| f.elapsed.unwrap())
            .collect();
        assert_eq!(elapsed[0], 0.0);
        assert!(approx(elapsed[1], 10.0));
        assert!(
            approx(elapsed[2], 30.0),
            "the real gap, not the interval: {elapsed:?}"
        );
        assert_eq!(h.started()[0].1.call_args(), vec![Value::Float(0.0)]);
    }
}

on_every_store! {
    fn pass_elapsed_off_appends_nothing(store) {
        let h = Host::on(store);
        h.every(1.0, Options::new().pass_elapsed(false));
        h.after(1.0);
        assert_eq!(h.started()[0].1.elapsed, None);
        assert!(h.started()[0].1.call_args().is_empty());
    }
}

on_every_store! {
    fn state_is_appended_to_args_before_elapsed_on_every_firing(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_every(
            h.room,
            "tick",
            1.0,
            vec![Value::Int(1)],
            Options::new().state(Value::from("cursor")),
        )
        .unwrap();
        txn.commit().unwrap();
        h.after(1.0);
        h.finish_all();
        h.after(1.0);
        for (_, f) in h.started() {
            let args = f.call_args();
            assert_eq!(args[..2], [Value::Int(1), Value::from("cursor")]);
            assert!(matches!(args[2], Value::Float(_)));
        }
    }
}

on_every_store! {
    fn sub_tick_interval_is_clamped_to_the_tick_and_reported_interval_clamped(store) {
        let h = Host::on(store);
        let id = h.every(0.001, Options::new());
        let info = h.info(id);
        assert!(info.interval_clamped);
        assert!(approx(info.interval, 0.01));
        for _ in 0..5 {
            h.after(0.01);
            h.finish_all();
        }
        assert_eq!(h.fired(), 5, "once per 10 ms tick");
        assert!(!h.info(h.every(0.5, Options::new())).interval_clamped);
    }
}

on_every_store! {
    fn the_tick_that_clamps_intervals_is_configurable(store) {
        let mut config = common::config();
        config.tick = std::time::Duration::from_millis(50);
        let h = Host::on_with_config(store, config);
        let id = h.every(0.02, Options::new());
        assert!(approx(h.info(id).interval, 0.05));
    }
}

on_every_store! {
    fn zero_interval_is_clamped_like_any_sub_tick_interval(store) {
        let h = Host::on(store);
        assert!(h.info(h.every(0.0, Options::new())).interval_clamped);
    }
}

on_every_store! {
    fn catchup_skip_drops_missed_points_and_next_deadline_is_the_first_point_after_now(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().catchup(Catchup::Skip));
        h.advance(4.5); // points at +1, +2, +3, +4 all passed with nothing running
        h.tick();
        assert_eq!(h.fired(), 0);
        let info = h.info(id);
        assert_eq!(info.missed_count, 4);
        assert!(approx(info.next_run, t0() + 5.0));
        h.after(0.5);
        assert_eq!(h.fired(), 1);
    }
}

on_every_store! {
    fn catchup_once_fires_one_late_firing_for_all_missed_points_then_the_cadence_resumes(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().catchup(Catchup::Once));
        h.advance(4.5);
        h.tick();
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), t0() + 4.0), "serves the latest point");
        assert_eq!(h.info(id).missed_count, 3);
        h.finish_all();
        h.after(0.5);
        assert_eq!(h.fired(), 2);
        assert!(approx(h.nominal(1), t0() + 5.0));
    }
}

on_every_store! {
    fn catchup_all_fires_each_missed_point_in_order(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().catchup(Catchup::All));
        h.advance(4.5);
        for _ in 0..4 {
            h.tick();
            h.finish_all();
        }
        let nominals: Vec<f64> = (0..4).map(|i| h.nominal(i) - t0()).collect();
        assert!(
            nominals
                .iter()
                .zip([1.0, 2.0, 3.0, 4.0])
                .all(|(a, b)| approx(*a, b)),
            "{nominals:?}"
        );
        assert_eq!(h.info(id).missed_count, 0);
        h.after(0.5);
        assert!(approx(h.nominal(4), t0() + 5.0));
    }
}

on_every_store! {
    fn catchup_all_fires_at_most_1000_missed_points_and_counts_the_rest_missed(store) {
        let h = Host::on(store);
        let id = h.every(0.01, Options::new().catchup(Catchup::All));
        h.advance(15.005); // 1,500 points passed
        for _ in 0..1000 {
            h.tick();
            h.finish_all();
        }
        assert_eq!(h.fired(), 1000);
        assert_eq!(h.info(id).missed_count, 500);
    }
}

on_every_store! {
    fn a_deadline_fired_less_than_one_interval_late_is_not_a_missed_point(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        h.after(1.7);
        assert_eq!(h.fired(), 1);
        assert_eq!(h.info(id).missed_count, 0);
    }
}

on_every_store! {
    fn deadlines_that_pass_while_a_firing_runs_are_governed_by_overlap_not_catchup(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().catchup(Catchup::All));
        h.after(1.0);
        h.after(5.0); // five points arrive mid-firing, in one late tick
        let info = h.info(id);
        assert_eq!(info.missed_count, 0);
        assert_eq!(info.overlap_count, 5);
    }
}

on_every_store! {
    fn a_one_shot_with_a_past_deadline_always_fires_once(store) {
        let h = Host::on(store);
        let id = h.at(-3600.0, Options::new().catchup(Catchup::Skip));
        h.tick();
        assert_eq!(h.fired(), 1);
        h.finish_all();
        h.after(10.0);
        assert_eq!(h.fired(), 1);
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::Completed));
    }
}

on_every_store! {
    fn jitter_offsets_each_deadline_uniformly_within_plus_minus_j_never_earlier_than_one_tick(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new().jitter_seconds(3.0));
        let mut offsets = Vec::new();
        for k in 1..=40 {
            let due = h.info(id).next_run;
            let point = t0() + 10.0 * f64::from(k);
            offsets.push(due - point);
            tickstep_kernel::clock::Clock::sleep_until(&h.clock, h.engine.next_deadline().unwrap());
            h.tick();
            h.finish_all();
        }
        assert!(offsets.iter().all(|o| o.abs() <= 3.0 + 1e-6), "{offsets:?}");
        assert!(offsets.iter().any(|&o| o < -0.5) && offsets.iter().any(|&o| o > 0.5));
        assert_eq!(h.fired(), 40);
    }
}

on_every_store! {
    fn jitter_never_puts_a_deadline_earlier_than_one_tick_from_now(store) {
        let h = Host::on(store);
        // 0.02 s interval, 5 s jitter: most draws land in the past and must be lifted.
        let id = h.every(0.02, Options::new().jitter_seconds(5.0));
        for _ in 0..20 {
            let now = h.now();
            h.tick();
            h.finish_all();
            assert!(h.info(id).next_run >= now + 0.01 - 1e-9);
            h.advance(0.01);
        }
    }
}

#[test]
fn jitter_is_reproducible_with_a_seeded_rng() {
    let a = Host::new();
    let b = Host::new();
    let ia = a.every(60.0, Options::new().jitter_seconds(30.0));
    let ib = b.every(60.0, Options::new().jitter_seconds(30.0));
    assert_eq!(a.info(ia).next_run, b.info(ib).next_run);
}

on_every_store! {
    fn adaptive_one_shot_returning_seconds_is_a_self_rescheduling_chain(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.advance(1.0);
        h.finish(h.last_run(), Value::Int(30)); // customers present: check again in 30 s
        assert!(approx(h.info(id).next_run, t0() + 31.0));
        h.after(30.0);
        h.finish(h.last_run(), Value::Float(0.5));
        h.after(0.5);
        assert_eq!(h.fired(), 3);
        h.finish(h.last_run(), Value::Int(0)); // doors locked: done
        let info = h.info(id);
        assert!(info.retired);
        assert_eq!(info.retire_reason, Some(RetireReason::Completed));
    }
}

on_every_store! {
    fn adaptive_one_shot_returning_a_non_number_retires_completed(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::from("30"));
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::Completed));
    }
}

on_every_store! {
    fn adaptive_is_off_by_default_for_every_and_the_return_value_is_ignored(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        h.finish(h.last_run(), Value::Int(1));
        assert!(approx(h.info(id).next_run, t0() + 20.0));
    }
}

on_every_store! {
    fn adaptive_every_positive_return_overrides_only_the_next_interval(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new().adaptive(true));
        h.after(10.0);
        h.finish(h.last_run(), Value::Int(3)); // next in 3 s
        assert!(approx(h.info(id).next_run, t0() + 13.0));
        h.after(3.0);
        h.finish(h.last_run(), Value::Int(0)); // keeps the cadence
        assert!(approx(h.info(id).next_run, t0() + 23.0));
    }
}

on_every_store! {
    fn adaptive_off_for_at_retires_after_one_firing_whatever_it_returns(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new().adaptive(false));
        h.tick();
        h.finish(h.last_run(), Value::Int(30));
        assert_eq!(h.info(id).retire_reason, Some(RetireReason::Completed));
    }
}

on_every_store! {
    fn cadence_running_off_the_end_of_time_retires_deadline_out_of_range_counted_as_a_fault(store) {
        let h = Host::on(store);
        h.clock.set_unix_nanos(u64::MAX - 5_000_000_000);
        let id = h.every(2.0, Options::new());
        h.after(2.0); // fires at MAX-3 s, next MAX-1 s
        h.finish_all();
        h.after(2.0); // fires at MAX-1 s; the next would pass the end
        let info = h.info(id);
        assert_eq!(info.retire_reason, Some(RetireReason::DeadlineOutOfRange));
        assert_eq!(info.fault_count, 1);
        assert_eq!(
            info.last_fault.unwrap().kind,
            tickstep_schedules::FaultKind::DeadlineOutOfRange
        );
    }
}

on_every_store! {
    fn the_last_representable_cadence_point_fires_then_the_schedule_retires_deadline_out_of_range(store) {
        // The schedule's last representable point is MAX - 100 s: the next would be MAX + 20 s.
        // (The clock stays a minute short of the end so the retired entry's retention can be seen.)
        const LAST: u64 = u64::MAX - 100_000_000_000;
        let h = Host::on(store);
        h.clock.set_unix_nanos(LAST - 120_000_000_000);
        let id = h.every(120.0, Options::new());
        h.after(120.0); // now = LAST: the point is due; the one after it is not representable
        assert_eq!(h.fired(), 1, "the current, valid point fires");
        assert_eq!(h.started()[0].1.nominal_unix_nanos, LAST);
        let info = h.info(id);
        assert_eq!(info.run_count, 1);
        assert_eq!(info.retire_reason, Some(RetireReason::DeadlineOutOfRange));
        assert_eq!(info.fault_count, 1);
        assert!(!h.valid(id));
        h.tick();
        assert_eq!(h.fired(), 1, "retired: nothing fires again");
    }
}

on_every_store! {
    fn a_catch_up_backlog_reaching_the_end_of_time_fires_its_last_point_then_retires(store) {
        const END: u64 = u64::MAX - 50_000_000_000;
        let h = Host::on(store);
        h.clock.set_unix_nanos(END - 300_000_000_000);
        let id = h.every(100.0, Options::new().catchup(Catchup::All));
        h.after(300.0); // points at END-200 s, END-100 s and END have arrived; END+100 s is past MAX
        for _ in 0..3 {
            h.finish_all();
            h.tick();
        }
        let nominals: Vec<u64> = h
            .started()
            .iter()
            .map(|(_, f)| END - f.nominal_unix_nanos)
            .collect();
        assert_eq!(nominals, vec![200_000_000_000, 100_000_000_000, 0]);
        let info = h.info(id);
        assert_eq!(info.retire_reason, Some(RetireReason::DeadlineOutOfRange));
        assert_eq!(info.run_count, 3);
    }
}

on_every_store! {
    fn adaptive_delay_past_the_end_of_time_retires_deadline_out_of_range(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Float(1e12));
        let info = h.info(id);
        assert_eq!(info.retire_reason, Some(RetireReason::DeadlineOutOfRange));
        assert_eq!(info.fault_count, 1);
    }
}

on_every_store! {
    fn schedule_at_later_than_18446744073_is_invarg(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let err = txn
            .schedule_at(h.room, "tick", 18_446_744_074.0, vec![], Options::new())
            .unwrap_err();
        assert_eq!(err.code(), "E_INVARG");
        assert!(err.to_string().contains("18446744074"), "{err}");
        assert!(
            txn.schedule_at(h.room, "tick", 18_446_744_073.0, vec![], Options::new())
                .is_ok()
        );
    }
}

on_every_store! {
    fn schedule_every_with_an_interval_that_reaches_past_the_end_is_invarg(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let err = txn
            .schedule_every(h.room, "tick", 18_446_744_000.0, vec![], Options::new())
            .unwrap_err();
        assert_eq!(err.code(), "E_INVARG");
    }
}

on_every_store! {
    fn a_firing_carries_target_verb_args_player_authority_and_nominal_deadline(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(
                h.room,
                "tick",
                2.0,
                vec![Value::from("a")],
                Options::new().player(h.prog),
            )
            .unwrap();
        txn.commit().unwrap();
        h.after(2.0);
        let f = &h.started()[0].1;
        assert_eq!((f.schedule, f.target, &*f.verb), (id, h.room, "tick"));
        assert_eq!(&*f.args, [Value::from("a")]);
        assert_eq!((f.player, f.authority), (h.prog, h.prog));
        assert!(approx(f.nominal_unix_nanos as f64 / 1e9, t0() + 2.0));
    }
}

on_every_store! {
    fn player_defaults_to_the_target(store) {
        let h = Host::on(store);
        h.every(1.0, Options::new());
        h.after(1.0);
        assert_eq!(h.started()[0].1.player, h.room);
    }
}

on_every_store! {
    fn next_deadline_is_the_earliest_armed_deadline_for_a_driver_to_sleep_until(store) {
        use tickstep_kernel::clock::Clock;
        let h = Host::on(store);
        assert_eq!(h.engine.next_deadline(), None);
        h.every(5.0, Options::new());
        h.every(2.0, Options::new());
        let at = h.engine.next_deadline().unwrap();
        assert_eq!(at - h.clock.now(), std::time::Duration::from_secs(2));
        h.clock.sleep_until(at);
        assert_eq!(h.tick().started, 1);
    }
}

on_every_store! {
    fn ten_thousand_due_schedules_fire_over_bounded_ticks_without_stalling_one(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        for _ in 0..10_000 {
            txn.schedule_every(h.room, "tick", 1.0, vec![], Options::new())
                .unwrap();
        }
        txn.commit().unwrap();
        h.advance(1.0);
        let first = h.tick();
        assert_eq!(
            first.started, 1024,
            "bounded by Config::max_firings_per_tick"
        );
        assert!(first.more_due);
        let mut ticks = 1;
        while h.tick().more_due {
            ticks += 1;
        }
        assert_eq!(h.fired(), 10_000);
        assert_eq!(ticks + 1, 10);
    }
}

on_every_store! {
    fn an_idle_schedule_costs_no_work_between_firings(store) {
        let h = Host::on(store);
        let id = h.every(3600.0, Options::new());
        for _ in 0..3599 {
            let report = h.after(1.0);
            assert_eq!(
                (report.started, report.not_started, report.more_due),
                (0, 0, false)
            );
        }
        assert_eq!(h.fired(), 0);
        assert_eq!(h.info(id).run_count, 0);
        h.after(1.0);
        assert_eq!(h.fired(), 1);
    }
}

on_every_store! {
    fn jitter_wider_than_the_interval_never_counts_as_missed_points(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().jitter_seconds(3.0));
        for _ in 0..600 {
            h.after(0.1);
            h.finish_all();
        }
        let info = h.info(id);
        assert_eq!(info.missed_count, 0);
        // 60 s of cadence: every point fires once, give or take the ones jitter holds past the end.
        assert!((55..=60).contains(&h.fired()), "{}", h.fired());
    }
}
