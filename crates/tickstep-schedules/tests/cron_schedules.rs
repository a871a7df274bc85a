//! Calendar schedules end to end (docs/schedules.md §14.12–§14.16): `schedule_cron` on the
//! engine, on every store, through restarts and a crash across DST changes, catch-up counting
//! real points, permissions, operator actions and bad input — all on the manual clock.

#![allow(clippy::float_cmp)] // virtual time is exact: these values are equal, not close
mod common;

use common::Host;
use common::counters::Counters;
use common::stores::Kind;
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{
    CalendarError, Catchup, CronField, DstPolicy, Error, FoldPolicy, GapPolicy, Options,
    ScheduleKind, Value,
};

const S: u64 = 1_000_000_000;

// Europe/London, 2026-10-25: 01:00-02:00 is shown twice (BST, then GMT).
const OCT_24_0000_BST: u64 = 1_792_796_400;
const OCT_24_0130_BST: u64 = 1_792_801_800;
const OCT_25_0130_BST: u64 = 1_792_888_200;
const OCT_25_0130_GMT: u64 = 1_792_891_800;
const OCT_26_0130_GMT: u64 = 1_792_978_200;

// Europe/London, 2026-03-29: 01:00-02:00 does not exist (GMT to BST at 01:00 UTC).
const MAR_28_0000_GMT: u64 = 1_774_656_000;
const MAR_28_0130_GMT: u64 = 1_774_661_400;
const MAR_29_0200_BST: u64 = 1_774_746_000;
const MAR_30_0130_BST: u64 = 1_774_830_600;
const MAR_30_0200_BST: u64 = 1_774_832_400;

/// What a refused calendar's error must be.
type Expected = fn(&CalendarError) -> bool;

fn policy(gap: GapPolicy, fold: FoldPolicy) -> Options {
    Options::new().dst_policy(DstPolicy { gap, fold })
}

/// Seconds of the clock, as an integer (calendar points are whole seconds).
fn now_s(h: &Host) -> u64 {
    h.clock.unix_nanos() / S
}

/// Moves the clock to `unix_seconds` and ticks.
fn tick_at(h: &Host, unix_seconds: u64) -> tickstep_schedules::TickReport {
    let now = h.clock.unix_nanos();
    assert!(unix_seconds * S >= now, "the clock only goes forward");
    h.clock
        .advance(std::time::Duration::from_nanos(unix_seconds * S - now));
    h.tick()
}

/// The nominal points of every firing so far, whole seconds.
fn nominals(h: &Host) -> Vec<u64> {
    h.started()
        .iter()
        .map(|(_, f)| f.nominal_unix_nanos / S)
        .collect()
}

/// Opens the store again at `unix_seconds`: after a clean drop, or after a crash (the engine
/// forgotten, nothing of it dropped; on `PostgreSQL` its node's lease ended so the new node may
/// claim its rows, docs/schedules.md §11.26).
fn reopen(store: &common::stores::Store, unix_seconds: u64, crashed: bool) -> Host {
    if crashed && store.kind() == Kind::Postgres {
        store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
    }
    Host::open(
        store.path(),
        ManualClock::starting_at_unix_nanos(unix_seconds * S),
    )
}

on_every_store! {
    fn a_cron_schedule_fires_at_its_calendar_points_through_a_fold_under_both(store) {
        let h = Host::on_at(store, OCT_24_0000_BST * S);
        let id = h.cron("30 1 * * *", "Europe/London", policy(GapPolicy::Shift, FoldPolicy::Both));
        let info = h.info(id);
        assert_eq!(info.kind, ScheduleKind::Cron);
        let calendar = info.calendar.clone().unwrap();
        assert_eq!((calendar.expr.as_str(), calendar.zone.as_str()), ("30 1 * * *", "Europe/London"));
        assert_eq!(calendar.dst, DstPolicy { gap: GapPolicy::Shift, fold: FoldPolicy::Both });
        assert_eq!(info.next_run, OCT_24_0130_BST as f64);
        // The next fire times come from the calendar: the 25th twice (docs/schedules.md §14.13).
        let next: Vec<u64> = info.next_runs.iter().take(4).map(|&t| t as u64).collect();
        assert_eq!(next, [OCT_24_0130_BST, OCT_25_0130_BST, OCT_25_0130_GMT, OCT_26_0130_GMT]);
        let map = info.to_value();
        assert_eq!(map.get("kind"), Some(&Value::from("cron")));
        assert_eq!(map.get("cron"), Some(&Value::from("30 1 * * *")));
        assert_eq!(map.get("zone"), Some(&Value::from("Europe/London")));
        assert_eq!(map.get("dst_fold"), Some(&Value::from("both")));
        assert_eq!(map.get("interval"), Some(&Value::Float(0.0)));

        for point in [OCT_24_0130_BST, OCT_25_0130_BST, OCT_25_0130_GMT, OCT_26_0130_GMT] {
            assert_eq!(tick_at(&h, point - 1).started, 0, "not before {point}");
            assert_eq!(tick_at(&h, point).started, 1, "at {point}");
            h.finish_all();
        }
        assert_eq!(nominals(&h), [OCT_24_0130_BST, OCT_25_0130_BST, OCT_25_0130_GMT, OCT_26_0130_GMT]);
        let info = h.info(id);
        assert_eq!((info.run_count, info.missed_count), (4, 0));
        assert_eq!(info.next_run, (OCT_26_0130_GMT + 86_400) as f64);
    }
}

on_every_store! {
    fn under_first_and_last_the_fold_fires_once_at_the_chosen_pass(store) {
        for (fold, fired) in [(FoldPolicy::First, OCT_25_0130_BST), (FoldPolicy::Last, OCT_25_0130_GMT)] {
            let h = Host::on_at(store, OCT_24_0000_BST * S);
            h.cron("30 1 * * *", "Europe/London", policy(GapPolicy::Shift, fold));
            for point in [OCT_24_0130_BST, OCT_25_0130_BST, OCT_25_0130_GMT, OCT_26_0130_GMT] {
                tick_at(&h, point);
                h.finish_all();
            }
            assert_eq!(nominals(&h), [OCT_24_0130_BST, fired, OCT_26_0130_GMT], "{fold}");
            drop(h);
            if store.kind() != Kind::Memory {
                store.execute("DELETE FROM schedules");
            }
        }
    }
}

on_both_stores! {
    fn a_restart_and_a_crash_in_the_middle_of_a_fold_under_both_fire_each_pass_once(store) {
        let h = Host::on_at(store, OCT_24_0000_BST * S);
        let id = h.cron("30 1 * * *", "Europe/London", policy(GapPolicy::Shift, FoldPolicy::Both));
        tick_at(&h, OCT_24_0130_BST);
        h.finish_all();
        // A clean restart between two days: the cadence comes back as it was.
        let now = now_s(&h) + 3_600;
        drop(h);
        let h = reopen(store, now, false);
        assert_eq!(h.info(id).next_run, OCT_25_0130_BST as f64);
        tick_at(&h, OCT_25_0130_BST);
        assert_eq!(nominals(&h), [OCT_25_0130_BST]);
        h.finish_all();
        h.tick(); // the outcome's update goes out with this tick's group commit
        h.engine.flush().unwrap();
        // Killed 15 minutes into the fold, between its two passes: nothing of the engine is
        // dropped. It comes back after the second pass has passed.
        let killed_at = OCT_25_0130_BST + 15 * 60;
        tick_at(&h, killed_at);
        h.engine.flush().unwrap();
        std::mem::forget(h);
        let h = reopen(store, OCT_25_0130_GMT + 10 * 60, true);
        let info = h.info(id);
        assert_eq!(info.run_count, 2, "the first pass is not counted again");
        assert_eq!(info.next_run, OCT_25_0130_GMT as f64, "the second pass is due");
        h.tick();
        h.engine.wait_for_writes().unwrap();
        h.tick();
        assert_eq!(nominals(&h), [OCT_25_0130_GMT], "the second pass fires, once, late");
        h.finish_all();
        let info = h.info(id);
        assert_eq!((info.run_count, info.missed_count, info.fault_count), (3, 0, 0));
        assert_eq!(info.next_run, OCT_26_0130_GMT as f64);
        assert_eq!(store.count("SELECT COUNT(*) FROM schedules WHERE kind = 'cron'"), 1);
    }
}

on_both_stores! {
    fn a_crash_with_the_first_pass_in_flight_settles_it_and_fires_the_second_pass(store) {
        let h = Host::on_at(store, OCT_25_0130_BST * S - 60 * S);
        let id = h.cron("30 1 * * *", "Europe/London", policy(GapPolicy::Shift, FoldPolicy::Both));
        tick_at(&h, OCT_25_0130_BST);
        assert_eq!(h.fired(), 1);
        h.engine.flush().unwrap();
        // Killed with the first pass still running; back a minute before the second pass.
        std::mem::forget(h);
        let h = reopen(store, OCT_25_0130_GMT - 60, true);
        for run in h.engine.interrupted() {
            h.engine.abandon(run.run);
        }
        let info = h.info(id);
        assert_eq!((info.run_count, info.fault_count), (1, 1), "the pass in flight settled as a fault");
        assert_eq!(info.next_run, OCT_25_0130_GMT as f64);
        assert_eq!(tick_at(&h, OCT_25_0130_GMT - 1).started, 0);
        assert_eq!(tick_at(&h, OCT_25_0130_GMT).started, 1);
        assert_eq!(nominals(&h), [OCT_25_0130_GMT]);
    }
}

on_both_stores! {
    fn catch_up_across_spring_forward_counts_real_points_not_wall_clock_days(store) {
        // Down from 2026-03-28 01:30 GMT (just fired) to 2026-03-30 02:00 BST: two wall-clock
        // days, but `skip` has one real point in them and `shift` two (the 29th fires at the
        // transition, 02:00 BST) — docs/schedules.md §14.13.
        for (gap, catchup, points, missed, fired) in [
            (GapPolicy::Skip, Catchup::Once, 1, 0, vec![MAR_30_0130_BST]),
            (GapPolicy::Shift, Catchup::Once, 2, 1, vec![MAR_30_0130_BST]),
            (GapPolicy::Shift, Catchup::All, 2, 0, vec![MAR_29_0200_BST, MAR_30_0130_BST]),
            (GapPolicy::Shift, Catchup::Skip, 2, 2, vec![]),
            (GapPolicy::Skip, Catchup::Skip, 1, 0, vec![MAR_30_0130_BST]),
        ] {
            let label = format!("{gap} {catchup:?}: {points} points");
            let h = Host::on_at(store, MAR_28_0000_GMT * S);
            let options = policy(gap, FoldPolicy::First).catchup(catchup);
            let id = h.cron("30 1 * * *", "Europe/London", options);
            tick_at(&h, MAR_28_0130_GMT);
            h.finish_all();
            h.tick();
            drop(h);
            let h = reopen(store, MAR_30_0200_BST, false);
            for _ in 0..4 {
                h.tick();
                h.engine.wait_for_writes().unwrap();
                h.finish_all();
            }
            assert_eq!(nominals(&h), fired, "{label}");
            let info = h.info(id);
            assert_eq!(info.missed_count, missed, "{label}");
            assert_eq!(info.next_run, (MAR_30_0130_BST + 86_400) as f64, "{label}");
            drop(h);
            store.execute("DELETE FROM schedules");
        }
    }
}

on_every_store! {
    fn a_stalled_engine_catches_up_a_calendar_by_its_real_points(store) {
        // Hourly in New York across spring-forward (2026-03-08 02:00 EST -> 03:00 EDT): from
        // 00:00 to 05:00 EDT there are four real hours (01, 03, 04, 05), not five.
        let midnight_est = 1_772_946_000; // 2026-03-08T00:00:00-05:00
        let h = Host::on_at(store, midnight_est * S);
        let id = h.cron("0 * * * *", "America/New_York", Options::new().catchup(Catchup::Skip));
        tick_at(&h, midnight_est + 3_600 - 1);
        tick_at(&h, midnight_est + 4 * 3_600 + 60); // 05:01 EDT, one tick after 01:00 EST
        let info = h.info(id);
        assert_eq!(h.fired(), 0);
        assert_eq!(info.missed_count, 4, "01:00 EST, 03:00, 04:00, 05:00 EDT");
        assert_eq!(info.next_run, (midnight_est + 5 * 3_600) as f64, "06:00 EDT");
    }
}

on_every_store! {
    fn bad_input_is_a_typed_error_naming_field_and_rule_and_creates_nothing(store) {
        let h = Host::on(store);
        let long = "1 ".repeat(5_000);
        let cases: [(&str, &str, Expected); 8] = [
            ("61 * * * *", "UTC", |e| matches!(e, CalendarError::Field { field: CronField::Minute, .. })),
            ("0 0 30 2 *", "UTC", |e| matches!(e, CalendarError::NeverOccurs { .. })),
            ("", "UTC", |e| matches!(e, CalendarError::Empty)),
            ("   ", "UTC", |e| matches!(e, CalendarError::Empty)),
            (&long, "UTC", |e| matches!(e, CalendarError::TooLong { len: 10_000 })),
            ("0 3 * * *", "Mars/Olympus_Mons", |e| matches!(e, CalendarError::UnknownZone { .. })),
            ("0 25 * * *", "UTC", |e| matches!(e, CalendarError::Field { field: CronField::Hour, .. })),
            ("@fortnightly", "UTC", |e| matches!(e, CalendarError::UnknownAlias { .. })),
        ];
        let mut txn = h.engine.begin(h.prog);
        for (expr, zone, expected) in cases {
            let err = txn
                .schedule_cron(h.room, "tick", expr, zone, vec![], Options::new())
                .unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let Error::Calendar(calendar) = &err else {
                panic!("{expr:?} in {zone}: {err}");
            };
            assert!(expected(calendar), "{expr:?} in {zone}: {err}");
            let text = err.to_string();
            assert!(text.contains("docs/schedules.md §14."), "names its rule: {text}");
            assert!(text.len() < 400, "quotes a bounded excerpt: {} bytes", text.len());
        }
        let text = txn
            .schedule_cron(h.room, "tick", "61 * * * *", "UTC", vec![], Options::new())
            .unwrap_err()
            .to_string();
        assert!(text.contains("minute field \"61\""), "{text}");
        // A bad DST policy word is refused with the options (docs/schedules.md §14.9).
        let words = Value::Map(vec![(Value::from("dst_fold"), Value::from("twice"))]);
        let err = Options::from_map(&words).unwrap_err();
        assert!(err.to_string().contains("dst_fold"), "{err}");
        // Nothing was created: the transaction holds nothing, the engine and store nothing.
        txn.commit().unwrap();
        assert_eq!(h.engine.live_count(), 0);
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 0);
        }
    }
}

on_every_store! {
    fn permissions_apply_to_a_cron_schedule_both_ways(store) {
        let h = Host::on(store);
        let id = h.cron("*/5 * * * *", "Asia/Kolkata", Options::new());
        // Another programmer may neither inspect nor act on it.
        let mut theirs = h.engine.begin(h.other);
        assert_eq!(theirs.schedule_info(id).unwrap_err().code(), "E_PERM");
        assert_eq!(theirs.schedule_stop(id).unwrap_err().code(), "E_PERM");
        assert_eq!(h.engine.pause(h.other, id, "no").unwrap_err().code(), "E_PERM");
        assert_eq!(h.engine.resume(h.other, id).unwrap_err().code(), "E_PERM");
        assert_eq!(h.engine.trigger_now(h.other, id).unwrap_err().code(), "E_PERM");
        let past = h.now() - 600.0;
        assert_eq!(h.engine.backfill(h.other, id, past, past + 60.0).unwrap_err().code(), "E_PERM");
        assert_eq!(h.engine.next_runs(h.other, id, 3).unwrap_err().code(), "E_PERM");
        // Nor create one on an object whose verb it may not call.
        let mut txn = h.engine.begin(h.other);
        let refused = txn.schedule_cron(h.wiz, "tick", "@hourly", "UTC", vec![], Options::new());
        assert_eq!(refused.unwrap_err().code(), "E_INVARG");
        // Its owner and a wizard may.
        assert!(h.engine.pause(h.prog, id, "mine").unwrap());
        assert!(h.engine.resume(h.wiz, id).unwrap());
        assert!(h.engine.trigger_now(h.wiz, id).unwrap());
        assert_eq!(h.engine.next_runs(h.prog, id, 3).unwrap().len(), 3);
        let mut wiz = h.engine.begin(h.wiz);
        assert!(wiz.schedule_stop(id).unwrap());
        wiz.commit().unwrap();
        assert!(!h.valid(id));
    }
}

on_every_store! {
    fn operator_actions_work_on_a_cron_schedule(store) {
        let h = Host::on_at(store, OCT_24_0000_BST * S);
        let both = policy(GapPolicy::Shift, FoldPolicy::Both);
        let id = h.cron("30 1 * * *", "Europe/London", both);
        // Backfill: the calendar's points in a past range, each once — the fold of 2025-10-26
        // twice under `both` (docs/schedules.md §14.13).
        let oct_25_2025_0130_bst = 1_761_352_200;
        let count = h
            .engine
            .backfill(h.prog, id, oct_25_2025_0130_bst as f64, (oct_25_2025_0130_bst + 2 * 86_400 + 3_600) as f64)
            .unwrap();
        assert_eq!(count, 4, "25th, 26th in BST, 26th in GMT, 27th");
        for _ in 0..6 {
            h.tick();
            h.engine.wait_for_writes().unwrap();
            h.finish_all();
        }
        let d = 86_400;
        assert_eq!(
            nominals(&h),
            [
                oct_25_2025_0130_bst,
                oct_25_2025_0130_bst + d,
                oct_25_2025_0130_bst + d + 3_600,
                oct_25_2025_0130_bst + 2 * d + 3_600,
            ]
        );
        // A range with no point of the calendar is refused.
        let none = h.engine.backfill(h.prog, id, (oct_25_2025_0130_bst + 60) as f64, (oct_25_2025_0130_bst + 120) as f64);
        assert_eq!(none.unwrap_err().code(), "E_INVARG");
        // Trigger now: one firing now, the cadence untouched.
        assert!(h.engine.trigger_now(h.prog, id).unwrap());
        h.tick();
        h.engine.wait_for_writes().unwrap();
        h.tick();
        assert_eq!(h.fired(), 5);
        h.finish_all();
        assert_eq!(h.info(id).next_run, OCT_24_0130_BST as f64);
        // Pause through the fold; resume after it: the points slept through are missed, by the
        // calendar's count (three: the 24th, and the 25th twice).
        assert!(h.engine.pause(h.prog, id, "maintenance").unwrap());
        assert_eq!(
            h.engine.next_runs(h.prog, id, 2).unwrap(),
            [OCT_24_0130_BST as f64, OCT_25_0130_BST as f64],
            "a paused schedule shows what resuming keeps"
        );
        tick_at(&h, OCT_25_0130_GMT + 60);
        assert_eq!(h.fired(), 5, "nothing fires while paused");
        assert!(h.engine.resume(h.prog, id).unwrap());
        let info = h.info(id);
        assert_eq!((info.missed_count, info.paused_missed), (3, 3));
        assert_eq!(info.next_run, OCT_26_0130_GMT as f64);
        tick_at(&h, OCT_26_0130_GMT);
        assert_eq!(nominals(&h).last(), Some(&OCT_26_0130_GMT));
    }
}

on_both_stores! {
    fn the_inspector_shows_a_stored_cron_schedule_and_its_next_fire_times(store) {
        let h = Host::on_at(store, OCT_24_0000_BST * S);
        let id = h.cron("30 1 * * *", "Europe/London", policy(GapPolicy::Skip, FoldPolicy::Last));
        h.engine.flush().unwrap();
        let stored = tickstep_schedules::Inspector::open(store.path())
            .unwrap()
            .get(id)
            .unwrap()
            .unwrap();
        assert_eq!(stored.kind, ScheduleKind::Cron);
        assert_eq!(
            stored.calendar.as_ref().map(ToString::to_string).as_deref(),
            Some("30 1 * * * Europe/London (gap skip, fold last)")
        );
        assert_eq!(
            stored.next_runs(h.clock.unix_nanos(), 3),
            [OCT_24_0130_BST * S, OCT_25_0130_GMT * S, OCT_26_0130_GMT * S]
        );
        let dst = store.texts("SELECT id, cron_dst FROM schedules");
        assert_eq!(dst, [(i64::try_from(id.get()).unwrap(), "skip last".to_owned())]);
    }
}

on_both_stores! {
    fn a_keyed_cron_creation_returns_the_same_calendar_and_refuses_another(store) {
        let h = Host::on(store);
        let keyed = || Options::new().key("nightly");
        let id = h.cron("0 3 * * *", "Europe/Paris", keyed());
        assert_eq!(h.cron("0 3 * * *", "europe/paris", keyed()), id, "the same calendar");
        let mut txn = h.engine.begin(h.prog);
        let other = txn.schedule_cron(h.room, "tick", "0 4 * * *", "Europe/Paris", vec![], keyed());
        let text = other.unwrap_err().to_string();
        assert!(text.contains("its calendar differs"), "{text}");
    }
}

#[test]
fn points_a_skip_gap_policy_drops_are_counted_missed_dst_gap_once_per_gap() {
    // docs/schedules.md §14.15: London skips 01:00-02:00 on 2026-03-29.
    for (expr, gap, counted) in [
        ("30 1 * * *", GapPolicy::Skip, 1),
        ("*/15 1 * * *", GapPolicy::Skip, 1),
        ("30 1 * * *", GapPolicy::Shift, 0),
        ("30 * * * *", GapPolicy::Skip, 0), // every hour: the policy does not apply (docs/schedules.md §14.5)
    ] {
        let counters = Counters::default();
        let h = metrics::with_local_recorder(&counters, || {
            Host::on_at(&common::stores::Store::memory(), MAR_28_0000_GMT * S)
        });
        let id = h.cron(expr, "Europe/London", policy(gap, FoldPolicy::First));
        for quarter in 1..=240 {
            tick_at(&h, MAR_28_0000_GMT + quarter * 900);
            h.finish_all();
        }
        let label = format!("{expr} {gap}");
        assert_eq!(
            counters.get("tickstep_schedules_missed_total", "reason=dst_gap"),
            counted,
            "{label}"
        );
        assert_eq!(h.info(id).missed_count, 0, "{label}: not in missed_count");
        assert!(
            h.info(id).next_run > (MAR_30_0130_BST - 86_400) as f64,
            "{label}"
        );
    }
}
