//! The `PostgreSQL` store's batched writes (docs/schedules.md §11.52, §11.53): a transaction's
//! creations go in statements of thousands of rows, all or nothing, and the history records of
//! firings that settle without a cadence update to ride in are spliced a statement per round,
//! not one per record.

mod common;

use common::Host;
use common::stores::Store;
use tickstep_schedules::{Error, Inspector, Options, Overlap, ScheduleId, Value};

/// More than two statements' worth of rows (4,096 each).
const MANY: i64 = 10_000;

#[test]
fn postgres_only_a_transaction_of_ten_thousand_creations_lands_whole() {
    let url = pg_or_skip!("batched_insert_whole");
    let store = Store::postgres(url);
    let h = Host::on(&store);
    let t0 = h.now();
    let mut txn = h.engine.begin(h.prog);
    let mut ids = Vec::new();
    for i in 0..MANY {
        // Every hundredth row carries what most rows leave NULL, so each column's array holds
        // both values and NULLs.
        let options = if i % 100 == 0 {
            Options::new().key(format!("job{i}")).state(Value::Int(i))
        } else {
            Options::new()
        };
        let args = if i % 100 == 0 {
            vec![Value::Int(i), Value::Str("x".into())]
        } else {
            vec![]
        };
        let due = t0 + 60.0 + i as f64 / 1_000.0;
        ids.push(
            txn.schedule_at(h.room, "tick", due, args, options)
                .expect("create"),
        );
    }
    txn.commit().expect("commit");
    assert_eq!(i64::try_from(h.engine.live_count()), Ok(MANY));
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schedules WHERE fence = 1"),
        MANY,
        "every row is written, held by this node from its creation with fence 1"
    );
    assert_eq!(
        store.count("SELECT COUNT(DISTINCT owner_node) FROM schedules"),
        1
    );
    // What the rows say is what the engine holds: a second engine reading them (the first
    // hands them back as it closes) sees the same schedules.
    let before: Vec<_> = [0, 4_095, 4_096, 4_100, 9_999]
        .iter()
        .map(|&i| h.info(ids[i]))
        .collect();
    drop(h);
    let again = Host::on(&store);
    assert_eq!(i64::try_from(again.engine.live_count()), Ok(MANY));
    for (i, info) in [0, 4_095, 4_096, 4_100, 9_999].iter().zip(&before) {
        let read = again.info(ids[*i]);
        assert_eq!(
            (&read.key, &read.args, &read.state, read.next_run),
            (&info.key, &info.args, &info.state, info.next_run),
            "row {i}"
        );
    }
    assert_eq!(
        again
            .engine
            .begin(again.prog)
            .schedule_named("job4100", None)
            .unwrap(),
        Some(ids[4_100])
    );
}

#[test]
fn postgres_only_a_key_another_node_took_refuses_the_whole_transaction_naming_the_key() {
    let url = pg_or_skip!("batched_insert_refused");
    let store = Store::postgres(url);
    let a = Host::on(&store);
    let b = Host::on(&store);
    let due = a.now() + 60.0;
    let mut txn = a.engine.begin(a.prog);
    for i in 0..MANY {
        // The keyed row is in the second statement: the first has already inserted its rows
        // when the unique index refuses it.
        let options = if i == 5_000 {
            Options::new().key("nightly")
        } else {
            Options::new()
        };
        txn.schedule_at(a.room, "tick", due, vec![], options)
            .expect("create");
    }
    // Another node commits the key between this transaction's creation and its commit.
    let mut other = b.engine.begin(b.prog);
    let theirs = other
        .schedule_at(b.room, "tick", due, vec![], Options::new().key("nightly"))
        .unwrap();
    other.commit().unwrap();
    let err = txn.commit().unwrap_err();
    assert!(
        matches!(&err, Error::KeyTaken { key, existing, .. } if key == "nightly" && *existing == theirs),
        "{err}"
    );
    assert_eq!(err.code(), "E_INVARG");
    assert!(err.to_string().contains("\"nightly\""), "{err}");
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schedules"),
        1,
        "nothing of the refused transaction is stored: only the other node's row"
    );
    assert_eq!(a.engine.live_count(), 0, "nor applied in memory");
    // Nothing was lost either: the same creations without the taken key commit whole.
    let mut txn = a.engine.begin(a.prog);
    for _ in 0..MANY {
        txn.schedule_at(a.room, "tick", due, vec![], Options::new())
            .unwrap();
    }
    txn.commit().unwrap();
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), MANY + 1);
}

#[test]
fn postgres_only_firings_settled_together_keep_every_record_in_order() {
    let url = pg_or_skip!("batched_history_rounds");
    let store = Store::postgres(url);
    let h = Host::on(&store);
    let t0 = h.now();
    // Three firings of one schedule run at once, then settle before one commit: one record
    // rides in the schedule's cadence update, the two others are spliced in two rounds. Five
    // one-shots settle in the same commit: their rows retire and no record is written for them.
    let id = h.every(10.0, Options::new().overlap(Overlap::Concurrent));
    let shots: Vec<ScheduleId> = (0..5).map(|_| h.at(25.0, Options::new())).collect();
    for _ in 0..3 {
        h.after(10.0);
    }
    let runs: Vec<_> = h.started().into_iter().map(|(run, _)| run).collect();
    assert_eq!(
        runs.len(),
        8,
        "three firings of the schedule, five one-shots"
    );
    for run in runs {
        assert!(h.finish(run, Value::Int(0)));
    }
    h.tick();
    h.engine.flush().unwrap();
    let history = h.info(id).history;
    let nominals: Vec<f64> = history.iter().map(|r| r.nominal - t0).collect();
    assert_eq!(nominals, [30.0, 20.0, 10.0], "newest first, none lost");
    assert_eq!(
        Inspector::open(store.path()).unwrap().history(id).unwrap(),
        history,
        "the database holds the same records"
    );
    for shot in shots {
        assert!(!h.valid(shot), "the one-shots retired");
    }
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 1);
}
