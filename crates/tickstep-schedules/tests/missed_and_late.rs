//! Why points were missed (docs/schedules.md §9.15) and how late firings started
//! (docs/schedules.md §9.16). Each cause of a dropped point — catch-up after downtime, the
//! catch-up window, overlap (a cadence point or a trigger), a pause, a DST gap — is counted
//! under its reason on the schedule; the counts add up to `missed_count` and `overlap_count`
//! and to the metric's; they, the last miss and the lateness percentiles survive a restart and
//! read the same through the `Inspector`, on both stores, on the manual clock.

#![allow(clippy::float_cmp)] // virtual time is exact where these compare
mod common;

use std::time::Duration;

use common::Host;
use common::counters::Counters;
use common::stores::{Kind, Store};
use common::{approx, t0};
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::{
    Catchup, DstPolicy, FoldPolicy, GapPolicy, Inspector, Lateness, MissedPoints, MissedReason,
    Options, Overlap, ScheduleId, ScheduleInfo, Value,
};

const SEC: u64 = 1_000_000_000;

/// A host on `store` whose engine counts its metrics into `counters`.
fn counted(store: &Store, counters: &Counters) -> Host {
    metrics::with_local_recorder(counters, || Host::on(store))
}

/// The counts by reason add up to the schedule's totals (docs/schedules.md §9.15).
fn adds_up(info: &ScheduleInfo) {
    let m = info.missed;
    assert_eq!(
        m.catchup + m.catchup_window + m.paused,
        info.missed_count,
        "{m:?}"
    );
    assert_eq!(m.overlap, info.overlap_count, "{m:?}");
    assert_eq!(m.paused, info.paused_missed, "{m:?}");
}

/// The metric counted, for every reason, what the schedules counted between them.
fn metric_agrees(counters: &Counters, h: &Host, ids: &[ScheduleId]) {
    for reason in MissedReason::ALL {
        let on_schedules: u64 = ids.iter().map(|&id| h.info(id).missed.count(reason)).sum();
        let metric = counters.get(
            "tickstep_schedules_missed_total",
            &format!("reason={reason}"),
        );
        assert_eq!(metric, on_schedules, "{reason}");
        // The engine's own tally, which a dashboard charts, agrees (docs/schedules.md §9.18).
        assert_eq!(h.engine.tally().missed(reason), on_schedules, "{reason}");
    }
    let tally = h.engine.tally();
    let started = counters.get("tickstep_schedules_starts_total", "result=started");
    assert_eq!(
        (tally.started, tally.lateness.samples()),
        (started, started)
    );
}

/// Closes `h` and checks that `id`'s counts and last miss are what an engine reopened on the
/// store and the `Inspector` read back.
fn survives_a_restart(store: &Store, h: Host, id: ScheduleId, expected: MissedPoints) {
    h.engine.flush().unwrap();
    drop(h);
    let stored = Inspector::open(store.path())
        .unwrap()
        .get(id)
        .unwrap()
        .unwrap();
    assert_eq!(stored.missed, expected, "the inspector reads them");
    let h = Host::on(store);
    assert_eq!(
        h.info(id).missed,
        expected,
        "an engine reopened on the store"
    );
    adds_up(&h.info(id));
}

on_both_stores! {
    fn points_passed_during_downtime_are_counted_catchup(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new().catchup(Catchup::Skip));
        h.engine.flush().unwrap();
        drop(h);
        // Down from t0 to t0 + 10.5 s: points +1 .. +10 passed; `skip` drops them all at open.
        let counters = Counters::default();
        let reopened_at = ManualClock::DEFAULT_UNIX_NANOS + 10 * SEC + SEC / 2;
        let h = metrics::with_local_recorder(&counters, || Host::on_at(store, reopened_at));
        let info = h.info(id);
        assert_eq!(info.missed.catchup, 10);
        assert_eq!(info.missed.last, Some((reopened_at as f64 / 1e9, MissedReason::Catchup)));
        adds_up(&info);
        metric_agrees(&counters, &h, &[id]);
        survives_a_restart(store, h, id, info.missed);
    }
}

on_both_stores! {
    fn points_older_than_the_window_are_counted_catchup_window(store) {
        let counters = Counters::default();
        let h = counted(store, &counters);
        let window = Options::new()
            .catchup(Catchup::All)
            .catchup_window(Duration::from_secs_f64(2.5));
        let id = h.every(1.0, window);
        // A stall to +10.2: +1 .. +7 are older than the window, +8 .. +10 are caught up.
        h.after(10.2);
        for _ in 0..5 {
            h.finish_all();
            h.after(0.1);
        }
        assert_eq!(h.points_started(id), [8, 9, 10]);
        let info = h.info(id);
        assert_eq!(info.missed.catchup_window, 7);
        let (at, reason) = info.missed.last.unwrap();
        assert!(approx(at, t0() + 10.2) && reason == MissedReason::CatchupWindow);
        adds_up(&info);
        metric_agrees(&counters, &h, &[id]);
        survives_a_restart(store, h, id, info.missed);
    }
}

on_both_stores! {
    fn points_and_triggers_arriving_mid_firing_are_counted_overlap(store) {
        let counters = Counters::default();
        let h = counted(store, &counters);
        let skip = h.every(1.0, Options::new().overlap(Overlap::Skip));
        let queue = h.every(1.0, Options::new().overlap(Overlap::Queue));
        h.after(1.0); // both start +1 and keep running
        h.after(3.0); // +2 .. +4 arrive mid-firing
        assert_eq!(h.info(skip).missed.overlap, 3, "skip drops all three");
        assert_eq!(h.info(queue).missed.overlap, 2, "queue keeps one waiting");
        // A trigger arriving mid-firing is dropped by the same rule (docs/schedules.md §4.4).
        assert!(h.engine.trigger_now(h.prog, skip).unwrap());
        h.after(0.1);
        let info = h.info(skip);
        assert_eq!(info.missed.overlap, 4);
        assert_eq!(info.missed.last.map(|(_, r)| r), Some(MissedReason::Overlap));
        adds_up(&info);
        adds_up(&h.info(queue));
        metric_agrees(&counters, &h, &[skip, queue]);
        survives_a_restart(store, h, skip, info.missed);
    }
}

on_both_stores! {
    fn points_that_passed_while_paused_are_counted_paused_whatever_drops_them(store) {
        let counters = Counters::default();
        let h = counted(store, &counters);
        let skip = h.every(1.0, Options::new().catchup(Catchup::Skip));
        let window = Options::new()
            .catchup(Catchup::All)
            .catchup_window(Duration::from_secs_f64(2.5));
        let windowed = h.every(1.0, window);
        for id in [skip, windowed] {
            assert!(h.engine.pause(h.prog, id, "deploy").unwrap());
        }
        h.advance(5.5);
        for id in [skip, windowed] {
            assert!(h.engine.resume(h.prog, id).unwrap());
        }
        // +1 .. +5 passed while paused: `skip` drops all five; the window drops +1 and +2.
        assert_eq!(h.info(skip).missed.paused, 5);
        assert_eq!(h.info(windowed).missed.paused, 2);
        assert_eq!(h.info(windowed).missed.catchup_window, 0, "the pause is why");
        let info = h.info(skip);
        assert_eq!(info.missed.last.map(|(_, r)| r), Some(MissedReason::Paused));
        adds_up(&info);
        adds_up(&h.info(windowed));
        metric_agrees(&counters, &h, &[skip, windowed]);
        survives_a_restart(store, h, skip, info.missed);
    }
}

// Europe/London, 2026-03-29: 01:00-02:00 does not exist (GMT to BST at 01:00 UTC).
const MAR_28_0000_GMT: u64 = 1_774_656_000;

on_both_stores! {
    fn a_wall_time_in_a_dst_gap_is_counted_dst_gap_and_not_in_missed_count(store) {
        let counters = Counters::default();
        let h = metrics::with_local_recorder(&counters, || Host::on_at(store, MAR_28_0000_GMT * SEC));
        let skip_gap = Options::new().dst_policy(DstPolicy {
            gap: GapPolicy::Skip,
            fold: FoldPolicy::First,
        });
        let id = h.cron("30 1 * * *", "Europe/London", skip_gap);
        for _ in 0..(3 * 24) {
            h.after(3600.0);
            h.finish_all();
        }
        let info = h.info(id);
        assert_eq!(info.missed.dst_gap, 1, "one gap, once");
        assert_eq!(info.missed_count, 0);
        assert_eq!(info.missed.total(), 1);
        adds_up(&info);
        metric_agrees(&counters, &h, &[id]);
        survives_a_restart(store, h, id, info.missed);
    }
}

on_both_stores! {
    fn each_firings_lateness_is_in_its_record_and_the_percentiles_survive_a_restart(store) {
        let h = Host::on(store);
        let a = h.every(1.0, Options::new());
        let b = h.every(1.0, Options::new());
        // Point k is started k × 10 ms late, k = 1 .. 25; the store keeps the last 20.
        for _ in 1..=25 {
            h.clock.advance(Duration::from_millis(1010));
            h.tick();
            h.finish_all();
        }
        let info = h.info(a);
        assert_eq!(info.history.len(), 20);
        assert!(approx(info.history[0].lateness(), 0.25), "newest first");
        let record = info.history[0].to_value();
        let Some(Value::Float(late)) = record.get("lateness") else {
            panic!("{record:?}")
        };
        assert_eq!(*late, info.history[0].lateness());
        let lateness = info.lateness();
        assert_eq!(lateness.samples, 20);
        assert!(approx(lateness.p50, 0.15), "{lateness:?}");
        assert!(approx(lateness.p99, 0.25), "{lateness:?}");
        let map = info.to_value();
        assert_eq!(map.get("lateness_samples"), Some(&Value::Int(20)));
        assert_eq!(map.get("lateness_p99"), Some(&Value::Float(lateness.p99)));
        h.engine.flush().unwrap();
        drop(h);

        let inspector = Inspector::open(store.path()).unwrap();
        let kept = inspector.history(a).unwrap();
        assert_eq!(Lateness::of(&kept), lateness, "the inspector reads the same");
        let overall = inspector.lateness().unwrap();
        assert_eq!(overall.samples, 40, "both schedules' kept firings");
        assert!(approx(overall.p50, 0.15) && approx(overall.p99, 0.25), "{overall:?}");
        let h = Host::on(store);
        assert_eq!(h.info(a).lateness(), lateness, "after a restart");
        assert_eq!(h.info(b).lateness().samples, 20);
    }
}

on_both_stores! {
    fn a_store_from_before_reasons_is_migrated_keeping_paused_and_the_rest_from_zero(store) {
        let h = Host::on(store);
        let id = h.every(60.0, Options::new());
        h.engine.flush().unwrap();
        drop(h);
        // What a build before reasons left: `ops` with `paused_missed` alone, points missed
        // before it, and the version not recorded (docs/schedules.md §11.48).
        let version = match store.kind() {
            Kind::Postgres => 14,
            _ => 12,
        };
        store.execute(&format!(
            "UPDATE schedules SET ops = '{{\"paused_missed\":5}}', missed_count = 7; \
             DELETE FROM schema_migrations WHERE version >= {version}"
        ));
        let kept = MissedPoints {
            paused: 5,
            ..MissedPoints::default()
        };
        let old = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
        assert_eq!(old.missed, kept, "the inspector reads it as it is");
        let h = Host::on(store);
        let info = h.info(id);
        assert_eq!(info.missed, kept);
        assert_eq!(info.missed_count, 7, "older points stay in the total, in no reason");
        let recorded = format!("SELECT COUNT(*) FROM schema_migrations WHERE version = {version}");
        assert_eq!(store.count(&recorded), 1, "migrated");
    }
}
