//! A due firing starts once its cadence update is durable (docs/schedules.md §11.42), on both
//! stores. On real time the tick hands the update to the store's writer and a later tick starts
//! the firing; under a virtual clock the tick waits for its own write and starts it at once.
//! A start still waiting when the engine stops is started again after a clean shutdown and
//! settled after a crash (interrupted, or taken over on `PostgreSQL`), never fired twice.

mod common;

use common::stores::Kind;
use common::{Host, RealTime};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{FaultKind, Options};

/// A host on `store` opened at `unix_nanos`, on real time, after a crash of the one before.
fn reopen_after_crash(store: &common::stores::Store, unix_nanos: u64) -> Host {
    if store.kind() == Kind::Postgres {
        // The dead engine's node holds its rows until its lease runs out (docs/schedules.md §11.26): end it.
        store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
    }
    let clock = ManualClock::starting_at_unix_nanos(unix_nanos);
    Host::open_with(store.path(), clock.clone(), RealTime(clock))
}

on_both_stores! {
fn on_real_time_a_due_firing_waits_for_its_write_and_the_tick_does_not(store) {
    let h = Host::on_real_time(store);
    let id = h.every(1.0, Options::new());
    let report = h.after(1.0);
    assert_eq!((report.started, report.starts_waiting), (0, 1));
    assert!(!report.waited_for_store);
    assert_eq!(h.info(id).run_count, 1, "the cadence moved as the firing was planned");
    assert_eq!(h.info(id).running_task, None, "no run yet");
    let tick_ns = u64::try_from(common::config().tick.as_nanos()).unwrap();
    assert_eq!(
        h.engine.next_deadline_unix_nanos(),
        Some(h.clock.unix_nanos() + tick_ns),
        "the host is asked to tick again one engine tick later"
    );
    h.engine.wait_for_writes().unwrap();
    // What is on disk already serves the point, before anything started.
    assert_eq!(store.count("SELECT run_count FROM schedules"), 1);
    assert_eq!(h.fired(), 0);
    let report = h.tick();
    assert_eq!((report.started, report.starts_waiting), (1, 0));
    assert_eq!(h.started()[0].1.nominal_unix_nanos, h.clock.unix_nanos());
    assert_eq!(h.info(id).running_task, Some(h.last_run()));
}
}

on_both_stores! {
fn under_a_virtual_clock_the_tick_waits_for_its_write_and_starts_at_once(store) {
    let h = Host::on(store);
    h.every(1.0, Options::new());
    let report = h.after(1.0);
    assert_eq!((report.started, report.starts_waiting), (1, 0));
    assert!(report.waited_for_store, "virtual time treats the disk as instant");
}
}

on_every_store! {
fn a_schedule_that_does_not_persist_starts_in_the_tick_that_plans_it(store) {
    let h = match store.kind() {
        Kind::Memory => Host::new(),
        _ => Host::on_real_time(store),
    };
    h.every(1.0, Options::new().persist(false));
    let report = h.after(1.0);
    assert_eq!((report.started, report.starts_waiting), (1, 0));
    assert!(!report.waited_for_store, "nothing to write");
}
}

on_both_stores! {
fn a_waiting_start_whose_schedule_is_stopped_never_starts(store) {
    let h = Host::on_real_time(store);
    let id = h.every(1.0, Options::new());
    assert_eq!(h.after(1.0).starts_waiting, 1);
    let mut txn = h.engine.begin(h.prog);
    assert!(txn.schedule_stop(id).unwrap());
    txn.commit().unwrap();
    h.engine.wait_for_writes().unwrap();
    let report = h.tick();
    assert_eq!((report.started, report.starts_waiting), (0, 0));
    assert_eq!(h.fired(), 0);
}
}

on_both_stores! {
fn a_start_still_waiting_at_a_clean_shutdown_starts_after_the_next_open_once(store) {
    let h = Host::on_real_time(store);
    let id = h.every(1.0, Options::new());
    h.advance(1.0);
    let point = h.clock.unix_nanos();
    assert_eq!(h.tick().starts_waiting, 1);
    let h2 = {
        let clock = h.clock.clone();
        drop(h); // a clean shutdown: the start never happened, and the store is told so
        Host::open_with(store.path(), clock.clone(), RealTime(clock))
    };
    assert!(h2.engine.interrupted().is_empty());
    // It starts once the row no longer saying "never started" is written, so a crash after
    // its start cannot start it again (docs/schedules.md §11.42).
    assert_eq!(h2.tick().starts_waiting, 1, "it waits for its write again");
    h2.engine.wait_for_writes().unwrap();
    let report = h2.tick();
    assert_eq!(report.started, 1, "it starts at the tick after the write");
    assert_eq!(h2.started()[0].1.nominal_unix_nanos, point);
    let info = h2.info(id);
    assert_eq!((info.run_count, info.fault_count), (1, 0), "counted once, no fault");
    h2.finish_all();
    h2.advance(1.0);
    assert_eq!(h2.tick().starts_waiting, 1, "and the cadence goes on");
}
}

on_both_stores! {
fn a_start_waiting_at_a_crash_is_handed_back_at_open_and_its_point_never_fires_again(store) {
    let h = Host::on_real_time(store);
    let id = h.every(1.0, Options::new());
    h.advance(1.0);
    let point = h.clock.unix_nanos();
    assert_eq!(h.tick().starts_waiting, 1);
    h.engine.wait_for_writes().unwrap();
    // The process dies here: whether the firing started is unknown (it may have, right after
    // its update was written). Nothing of the engine is dropped, as in a crash.
    let now = h.clock.unix_nanos();
    std::mem::forget(h);
    let h2 = reopen_after_crash(store, now);
    // On `PostgreSQL` the reopened engine is a new node that claims the dead one's rows, so the
    // firing is settled as taken over (docs/schedules.md §11.39); SQLite has no other node, so
    // the run comes back under its id for the host to reattach or abandon (docs/schedules.md §11.5).
    let settled = if store.kind() == Kind::Postgres {
        assert!(h2.engine.interrupted().is_empty(), "another node's run");
        FaultKind::TakenOver
    } else {
        let back = h2.engine.interrupted();
        assert_eq!(back.len(), 1, "the run is handed back: {back:?}");
        assert_eq!((back[0].schedule, back[0].nominal_unix_nanos), (id, point));
        assert!(h2.engine.abandon(back[0].run), "this host kept no task");
        FaultKind::Interrupted
    };
    let info = h2.info(id);
    assert_eq!((info.run_count, info.fault_count), (1, 1));
    assert_eq!(info.last_fault.as_ref().map(|f| f.kind), Some(settled));
    let report = h2.tick();
    assert_eq!((report.started, report.starts_waiting), (0, 0), "the point is not fired again");
    h2.advance(1.0);
    assert_eq!(h2.tick().starts_waiting, 1);
    h2.engine.wait_for_writes().unwrap();
    h2.tick();
    assert_eq!(h2.started()[0].1.nominal_unix_nanos, point + 1_000_000_000);
}
}
