//! Operator actions: pause and resume, trigger now, backfill, the next fire times
//! (docs/schedules.md §9.4–§9.10), on every store, with restarts on both, all on the manual clock.

#![allow(clippy::float_cmp)] // virtual time is exact: these values are equal, not close
mod common;

use std::path::Path;

use common::{Host, approx};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{
    Catchup, MAX_NOTE_BYTES, ObjId, Options, Overlap, ScheduleId, Schedules, Value,
};

/// Drops `h` (a clean shutdown) and opens the same store `secs_later` seconds of wall time later.
fn restart(h: Host, path: &Path, secs_later: f64) -> Host {
    let wall = h.clock.unix_nanos() + (secs_later * 1e9) as u64;
    drop(h);
    Host::open(path, ManualClock::starting_at_unix_nanos(wall))
}

/// The nominal points of every firing so far, seconds.
fn nominals(h: &Host) -> Vec<f64> {
    (0..h.fired()).map(|i| h.nominal(i)).collect()
}

on_every_store! {
    fn a_paused_schedule_keeps_its_cadence_and_resume_counts_what_it_missed(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        assert_eq!(h.fired(), 1);
        h.finish_all();
        assert!(h.engine.pause(h.prog, id, "deploying v2").unwrap());
        assert!(!h.engine.pause(h.prog, id, "again").unwrap(), "already paused");
        for _ in 0..5 {
            h.after(10.0);
        }
        assert_eq!(h.fired(), 1, "nothing fires while paused");
        let info = h.info(id);
        let pause = info.pause.clone().unwrap();
        assert_eq!((pause.by, pause.note.as_str()), (h.prog, "deploying v2"));
        assert!(approx(pause.at, t0 + 10.0));
        assert_eq!(info.next_run, 0.0, "nothing is due while paused");
        // Resumed at t0 + 65: the points at 20..60 passed while paused; "skip" drops them all.
        h.advance(5.0);
        assert!(h.engine.resume(h.prog, id).unwrap());
        let info = h.info(id);
        assert!(info.pause.is_none());
        assert_eq!((info.missed_count, info.paused_missed), (5, 5));
        assert!(approx(info.next_run, t0 + 70.0), "in phase: {}", info.next_run);
        h.after(5.0);
        assert_eq!(h.fired(), 2);
        assert!(approx(h.nominal(1), t0 + 70.0));
        assert!(!h.engine.resume(h.prog, id).unwrap(), "not paused");
    }
}

on_every_store! {
    fn resume_hands_the_points_passed_while_paused_to_the_catch_up_policy(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let once = h.every(10.0, Options::new().catchup(Catchup::Once));
        let all = h.every(10.0, Options::new().catchup(Catchup::All));
        h.engine.pause(h.prog, once, "").unwrap();
        h.engine.pause(h.prog, all, "").unwrap();
        h.advance(35.0); // points at 10, 20, 30 pass
        h.engine.resume(h.prog, once).unwrap();
        h.engine.resume(h.prog, all).unwrap();
        assert_eq!(h.info(once).paused_missed, 2, "once keeps the latest");
        assert_eq!(h.info(all).paused_missed, 0, "all keeps every one");
        for _ in 0..3 {
            h.tick();
            h.finish_all();
        }
        let mut fired: Vec<(u64, f64)> = h
            .started()
            .iter()
            .map(|(_, f)| (f.schedule.get(), f.nominal_unix_nanos as f64 / 1e9 - t0))
            .collect();
        fired.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(
            fired,
            vec![
                (once.get(), 30.0),
                (all.get(), 10.0),
                (all.get(), 20.0),
                (all.get(), 30.0)
            ]
        );
    }
}

on_both_stores! {
    fn a_pause_survives_a_restart_with_who_when_and_why(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new());
        h.engine.pause(h.wiz, id, "held for the audit").unwrap();
        let h = restart(h, store.path(), 45.0);
        h.after(10.0);
        assert_eq!(h.fired(), 0, "still paused after the restart");
        let pause = h.info(id).pause.unwrap();
        assert_eq!((pause.by, pause.note.as_str()), (h.wiz, "held for the audit"));
        assert!(approx(pause.at, t0));
        h.engine.resume(h.wiz, id).unwrap();
        // Resumed at t0 + 55: points 10..50 were missed while paused.
        assert_eq!(h.info(id).paused_missed, 5);
        h.after(5.0);
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), t0 + 60.0));
        // And the resume is durable too.
        h.finish_all();
        let h = restart(h, store.path(), 1.0);
        let info = h.info(id);
        assert!(info.pause.is_none());
        assert_eq!((info.paused_missed, info.run_count), (5, 1));
    }
}

on_both_stores! {
    fn a_paused_one_shot_waits_and_fires_once_resumed(store) {
        let h = Host::on(store);
        let id = h.at(10.0, Options::new());
        h.engine.pause(h.prog, id, "").unwrap();
        h.after(20.0);
        assert_eq!(h.fired(), 0);
        assert_eq!(h.info(id).next_runs.len(), 1, "its one deadline is still ahead of it");
        let h = restart(h, store.path(), 1.0);
        h.tick();
        assert_eq!(h.fired(), 0);
        h.engine.resume(h.prog, id).unwrap();
        h.tick();
        assert_eq!(h.fired(), 1, "a passed one-shot fires once (docs/schedules.md §4.6)");
    }
}

on_every_store! {
    fn trigger_now_fires_once_now_and_leaves_the_cadence_alone(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(60.0, Options::new());
        h.advance(5.0);
        assert!(h.engine.trigger_now(h.prog, id).unwrap());
        assert!(!h.engine.trigger_now(h.prog, id).unwrap(), "one waits already");
        assert!(h.info(id).trigger_pending);
        h.tick();
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), t0 + 5.0), "serves now");
        let info = h.info(id);
        assert!(!info.trigger_pending);
        assert!(approx(info.next_run, t0 + 60.0), "cadence untouched");
        h.finish_all();
        h.tick();
        assert_eq!(h.fired(), 1, "exactly one firing");
        h.after(55.0);
        assert_eq!(h.fired(), 2);
        assert!(approx(h.nominal(1), t0 + 60.0));
    }
}

on_every_store! {
    fn trigger_now_follows_the_overlap_policy(store) {
        let h = Host::on(store);
        let skip = h.every(10.0, Options::new());
        let queue = h.every(10.0, Options::new().overlap(Overlap::Queue));
        let concurrent = h.every(10.0, Options::new().overlap(Overlap::Concurrent));
        h.after(10.0);
        assert_eq!(h.fired(), 3, "each runs");
        for id in [skip, queue, concurrent] {
            h.engine.trigger_now(h.prog, id).unwrap();
        }
        h.tick();
        let started = |id: ScheduleId| h.started().iter().filter(|(_, f)| f.schedule == id).count();
        assert_eq!((started(skip), started(queue), started(concurrent)), (1, 1, 2));
        assert_eq!(h.info(skip).overlap_count, 1, "skip drops it, counted");
        h.finish_all();
        h.tick();
        assert_eq!(started(queue), 2, "queue runs it when the firing ends");
        assert_eq!(started(skip), 1);
    }
}

on_both_stores! {
    fn a_trigger_written_before_a_restart_fires_once_after_it(store) {
        let h = Host::on(store);
        let id = h.every(3600.0, Options::new());
        h.engine.trigger_now(h.prog, id).unwrap();
        let h = restart(h, store.path(), 1.0);
        assert!(h.info(id).trigger_pending);
        h.tick();
        assert_eq!(h.fired(), 1);
        h.finish_all();
        let h = restart(h, store.path(), 1.0);
        h.tick();
        assert_eq!(h.fired(), 0, "not again");
        assert!(!h.info(id).trigger_pending);
    }
}

on_every_store! {
    fn backfill_fires_each_point_of_the_range_once_in_order(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(60.0, Options::new());
        h.advance(1000.0); // cadence points at t0 + 60 k; catch-up skips 60..960
        h.tick();
        assert_eq!(h.fired(), 0);
        assert_eq!(h.engine.backfill(h.prog, id, t0 + 100.0, t0 + 300.0).unwrap(), 4);
        assert_eq!(h.info(id).backfill, Some((t0 + 120.0, t0 + 300.0)));
        h.tick();
        h.tick();
        assert_eq!(h.fired(), 1, "the next waits for the running one (overlap skip)");
        for _ in 0..4 {
            h.finish_all();
            h.tick();
        }
        let got: Vec<f64> = nominals(&h).iter().map(|n| (n - t0).round()).collect();
        assert_eq!(got, vec![120.0, 180.0, 240.0, 300.0]);
        assert_eq!(h.info(id).backfill, None);
        assert!(approx(h.info(id).next_run, t0 + 1020.0), "cadence untouched");
    }
}

on_both_stores! {
    fn a_backfill_cut_by_a_restart_fires_no_point_twice(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new().overlap(Overlap::Concurrent));
        h.advance(500.0);
        h.tick();
        let before = h.fired();
        assert_eq!(h.engine.backfill(h.prog, id, t0 + 5.0, t0 + 55.0).unwrap(), 5);
        h.tick();
        h.tick();
        let mut seen: Vec<f64> = nominals(&h)[before..].to_vec();
        assert_eq!(seen.len(), 2);
        let h = restart(h, store.path(), 1.0);
        assert_eq!(h.info(id).backfill, Some((t0 + 30.0, t0 + 50.0)));
        for _ in 0..5 {
            h.tick();
        }
        seen.extend(nominals(&h).iter().filter(|n| **n < t0 + 100.0));
        let got: Vec<f64> = seen.iter().map(|n| (n - t0).round()).collect();
        assert_eq!(got, vec![10.0, 20.0, 30.0, 40.0, 50.0]);
    }
}

on_every_store! {
    fn every_action_is_for_the_owner_or_a_wizard_as_schedule_stop(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new());
        h.advance(100.0);
        let refusals: Vec<String> = [
            h.engine.pause(h.other, id, "mine now").map(|_| ()),
            h.engine.resume(h.other, id).map(|_| ()),
            h.engine.trigger_now(h.other, id).map(|_| ()),
            h.engine.backfill(h.other, id, t0, t0 + 20.0).map(|_| ()),
        ]
        .into_iter()
        .map(|r| r.unwrap_err())
        .map(|e| {
            assert_eq!(e.code(), "E_PERM", "{e}");
            e.to_string()
        })
        .collect();
        assert!(refusals[0].contains("pause is for the schedule's owner or a wizard"), "{}", refusals[0]);
        assert!(refusals[3].contains("backfill"), "{}", refusals[3]);
        let info = h.info(id);
        assert!(info.pause.is_none() && !info.trigger_pending && info.backfill.is_none());
        // The owner may, and so may a wizard.
        for who in [h.prog, h.wiz] {
            assert!(h.engine.pause(who, id, "").unwrap());
            assert!(h.engine.resume(who, id).unwrap());
            assert!(h.engine.trigger_now(who, id).unwrap());
            h.tick();
            h.finish_all();
        }
        assert_eq!(h.engine.backfill(h.prog, id, t0, t0 + 20.0).unwrap(), 3);
        h.tick();
        h.finish_all();
        h.tick();
        h.finish_all();
        h.tick();
        h.finish_all();
        assert_eq!(h.engine.backfill(h.wiz, id, t0, t0 + 20.0).unwrap(), 3);
    }
}

on_every_store! {
    fn bad_input_is_a_typed_error_naming_the_value_and_the_rule_with_nothing_changed(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let every = h.every(10.0, Options::new());
        let once = h.at(1000.0, Options::new());
        h.advance(100.0);
        let now = h.now();
        let unknown = ScheduleId::from_raw(987_654);
        let invalid = |r: Result<u64, tickstep_schedules::Error>, needle: &str| {
            let e = r.unwrap_err();
            assert_eq!(e.code(), "E_INVARG", "{e}");
            assert!(e.to_string().contains(needle), "{needle:?} not in {e}");
            assert!(e.to_string().contains("docs/schedules.md §9."), "names the rule: {e}");
        };
        let bool_to_u64 = |r: Result<bool, tickstep_schedules::Error>| r.map(u64::from);
        invalid(bool_to_u64(h.engine.pause(h.wiz, unknown, "")), "987654");
        invalid(bool_to_u64(h.engine.resume(h.wiz, unknown)), "no such schedule");
        invalid(bool_to_u64(h.engine.trigger_now(h.wiz, unknown)), "no such schedule");
        invalid(h.engine.backfill(h.wiz, unknown, t0, t0 + 10.0), "no such schedule");
        let long = "x".repeat(MAX_NOTE_BYTES + 1);
        invalid(bool_to_u64(h.engine.pause(h.prog, every, &long)), "at most 200 bytes");
        invalid(bool_to_u64(h.engine.pause(h.prog, every, "bell\u{7}")), "control characters");
        invalid(h.engine.backfill(h.prog, every, t0 + 50.0, t0 + 20.0), "from must not be after to");
        invalid(h.engine.backfill(h.prog, every, t0, now + 10.0), "past range");
        invalid(h.engine.backfill(h.prog, every, f64::NAN, t0), "finite");
        invalid(h.engine.backfill(h.prog, every, t0 + 11.0, t0 + 19.0), "no cadence point");
        invalid(h.engine.backfill(h.prog, once, t0, t0 + 50.0), "recurring");
        h.advance(20_000.0);
        invalid(h.engine.backfill(h.prog, every, t0 + 10.0, t0 + 10_010.0), "1001 cadence points");
        assert_eq!(h.engine.backfill(h.prog, every, t0, t0 + 10.0).unwrap(), 2);
        invalid(h.engine.backfill(h.prog, every, t0, t0 + 10.0), "still under way");
        let info = h.info(every);
        assert!(info.pause.is_none());
        assert_eq!(info.backfill, Some((t0, t0 + 10.0)), "only the good one");
    }
}

on_every_store! {
    fn schedule_info_lists_the_next_ten_fire_times(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(30.0, Options::new());
        let once = h.at(90.0, Options::new());
        let info = h.info(id);
        assert_eq!(info.next_runs.len(), 10);
        for (k, t) in info.next_runs.iter().enumerate() {
            assert!(approx(*t, t0 + 30.0 * (k as f64 + 1.0)), "{k}: {t}");
        }
        assert_eq!(h.info(once).next_runs.len(), 1);
        assert!(approx(h.info(once).next_runs[0], t0 + 90.0));
        // Paused for 100 s: the list starts after now, where resuming keeps the cadence.
        h.engine.pause(h.prog, id, "").unwrap();
        h.advance(100.0);
        assert!(approx(h.info(id).next_runs[0], t0 + 120.0));
        let map = h.info(id).to_value();
        let Value::Map(pairs) = map else { panic!() };
        // After these come only a calendar schedule's four keys, the status and the policies
        // (docs/schedules.md §9.1, §16.4).
        let status = pairs.iter().rev().position(|(k, _)| *k == Value::from("status")).unwrap();
        let keys: Vec<String> =
            pairs.iter().rev().skip(status + 5).take(9).map(|(k, _)| k.to_string()).collect();
        assert_eq!(
            keys,
            [
                "\"history\"", "\"next_runs\"", "\"backfill\"", "\"trigger_pending\"", "\"paused_missed\"",
                "\"pause_note\"", "\"paused_at\"", "\"paused_by\"", "\"paused\""
            ]
        );
    }
}

#[test]
fn an_action_on_a_retired_schedule_is_invalid() {
    let h = Host::new();
    let id = h.at(1.0, Options::new().adaptive(false));
    h.after(1.0);
    h.finish_all();
    assert!(h.info(id).retired);
    let e = h.engine.pause(h.prog, id, "").unwrap_err();
    assert_eq!(e.code(), "E_INVARG");
    assert!(e.to_string().contains("retired"), "{e}");
}

/// Keeps the imports honest when a helper above stops needing one.
#[allow(dead_code)]
fn _types(_: ObjId, _: &Schedules) {}

on_both_stores! {
    fn an_operator_acts_on_a_running_store_and_the_engine_applies_it(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new());
        h.engine.wait_for_writes().unwrap();
        assert!(tickstep_schedules::Inspector::pause(store.path(), id, "from the shell").unwrap());
        assert!(!tickstep_schedules::Inspector::pause(store.path(), id, "again").unwrap());
        // PostgreSQL's store thread reads the notes when asked to wait (docs/schedules.md §11.22).
        h.engine.wait_for_writes().unwrap();
        h.after(20.0); // the engine reads the note before it fires anything
        assert_eq!(h.fired(), 0, "paused by the operator");
        let pause = h.info(id).pause.unwrap();
        assert_eq!((pause.by, pause.note.as_str()), (ObjId(-1), "from the shell"));
        // The engine's own updates since keep the pause in the row.
        h.after(10.0);
        h.engine.flush().unwrap();
        let stored = tickstep_schedules::Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
        assert!(stored.pause.is_some());
        assert!(tickstep_schedules::Inspector::trigger(store.path(), id).unwrap());
        h.engine.wait_for_writes().unwrap();
        h.after(1.0);
        assert_eq!(h.fired(), 1, "a trigger fires a paused schedule");
        h.finish_all();
        assert!(tickstep_schedules::Inspector::resume(store.path(), id).unwrap());
        h.engine.wait_for_writes().unwrap();
        // The engine polls the notes once per engine tick interval (docs/schedules.md §11.11).
        h.after(0.02);
        let info = h.info(id);
        assert!(info.pause.is_none());
        assert_eq!(info.paused_missed, 3, "points 10, 20, 30 passed while paused");
        h.after(8.98);
        assert_eq!(h.fired(), 2);
        assert!(approx(h.nominal(1), t0 + 40.0));
        h.finish_all();
        let ops_now = h.now();
        let wall = h.clock.unix_nanos();
        // Backfill by the system clock: the manual clock's range lies in the past of it.
        let n = tickstep_schedules::Inspector::backfill(store.path(), id, t0 + 5.0, t0 + 25.0).unwrap();
        assert_eq!(n, 2, "points 10 and 20");
        let bad = tickstep_schedules::Inspector::backfill(store.path(), id, t0 + 5.0, t0 + 25.0).unwrap_err();
        assert!(bad.to_string().contains("still under way"), "{bad}");
        let h = {
            drop(h);
            // A restart between the note and the engine's poll: the row carries it.
            Host::open(store.path(), ManualClock::starting_at_unix_nanos(wall + 1_000_000_000))
        };
        for _ in 0..4 {
            h.tick();
            h.finish_all();
        }
        let got: Vec<f64> = nominals(&h).iter().map(|n| (n - t0).round()).collect();
        assert_eq!(got, vec![10.0, 20.0], "each once, after the restart");
        assert!(ops_now > t0);
        let unknown = tickstep_schedules::Inspector::pause(store.path(), ScheduleId::from_raw(99_999), "").unwrap_err();
        assert_eq!(unknown.code(), "E_INVARG");
        let bad_note = tickstep_schedules::Inspector::pause(store.path(), id, "bell\u{7}").unwrap_err();
        assert!(bad_note.to_string().contains("control characters"), "{bad_note}");
    }
}

on_both_stores! {
    /// docs/schedules.md §9.4, §9.13: the engine's `schedule_info` and the store's row, read by
    /// an `Inspector`, say the same `next_run` and the same status at every step — active,
    /// running, failing, paused by the engine, paused by the store's operator.
    fn the_engine_and_the_inspector_agree_on_next_run_and_status(store) {
        use tickstep_schedules::{Inspector, ScheduleStatus};
        let h = Host::on(store);
        let id = h.every(10.0, Options::new());
        let agree = |expected: ScheduleStatus| {
            h.engine.flush().unwrap();
            let info = h.info(id);
            let stored = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
            let stored_next = stored.next_due_unix_nanos().map_or(0.0, |ns| ns as f64 / 1e9);
            assert_eq!((info.status(), stored.status()), (expected, expected));
            assert_eq!(info.to_value().get("status"), Some(&Value::from(expected.as_str())));
            assert_eq!(info.next_run, stored_next, "{expected}");
            info.next_run
        };
        assert!(agree(ScheduleStatus::Active) > h.now());
        h.after(10.0);
        assert!(agree(ScheduleStatus::Running) > h.now(), "the next point stays armed");
        h.fault(h.last_run());
        agree(ScheduleStatus::Failing);
        assert!(h.engine.pause(h.prog, id, "deploy").unwrap());
        assert_eq!(agree(ScheduleStatus::Paused), 0.0, "nothing is due while paused");
        h.after(30.0);
        assert_eq!(agree(ScheduleStatus::Paused), 0.0, "not a past deadline either");
        assert!(h.engine.resume(h.prog, id).unwrap());
        assert!(agree(ScheduleStatus::Failing) > h.now());
        // Paused by the store's operator, outside the engine: the row says so before the
        // engine has read the note, and the engine agrees once it has.
        assert!(Inspector::pause(store.path(), id, "from the shell").unwrap());
        let stored = Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
        assert_eq!((stored.status(), stored.next_due_unix_nanos()), (ScheduleStatus::Paused, None));
        h.engine.wait_for_writes().unwrap();
        h.after(0.02);
        assert_eq!(agree(ScheduleStatus::Paused), 0.0);
    }
}

#[test]
fn sqlite_only_an_action_the_engine_overwrote_before_reading_its_note_is_applied_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let h = Host::open(&path, ManualClock::new());
    let id = h.every(10.0, Options::new());
    h.after(9.995); // polls the notes now: the next poll is 10 ms of engine time away
    assert!(tickstep_schedules::Inspector::pause(&path, id, "overwritten").unwrap());
    h.after(0.005); // fires, writing the row's state from memory, before the next poll
    assert_eq!(h.fired(), 1);
    assert!(
        h.info(id).pause.is_none(),
        "the engine has not read the note yet"
    );
    h.finish_all();
    let wall = h.clock.unix_nanos();
    drop(h); // a clean shutdown writes the engine's view again
    let h = Host::open(
        &path,
        ManualClock::starting_at_unix_nanos(wall + 1_000_000_000),
    );
    let pause = h.info(id).pause.expect("the note is applied at open");
    assert_eq!(pause.note, "overwritten");
    h.after(30.0);
    assert_eq!(h.fired(), 0);
    // Applied once: another open does not apply it again (nor resume it).
    h.engine.resume(h.prog, id).unwrap();
    let wall = h.clock.unix_nanos();
    drop(h);
    let h = Host::open(&path, ManualClock::starting_at_unix_nanos(wall));
    assert!(h.info(id).pause.is_none(), "the note was applied once");
}

#[test]
fn sqlite_only_an_operator_action_beside_a_writer_waits_for_it_instead_of_failing() {
    // docs/schedules.md §11.46: the action reads the row and then writes; it takes the write
    // lock first, so another writer's commit (an engine's write behind the tick) makes it wait,
    // never fail with "database is locked".
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let h = Host::open(&path, ManualClock::new());
    let id = h.every(10.0, Options::new());
    h.engine.wait_for_writes().unwrap();
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer
        .execute_batch("BEGIN IMMEDIATE; UPDATE schedules SET state = state;")
        .unwrap();
    let at = path.clone();
    let acting = std::thread::spawn(move || {
        tickstep_schedules::Inspector::pause(&at, id, "beside a writer")
    });
    // Time for the action to reach the lock the writer holds; were it later, it would meet no
    // writer at all, and pass either way.
    std::thread::sleep(std::time::Duration::from_millis(300));
    writer.execute_batch("COMMIT").unwrap();
    let paused = acting.join().unwrap();
    assert!(
        paused.as_ref().is_ok_and(|&changed| changed),
        "the pause waited for the writer: {paused:?}"
    );
    h.engine.wait_for_writes().unwrap();
    h.after(0.02);
    assert_eq!(h.info(id).pause.unwrap().note, "beside a writer");
}

on_both_stores! {
    fn an_operator_action_is_judged_against_the_notes_an_engine_wrote_over(store) {
        // docs/schedules.md §9.14: an engine that has not read an operator's note yet may write
        // the row over with its own operator state; the note still stands (the engine applies it
        // when it reads it), so the next action from outside sees it.
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new());
        h.after(30.0);
        h.finish_all();
        h.engine.flush().unwrap();
        let n = tickstep_schedules::Inspector::backfill(store.path(), id, t0 + 5.0, t0 + 25.0).unwrap();
        assert_eq!(n, 2);
        // What an engine's cadence update written before it read the note leaves in the row.
        store.execute(&format!("UPDATE schedules SET ops = NULL WHERE id = {}", id.get()));
        let again = tickstep_schedules::Inspector::backfill(store.path(), id, t0 + 5.0, t0 + 25.0)
            .unwrap_err();
        assert!(again.to_string().contains("still under way"), "{again}");
        // An action that is accepted writes the row with the pending note's state laid in.
        assert!(tickstep_schedules::Inspector::pause(store.path(), id, "after the backfill").unwrap());
        let stored = tickstep_schedules::Inspector::open(store.path()).unwrap().get(id).unwrap().unwrap();
        assert!(stored.pause.is_some() && stored.backfill_unix_nanos.is_some(), "{stored:?}");
    }
}
