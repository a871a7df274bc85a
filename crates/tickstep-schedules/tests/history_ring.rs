//! The firing history's ring as each store keeps it (docs/schedules.md §9.11, §13.54): exactly
//! the last twenty across a clean restart and across a kill, on both stores, and the migration that
//! brings a store's existing history rows to its new layout (`PostgreSQL`: into the rows' rings;
//! `SQLite`: into the slot-first table).
#![allow(clippy::float_cmp)] // virtual time is exact: these values are equal, not close

mod common;

use std::fmt::Write as _;

use common::Host;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{FiringRecord, HISTORY_KEPT, Inspector, Options, Outcome, Value};

/// Fires schedule `id` (every 10 s) `n` times, each ending half a second after it starts; every
/// seventh is killed (a fault). Then ticks, which hands the last outcome to the store (outcomes
/// are written behind the tick, docs/schedules.md §11.35), and waits until the store holds all
/// of it.
fn fire(h: &Host, n: u32) {
    for i in 1..=n {
        h.after(9.5);
        h.advance(0.5);
        let run = h.last_run();
        if i % 7 == 0 {
            h.runner.finish(&h.engine, run, Outcome::Killed);
        } else {
            h.finish(run, Value::Int(i64::from(i)));
        }
    }
    h.tick();
    h.engine.wait_for_writes().unwrap();
}

/// The nominal points of `history`, in seconds after `t0`.
fn nominals(history: &[FiringRecord], t0: f64) -> Vec<f64> {
    history.iter().map(|r| r.nominal - t0).collect()
}

/// A host on `store` after the engine before it died at `unix_nanos` (nothing dropped).
fn reopen(store: &Store, unix_nanos: u64) -> Host {
    if store.kind() == Kind::Postgres {
        // The dead engine's node holds its rows until its lease runs out (docs/schedules.md
        // §11.26): end it.
        store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
    }
    Host::open(
        store.path(),
        ManualClock::starting_at_unix_nanos(unix_nanos),
    )
}

on_both_stores! {
    fn the_ring_keeps_exactly_the_last_twenty_across_a_restart_and_a_kill(store) {
        let h = Host::on(store);
        let t0 = h.now();
        let id = h.every(10.0, Options::new().max_faults(0));
        h.after(0.5); // 0.5 s in, so each point is 10 s after the last one's start
        fire(&h, 27);
        let before = h.info(id).history;
        let expected: Vec<f64> = (8..=27).rev().map(|n| f64::from(n) * 10.0).collect();
        assert_eq!(nominals(&before, t0), expected, "the last twenty, newest first");
        assert_eq!(before.iter().filter(|r| r.fault.is_some()).count(), 2, "14 and 21");

        // A clean restart keeps them all.
        let wall = h.clock.unix_nanos();
        drop(h);
        let h = reopen(store, wall);
        assert_eq!(h.info(id).history, before, "kept across a restart");

        // Five more firings, then the process dies: nothing is dropped, nothing flushed beyond
        // what the store already holds.
        fire(&h, 5);
        let written = h.info(id).history;
        assert_eq!(written.len() as u64, HISTORY_KEPT);
        assert_eq!(written[5..], before[..15], "five new records replaced the five oldest");
        let wall = h.clock.unix_nanos();
        std::mem::forget(h);
        let h = reopen(store, wall);
        let after = h.info(id).history;
        assert_eq!(after, written, "kept across a kill");

        // The ring goes on at the slot after the last: one more firing replaces the oldest.
        fire(&h, 1);
        let next = h.info(id).history;
        assert_eq!(next.len() as u64, HISTORY_KEPT);
        assert_eq!(next[1..], after[..19]);
        assert_eq!(Inspector::open(store.path()).unwrap().history(id).unwrap(), next);
    }
}

/// Rewrites the store behind `store` as the schema before the history ring (`SQLite` 7, `PostgreSQL` 9)
/// held it: the history table keyed schedule first, a row per record, and on `PostgreSQL` no
/// `history` column. The records are those of firings 3 to 22 of schedule `id` (twenty, the ring
/// wrapped once), nominal, start and end in nanoseconds, every fifth a fault whose value is the
/// row's `last_fault`; the row counts the 22 runs, as the engine that wrote them would have, for
/// record `n` is in slot `n mod 20` of the runs settled (docs/schedules.md §9.11).
fn back_to_a_history_table(store: &Store, id: u64) {
    let (table, schedules) = match store.kind() {
        Kind::Postgres => ("tickstep_firing_history", "tickstep_schedules"),
        _ => ("firing_history", "schedules"),
    };
    let mut sql = match store.kind() {
        Kind::Postgres => {
            "ALTER TABLE tickstep_schedules DROP COLUMN history, DROP COLUMN cron_expr, \
             DROP COLUMN cron_zone, DROP COLUMN cron_dst, DROP COLUMN namespace, \
             DROP COLUMN policies; \
             ALTER TABLE tickstep_nodes DROP COLUMN namespace; \
             DELETE FROM tickstep_firing_history; DROP TABLE tickstep_cluster_history; \
             DELETE FROM tickstep_schema_migrations WHERE version >= 10;"
                .to_string()
        }
        _ => "DROP TRIGGER schedules_history_goes_with_the_row; DROP TABLE firing_history; \
             CREATE TABLE firing_history (schedule_id INTEGER NOT NULL, slot INTEGER NOT NULL, \
             started_at INTEGER NOT NULL, ended_at INTEGER NOT NULL, nominal INTEGER NOT NULL, \
             outcome TEXT NOT NULL CHECK (outcome IN ('returned', 'fault')), fault TEXT, \
             PRIMARY KEY (schedule_id, slot)) WITHOUT ROWID; \
             CREATE TRIGGER schedules_history_goes_with_the_row AFTER DELETE ON schedules \
             BEGIN DELETE FROM firing_history WHERE schedule_id = old.id; END; \
             DELETE FROM schema_migrations WHERE version >= 8;"
            .to_string(),
    };
    write!(
        sql,
        "UPDATE {schedules} SET run_count = 22 WHERE id = {id};"
    )
    .unwrap();
    let base: i64 = 1_800_000_000_000_000_000;
    for n in 3_i64..=22 {
        let nominal = base + n * 10_000_000_000;
        let (outcome, fault) = if n % 5 == 0 {
            (
                "fault",
                format!("(SELECT last_fault FROM {schedules} WHERE id = {id})"),
            )
        } else {
            ("returned", "NULL".to_string())
        };
        let (slot, started, ended) = (n % 20, nominal + 1_000, nominal + 500_000_000);
        write!(
            sql,
            "INSERT INTO {table} (schedule_id, slot, started_at, ended_at, nominal, outcome, \
             fault) VALUES ({id}, {slot}, {started}, {ended}, {nominal}, '{outcome}', {fault});"
        )
        .unwrap();
    }
    // `Store::execute` maps SQLite's names; these are already the store's own.
    match store.kind() {
        Kind::Postgres => {
            postgres::Client::connect(&store.path().to_string_lossy(), postgres::NoTls)
                .unwrap()
                .batch_execute(&sql)
                .unwrap();
        }
        _ => rusqlite::Connection::open(store.path())
            .unwrap()
            .execute_batch(&sql)
            .unwrap(),
    }
}

on_both_stores! {
    fn the_migration_moves_every_kept_record_into_the_ring(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new().max_faults(0));
        let quiet = h.every(10.0, Options::new());
        h.after(10.0);
        // Both fire once; the first faults, so its row's `last_fault` holds a real fault.
        for (run, firing) in h.started() {
            if firing.schedule == id {
                h.runner.finish(&h.engine, run, Outcome::Killed);
            }
        }
        h.engine.wait_for_writes().unwrap();
        let wall = h.clock.unix_nanos();
        drop(h);
        back_to_a_history_table(store, id.get());
        // The older schema as the operator's view reads it, without migrating.
        let before = Inspector::open(store.path()).unwrap().history(id).unwrap();
        assert_eq!(before.len() as u64, HISTORY_KEPT);
        assert_eq!(before.iter().filter(|r| r.fault.is_some()).count(), 4, "5, 10, 15, 20");
        assert!(before[0].nominal > before[19].nominal, "newest first");

        let h = reopen(store, wall);
        assert_eq!(h.info(id).history, before, "every record moved, faults included");
        assert!(h.info(quiet).history.is_empty(), "a schedule without records has none");
        if store.kind() == Kind::Postgres {
            // The ring moved into the row; the table keeps the faulted records, for their faults.
            let count = store.count("SELECT COUNT(*) FROM tickstep_firing_history");
            assert_eq!(count, 4, "the table keeps the faulted records only");
            let ring = format!("SELECT length(history) FROM schedules WHERE id = {}", id.get());
            assert_eq!(store.count(&ring), 500);
        } else {
            // The rows moved to the slot-first table, all of them, and its trigger still works.
            assert_eq!(store.count("SELECT COUNT(*) FROM firing_history"), 20);
            let key = store.texts(
                "SELECT 0, group_concat(name, ',') FROM pragma_index_info(\
                 (SELECT name FROM pragma_index_list('firing_history') WHERE origin = 'pk'))",
            );
            assert_eq!(key[0].1, "slot,schedule_id", "keyed slot first");
            let mut txn = h.engine.begin(h.prog);
            txn.schedule_stop(id).unwrap();
            txn.commit().unwrap();
            assert_eq!(store.count("SELECT COUNT(*) FROM firing_history"), 0, "gone with the row");
        }
    }
}
