//! `catchup_window` (docs/schedules.md §16.1–§16.4): cadence points older than the window when
//! the engine sees them are counted missed, not fired; the points inside it follow the catch-up
//! policy. Checked after a stall (no store), across a restart (both stores), at a resume, on a
//! `PostgreSQL` takeover, and on a store migrated from before policies.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::stores::{Kind, Store};
use common::{Host, t0};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{Catchup, Inspector, Options, ScheduleId, Value};

const SEC: u64 = 1_000_000_000;

fn window(seconds: f64, catchup: Catchup) -> Options {
    Options::new()
        .catchup(catchup)
        .catchup_window(Duration::from_secs_f64(seconds))
}

/// The nominal points (Unix ns, relative to `t0`) the runner started for `id`, in order.
fn fired(h: &Host, id: ScheduleId) -> Vec<u64> {
    h.started()
        .iter()
        .filter(|(_, f)| f.schedule == id)
        .map(|(_, f)| f.nominal_unix_nanos - t0() as u64 * SEC)
        .collect()
}

/// Ticks `ticks` times, 0.1 s apart, finishing every firing before the next tick.
fn run(h: &Host, ticks: usize) {
    for _ in 0..ticks {
        h.tick();
        h.finish_all();
        h.advance(0.1);
    }
}

#[test]
fn after_a_stall_points_older_than_the_window_are_missed_and_the_rest_follow_the_policy() {
    let h = Host::new();
    let all = h.every(1.0, window(2.5, Catchup::All));
    let once = h.every(1.0, window(2.5, Catchup::Once));
    let plain = h.every(1.0, Options::new().catchup(Catchup::All));
    // +1 .. +10 pass with no tick; at +10.2 the window reaches back to +7.7: +1 .. +7 are older.
    h.advance(10.2);
    run(&h, 7); // to +10.9: +11 is not due yet
    assert_eq!(fired(&h, all), [8 * SEC, 9 * SEC, 10 * SEC]);
    assert_eq!(h.info(all).missed_count, 7);
    assert_eq!(
        fired(&h, once),
        [10 * SEC],
        "once serves the newest point in the window"
    );
    assert_eq!(h.info(once).missed_count, 9);
    assert_eq!(
        fired(&h, plain).len(),
        7,
        "without a window the old points fire too"
    );
    assert_eq!(fired(&h, plain)[0], SEC);
    assert_eq!(h.info(plain).missed_count, 0);
}

#[test]
fn a_single_late_point_older_than_the_window_is_missed_not_fired() {
    let h = Host::new();
    let id = h.every(60.0, window(1.0, Catchup::Once));
    // +60 is seen 1.5 s late (a stalled host): one point, but older than the window.
    h.after(61.5);
    assert_eq!(h.fired(), 0);
    let info = h.info(id);
    assert_eq!(info.missed_count, 1);
    assert!(
        common::approx(info.next_run, t0() + 120.0),
        "{}",
        info.next_run
    );
    // Within the window a late point fires as before (docs/schedules.md §13.1).
    h.after(59.2);
    assert_eq!(fired(&h, id), [120 * SEC]);
}

#[test]
fn the_window_applies_to_the_points_a_pause_slept_through() {
    let h = Host::new();
    let id = h.every(1.0, window(2.5, Catchup::All));
    assert!(h.engine.pause(h.prog, id, "deploy").unwrap());
    h.after(6.2);
    assert!(h.engine.resume(h.prog, id).unwrap());
    run(&h, 4);
    // +1 .. +3 are more than 2.5 s old at +6.2; +4 .. +6 fire.
    assert_eq!(fired(&h, id), [4 * SEC, 5 * SEC, 6 * SEC]);
    let info = h.info(id);
    assert_eq!((info.missed_count, info.paused_missed), (3, 3));
}

#[test]
fn a_bad_window_is_refused_naming_the_value_and_the_rule_and_nothing_is_created() {
    let h = Host::new();
    for options in [
        Options::new().catchup_window(Duration::ZERO),
        Options::new().catchup_window(Duration::from_secs(u64::MAX)),
    ] {
        let mut txn = h.engine.begin(h.prog);
        let err = txn
            .schedule_every(h.room, "tick", 1.0, vec![], options)
            .unwrap_err();
        assert_eq!(err.code(), "E_INVARG");
        assert!(err.to_string().contains("docs/schedules.md §16.1"), "{err}");
        txn.commit().unwrap();
    }
    assert_eq!(h.engine.live_count(), 0);
}

#[test]
fn a_key_names_the_window_as_what_differs() {
    let h = Host::new();
    let keyed = |seconds: u64| {
        Options::new()
            .key("hourly")
            .catchup_window(Duration::from_secs(seconds))
    };
    h.every(60.0, keyed(30));
    let mut txn = h.engine.begin(h.prog);
    let err = txn
        .schedule_every(h.room, "tick", 60.0, vec![], keyed(40))
        .unwrap_err();
    assert!(err.to_string().contains("catchup_window"), "{err}");
}

on_every_store! {
    fn info_and_the_inspector_show_the_window(store) {
        let h = Host::on(store);
        let id = h.every(1.0, window(90.0, Catchup::Skip));
        let plain = h.every(1.0, Options::new());
        let info = h.info(id).to_value();
        assert_eq!(info.get("catchup_window"), Some(&Value::Float(90.0)));
        assert_eq!(h.info(plain).to_value().get("catchup_window"), Some(&Value::Int(0)));
        if store.kind() == Kind::Memory {
            return;
        }
        h.engine.flush().unwrap();
        let stored = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
        assert_eq!(stored.catchup_window, Some(Duration::from_secs(90)));
        let stored = Inspector::open(store.path()).unwrap().get(plain).unwrap().unwrap();
        assert_eq!(stored.catchup_window, None);
        assert_eq!(
            store.count("SELECT COUNT(*) FROM schedules WHERE policies IS NULL"),
            1,
            "the defaults are stored as NULL"
        );
    }
}

on_both_stores! {
    fn across_a_restart_the_window_is_kept_and_judged_at_open(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let all = h.every(1.0, window(3.5, Catchup::All));
        let skip = h.every(1.0, window(3.5, Catchup::Skip));
        let wall = h.clock.unix_nanos() + 10 * SEC + SEC / 5; // +1 .. +10 pass while down
        drop(h);
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        // Judged inside open: +1 .. +6 are older than 3.5 s at +10.2.
        assert_eq!(h.info(all).missed_count, 6);
        assert_eq!(h.info(skip).missed_count, 10);
        assert_eq!(h.info(all).catchup_window, Some(Duration::from_secs_f64(3.5)));
        run(&h, 6);
        assert_eq!(fired(&h, all), [7 * SEC, 8 * SEC, 9 * SEC, 10 * SEC]);
        assert!(fired(&h, skip).is_empty());
    }
}

on_both_stores! {
    fn a_store_from_before_policies_is_migrated_and_its_schedules_have_none(store) {
        let h = Host::on(store);
        let id = h.every(60.0, Options::new());
        h.engine.flush().unwrap();
        drop(h);
        // What a build before policies left: no column, and neither its version nor a later one
        // recorded.
        let (table, version) = match store.kind() {
            Kind::Postgres => ("tickstep_schedules", 13),
            _ => ("schedules", 11),
        };
        store.execute(&format!(
            "ALTER TABLE {table} DROP COLUMN policies; \
             DELETE FROM schema_migrations WHERE version >= {version}"
        ));
        let old = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
        assert_eq!(old.catchup_window, None, "the inspector reads it as it is");
        let h = Host::on(store);
        assert_eq!(h.info(id).catchup_window, None);
        assert_eq!(
            store.count(&format!(
                "SELECT COUNT(*) FROM schema_migrations WHERE version = {version}"
            )),
            1
        );
        assert_eq!(store.count("SELECT COUNT(*) FROM schedules WHERE policies IS NULL"), 1);
    }
}

#[test]
fn postgres_only_a_node_taking_over_judges_the_window_at_its_claim() {
    let url = pg_or_skip!("catchup_window_takeover");
    let store = Store::postgres(url);
    // A renews its lease rarely, so the test can end it from outside; B claims often.
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let id = a.every(1.0, window(3.5, Catchup::All));
    assert_eq!(a.after(1.0).started, 1);
    a.finish_all();
    a.engine.flush().unwrap();
    store.lapse_long_leases();
    // B's clock is at +10.2 when it claims: +2 .. +6 are older than the window.
    b.advance(10.2);
    b.take_over(1);
    b.finish_all();
    run(&b, 6);
    assert_eq!(fired(&b, id), [7 * SEC, 8 * SEC, 9 * SEC, 10 * SEC]);
    assert_eq!(b.info(id).missed_count, 5);
    let points: BTreeSet<u64> = fired(&a, id).into_iter().chain(fired(&b, id)).collect();
    assert_eq!(points.len(), 5, "no point fired twice");
    drop(a);
}
