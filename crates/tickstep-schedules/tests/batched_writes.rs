//! The `PostgreSQL` store's batched writes (docs/schedules.md §11.50, §11.51): a transaction's
//! creations go in statements of thousands of rows, all or nothing, and the history records of
//! firings that settle without a cadence update to ride in are spliced a statement per round,
//! not one per record.

mod common;

use common::Host;
use common::stores::Store;
use tickstep_schedules::{Error, Options, Value};

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
