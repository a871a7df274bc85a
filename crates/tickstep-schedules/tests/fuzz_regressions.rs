//! Inputs the fuzzers (`fuzz/`, README "Fuzzing") found, kept as tests so they stay fixed.
//!
//! `store_row`: a text column of a stored schedule (`verb`, `catchup`, `overlap`) holding a blob
//! or text that is not UTF-8 — the table's declared types allow both — was refused with a bare
//! "Invalid type" (or "invalid utf-8 …"), naming neither the column nor the row's field, against
//! the promise that a corrupt value is named in the error. The JSON columns (`args`, `state`,
//! `last_fault`, `running`) had the same gap for text that is not UTF-8 until both stores'
//! decoders became one (`store/decode.rs`), which reads every text column the same way.

use rusqlite::Connection;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::testkit::{TestRunner, TestWorld};
use tickstep_schedules::{Config, Error, Inspector, Options, ScheduleId, Schedules};

/// A store holding one recurring schedule; its id as the store keeps it.
fn store_with_one_schedule(path: &std::path::Path) -> ScheduleId {
    let world = TestWorld::new();
    let wizard = world.add_wizard();
    world.add_verb(wizard, "tick");
    let engine = Schedules::open(
        path,
        ManualClock::new(),
        world,
        TestRunner::new(),
        Config::default(),
    )
    .unwrap();
    let mut txn = engine.begin(wizard);
    let id = txn
        .schedule_every(wizard, "tick", 60.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    id
}

/// Every way the store refuses the file, as text.
fn refusals(path: &std::path::Path, id: ScheduleId) -> Vec<String> {
    let inspector = Inspector::open(path).unwrap();
    let listed = inspector.list().unwrap_err();
    let got = inspector.get(id).unwrap_err();
    let opened = Schedules::open(
        path,
        ManualClock::new(),
        TestWorld::new(),
        TestRunner::new(),
        Config::default(),
    )
    .err()
    .expect("the engine refuses the row too");
    [listed, got, opened]
        .into_iter()
        .map(|e| {
            assert!(matches!(e, Error::Store { .. }), "{e:?}");
            // The message with its cause: the cause is the error's source (docs/README.md).
            tickstep_kernel::ErrorChain(&e).to_string()
        })
        .collect()
}

#[test]
fn a_text_column_holding_a_blob_or_bad_utf8_is_refused_naming_the_column() {
    for column in [
        "verb",
        "catchup",
        "overlap",
        "args",
        "state",
        "last_fault",
        "running",
    ] {
        for value in ["X'00ff'", "CAST(X'ff' AS TEXT)"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.db");
            let id = store_with_one_schedule(&path);
            Connection::open(&path)
                .unwrap()
                .execute(&format!("UPDATE schedules SET {column} = {value}"), [])
                .unwrap();
            for message in refusals(&path, id) {
                assert!(message.contains(column), "{column} = {value}: {message}");
            }
        }
    }
}

/// `value_json`: `serde_json`'s default float parser may land one unit in the last place away, so
/// a float in `state` or `args` came back from the store a different number
/// (3.131513062514021e-294 read as 3.1315130625140214e-294). The workspace enables `serde_json`'s
/// `float_roundtrip`.
#[test]
fn a_stored_float_reads_back_bit_for_bit() {
    use tickstep_schedules::Value;
    let floats = [
        3.131_513_062_514_021e-294,
        4.244_056_466_6e-314,
        2.479_337_265_619_248_7e183,
    ];
    let state = Value::List(floats.iter().copied().map(Value::Float).collect());
    let json = serde_json::to_string(&state).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&json).unwrap(),
        state,
        "{json}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let world = TestWorld::new();
    let wizard = world.add_wizard();
    world.add_verb(wizard, "tick");
    let engine = Schedules::open(
        &path,
        ManualClock::new(),
        world,
        TestRunner::new(),
        Config::default(),
    )
    .unwrap();
    let mut txn = engine.begin(wizard);
    let options = Options::new().state(state.clone());
    let id = txn
        .schedule_every(wizard, "tick", 60.0, vec![state.clone()], options)
        .unwrap();
    txn.commit().unwrap();
    let stored = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    assert_eq!(stored.state, Some(state.clone()));
    assert_eq!(stored.args, vec![state]);
}

/// `store_row`: a stored row whose counters sit at their maximum (a damaged file, or a
/// schedule that fired 2^64 times) made the next firing overflow `run_count` — a panic in a
/// checked build. Counters loaded from the store now saturate.
#[test]
fn counters_at_their_maximum_saturate_when_the_schedule_fires() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let id = store_with_one_schedule(&path);
    Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE schedules SET run_count = -1, fault_count = -1, missed_count = -1, \
             overlap_count = -1, consecutive_faults = 4294967295",
            [],
        )
        .unwrap();
    let clock = ManualClock::new();
    // The same world as the one that created it, so the verb resolves and the firing starts.
    let world = TestWorld::new();
    let wizard = world.add_wizard();
    world.add_verb(wizard, "tick");
    let engine = Schedules::open(
        &path,
        clock.clone(),
        world,
        TestRunner::new(),
        Config::default(),
    )
    .unwrap();
    for _ in 0..3 {
        clock.advance(Duration::from_secs(61));
        engine.tick().unwrap();
    }
    engine.flush().unwrap();
    drop(engine);
    let stored = Inspector::open(&path).unwrap().get(id).unwrap();
    if let Some(stored) = stored {
        assert_eq!(stored.run_count, u64::MAX);
        assert_eq!(stored.missed_count, u64::MAX);
    }
}

/// `cron_parse`: an expression of control characters was quoted in its error cut at 80 bytes and
/// then escaped, so each `\u{13}` became six bytes and the message 588 bytes; then one of
/// U+FFFD (three bytes each) was cut at 80 characters, not bytes (492). A quote is now escaped
/// first and cut after, counting bytes (docs/schedules.md §12.3).
#[test]
fn a_calendar_error_quotes_at_most_80_escaped_bytes() {
    use tickstep_schedules::{Calendar, DstPolicy};
    let controls = format!(",,{}", "\u{13}".repeat(200));
    for (expr, zone) in [
        (controls.as_str(), "UTC"),
        ("@daily", controls.as_str()),
        (&*format!("0 0 * * {controls}"), "UTC"),
        (&*format!("{} * * * * *", "\u{fffd}".repeat(60)), "UTC"),
    ] {
        let message = Calendar::new(expr, zone, DstPolicy::default())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("... (") && message.len() < 300,
            "{message}"
        );
    }
}
