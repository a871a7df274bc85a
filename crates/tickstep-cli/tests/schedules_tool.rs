//! The real `tickstep schedules` operator tool on a store, run as an operator would: list, info,
//! stop, next, history, pause, resume, trigger, backfill and running, on a store alone and beside
//! a running demo (docs/runtime.md §7).

mod run;

use run::{stderr, stdout, tickstep};

#[test]
fn schedules_list_json_parses_and_info_and_stop_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ops.db");
    let db = db.to_str().unwrap();
    let demo = tickstep(&["demo", "--virtual", "--duration", "3s", "--db", db]);
    assert!(demo.status.success(), "{}", stderr(&demo));

    let list = tickstep(&["schedules", "--db", db, "list", "--json"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let all: serde_json::Value = serde_json::from_str(&stdout(&list)).expect("list --json is JSON");
    let all = all.as_array().unwrap();
    let bell = all
        .iter()
        .find(|s| s["verb"] == "ring")
        .expect("the bell is saved");
    assert_eq!(bell["kind"], "every");
    assert_eq!(bell["interval"], 2.0);
    assert!(bell["run_count"].as_u64().unwrap() >= 1);
    let id = bell["id"].as_u64().unwrap().to_string();

    let table = tickstep(&["schedules", "--db", db, "list"]);
    assert!(stdout(&table).starts_with("ID  KEY"), "{}", stdout(&table));
    assert!(stdout(&table).contains("#10:ring"));
    assert!(stdout(&table).contains("  bell  "), "{}", stdout(&table));
    assert_eq!(bell["key"], "bell");

    // Lookup by key (docs/schedules.md §5.17).
    let found = tickstep(&["schedules", "--db", db, "find", "bell", "--json"]);
    assert!(found.status.success(), "{}", stderr(&found));
    let found: serde_json::Value = serde_json::from_str(&stdout(&found)).unwrap();
    assert_eq!(found.as_array().map(Vec::len), Some(1));
    assert_eq!(found[0]["id"], bell["id"]);
    let table = tickstep(&["schedules", "--db", db, "find", "bell"]);
    assert!(
        stdout(&table)
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains("bell")),
        "{}",
        stdout(&table)
    );
    let none = tickstep(&["schedules", "--db", db, "find", "nothing"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(
        stderr(&none).contains("no schedule named \"nothing\""),
        "{}",
        stderr(&none)
    );
    let bad = tickstep(&["schedules", "--db", db, "find", "two words"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("E_INVARG") && stderr(&bad).contains("docs/schedules.md §5.12"),
        "{}",
        stderr(&bad)
    );

    let info = tickstep(&["schedules", "--db", db, "info", &id, "--json"]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(info["verb"], "ring");

    let stop = tickstep(&["schedules", "--db", db, "stop", &id, "--json"]);
    assert_eq!(
        stdout(&stop).trim(),
        format!("{{\"id\":{id},\"stopped\":true}}")
    );
    let again = tickstep(&["schedules", "--db", db, "stop", &id]);
    assert!(again.status.success());
    assert!(stdout(&again).contains("nothing to stop"));
    let gone = tickstep(&["schedules", "--db", db, "info", &id]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(stderr(&gone).contains(&format!("no schedule {id}")));

    // The next demo run no longer finds the stopped bell.
    let rerun = tickstep(&["demo", "--virtual", "--duration", "1s", "--db", db]);
    let text = stdout(&rerun);
    assert!(
        text.contains("created schedule") && text.contains(": bell"),
        "{text}"
    );
}

#[test]
fn schedules_on_a_missing_store_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nothing-here.db");
    let out = tickstep(&["schedules", "--db", db.to_str().unwrap(), "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no schedule store at"),
        "{}",
        stderr(&out)
    );
    assert!(
        !db.exists(),
        "a read-only command must not create the store"
    );
}

#[test]
fn schedules_on_a_file_that_is_not_a_store_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    std::fs::write(&db, b"shopping list").unwrap();
    let out = tickstep(&["schedules", "--db", db.to_str().unwrap(), "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not a tickstep schedule store"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn schedules_reads_and_stops_while_a_demo_runs_and_the_demo_notices() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let db = db.to_str().unwrap();
    // The real clock: the demo must really be running while the operator acts.
    let demo = run::live_demo(db);
    let list = tickstep(&["schedules", "--db", db, "list", "--json"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let all: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    let bell = all
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["verb"] == "ring")
        .expect("the running demo's bell is visible")["id"]
        .as_u64()
        .unwrap();
    let stop = tickstep(&["schedules", "--db", db, "stop", &bell.to_string()]);
    assert!(
        stdout(&stop).contains(&format!("stopped schedule {bell}")),
        "{}",
        stdout(&stop)
    );
    let text = demo.finish();
    assert!(
        text.contains(&format!("schedule {bell} was stopped by an operator")),
        "{text}"
    );
    let after = tickstep(&["schedules", "--db", db, "info", &bell.to_string()]);
    assert_eq!(
        after.status.code(),
        Some(1),
        "the demo did not resurrect it"
    );
}

/// `schedules running` shows the firings in flight as the engine last saved them (here: one an
/// async verb was still running when its runtime shut down), and says so when there is none.
#[test]
fn schedules_running_lists_the_firings_the_engine_saved_in_flight() {
    use std::time::Duration;
    use tickstep::kernel::ManualClock;
    use tickstep::schedules::{ObjId, Options, Value};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.db");
    let db = path.to_str().unwrap();
    let empty = tickstep(&["schedules", "--db", db, "running"]);
    assert!(!empty.status.success(), "no store yet");
    {
        let rt = tickstep::Runtime::builder()
            .manual_clock(ManualClock::new())
            .store_path(&path)
            .build()
            .unwrap();
        rt.async_verb("long_job", |call| async move {
            call.sleep(Duration::from_secs(3600)).await;
            Ok(Value::Int(0))
        });
        let mut txn = rt.schedules().begin(ObjId(1));
        txn.schedule_every(ObjId(4), "long_job", 10.0, vec![], Options::new())
            .unwrap();
        txn.commit().unwrap();
        rt.run_for(Duration::from_secs(11)).unwrap();
        assert_eq!(rt.running_firings().len(), 1);
        rt.shutdown().unwrap();
    }
    let out = tickstep(&["schedules", "--db", db, "running", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["target_verb"], "#4:long_job");
    let table = tickstep(&["schedules", "--db", db, "running"]);
    assert!(stdout(&table).contains("#4:long_job"), "{}", stdout(&table));
}

/// `tickstep schedules --db DB next ID --count N --json`, parsed.
fn next_json(db: &str, id: &str, count: u16) -> serde_json::Value {
    let count = count.to_string();
    let args = [
        "schedules",
        "--db",
        db,
        "next",
        id,
        "--count",
        &count,
        "--json",
    ];
    let next = tickstep(&args);
    assert!(next.status.success(), "{}", stderr(&next));
    serde_json::from_str(&stdout(&next)).unwrap()
}

#[test]
fn schedules_next_and_history_read_a_saved_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ops.db");
    let db = db.to_str().unwrap();
    let demo = tickstep(&["demo", "--virtual", "--duration", "7s", "--db", db]);
    assert!(demo.status.success(), "{}", stderr(&demo));
    let found = tickstep(&["schedules", "--db", db, "find", "bell", "--json"]);
    let found: serde_json::Value = serde_json::from_str(&stdout(&found)).unwrap();
    let bell = &found[0];
    let id = bell["id"].as_u64().unwrap().to_string();

    // The next fire times: the bell's cadence, two seconds apart, from its next run.
    let next = next_json(db, &id, 4);
    let times: Vec<f64> = next["next_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert_eq!(times.len(), 4);
    assert!(
        times.windows(2).all(|w| (w[1] - w[0] - 2.0).abs() < 1e-6),
        "{times:?}"
    );
    let table = tickstep(&["schedules", "--db", db, "next", &id]);
    assert_eq!(stdout(&table).lines().count(), 10, "{}", stdout(&table));
    // Times for people in the operator's zone, for scripts as seconds (docs/runtime.md §7.10).
    let in_zone = |zone: &str, flag: Option<&str>| {
        let mut args = vec!["schedules", "--db", db, "next", &id, "--count", "4"];
        args.extend(flag);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tickstep"))
            .args(&args)
            .env("TZ", zone)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let tokyo = in_zone("Asia/Tokyo", None);
    assert!(
        tokyo.lines().all(|l| l.contains(" JST (in ")),
        "local dates, and how far they are: {tokyo}"
    );
    let utc = in_zone("Asia/Tokyo", Some("--utc"));
    assert!(utc.lines().all(|l| l.contains(" UTC (in ")), "{utc}");
    let unix: Vec<f64> = in_zone("Asia/Tokyo", Some("--unix"))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(unix.len(), 4);
    // The same cadence points `--json` gave (a point may have passed between the two runs).
    let shift = (unix[0] - times[0]) / 2.0;
    assert!(
        shift > -1e-3
            && (shift - shift.round()).abs() < 1e-3
            && unix.windows(2).all(|w| (w[1] - w[0] - 2.0).abs() < 1e-3),
        "--unix prints the seconds --json does: {unix:?} {times:?}"
    );
    let too_many = tickstep(&["schedules", "--db", db, "next", &id, "--count", "5000"]);
    assert_eq!(
        too_many.status.code(),
        Some(2),
        "clap refuses it: {}",
        stderr(&too_many)
    );

    // The history: the bell's settled firings, newest first, as many as it ran (up to 20).
    let history = tickstep(&["schedules", "--db", db, "history", &id, "--json"]);
    assert!(history.status.success(), "{}", stderr(&history));
    let records: serde_json::Value = serde_json::from_str(&stdout(&history)).unwrap();
    let records = records.as_array().unwrap();
    assert!(!records.is_empty(), "the bell rang during the demo");
    assert!(records.len() as u64 <= bell["run_count"].as_u64().unwrap());
    let started: Vec<f64> = records
        .iter()
        .map(|r| r["started"].as_f64().unwrap())
        .collect();
    assert!(
        started.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {started:?}"
    );
    assert!(
        records
            .iter()
            .all(|r| r["outcome"] == "returned" || r["outcome"] == "fault")
    );
    let table = tickstep(&["schedules", "--db", db, "history", &id]);
    assert!(
        stdout(&table).starts_with("STARTED  TOOK  LATE  SERVED  OUTCOME  FAULT"),
        "{}",
        stdout(&table)
    );

    let missing = tickstep(&["schedules", "--db", db, "history", "999999"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no schedule 999999"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn schedules_pause_resume_trigger_and_backfill_act_on_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ops.db");
    let db = db.to_str().unwrap();
    let demo = tickstep(&["demo", "--virtual", "--duration", "3s", "--db", db]);
    assert!(demo.status.success(), "{}", stderr(&demo));
    let found = tickstep(&["schedules", "--db", db, "find", "bell", "--json"]);
    let found: serde_json::Value = serde_json::from_str(&stdout(&found)).unwrap();
    let id = found[0]["id"].as_u64().unwrap().to_string();

    let pause = tickstep(&[
        "schedules",
        "--db",
        db,
        "pause",
        &id,
        "--note",
        "quiet hours",
        "--json",
    ]);
    assert!(pause.status.success(), "{}", stderr(&pause));
    assert_eq!(
        stdout(&pause).trim(),
        format!("{{\"action\":\"pause\",\"changed\":true,\"id\":{id}}}")
    );
    let again = tickstep(&["schedules", "--db", db, "pause", &id]);
    assert!(
        stdout(&again).contains("needed nothing"),
        "{}",
        stdout(&again)
    );
    let info = tickstep(&["schedules", "--db", db, "info", &id, "--json"]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(
        (info["paused"].as_bool(), info["pause_note"].as_str()),
        (Some(true), Some("quiet hours"))
    );
    assert_eq!(info["paused_by"], -1);
    let runs_before = info["run_count"].clone();

    // The next demo run loads it paused: the bell does not ring.
    let rerun = tickstep(&["demo", "--virtual", "--duration", "3s", "--db", db]);
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    assert!(
        stdout(&rerun)
            .lines()
            .any(|l| l.contains(": bell, fired") && l.ends_with(" faults, paused")),
        "found paused, with no next run (docs/schedules.md §9.4): {}",
        stdout(&rerun)
    );
    let info = tickstep(&["schedules", "--db", db, "info", &id, "--json"]);
    let paused: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(paused["run_count"], runs_before, "no firing while paused");
    assert_eq!(paused["paused"], true);

    let resume = tickstep(&["schedules", "--db", db, "resume", &id]);
    assert!(
        stdout(&resume).contains("resume: schedule"),
        "{}",
        stdout(&resume)
    );
    let trigger = tickstep(&["schedules", "--db", db, "trigger", &id, "--json"]);
    assert!(
        stdout(&trigger).contains("\"changed\":true"),
        "{}",
        stdout(&trigger)
    );

    let bad = tickstep(&["schedules", "--db", db, "pause", &id, "--note", "bell\u{7}"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("control characters"),
        "{}",
        stderr(&bad)
    );
    let future = tickstep(&["schedules", "--db", db, "backfill", &id, "1", "9999999999"]);
    assert_eq!(future.status.code(), Some(1));
    assert!(
        stderr(&future).contains("past range"),
        "{}",
        stderr(&future)
    );
    let unknown = tickstep(&["schedules", "--db", db, "trigger", "999999"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("no such schedule"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn schedules_list_and_info_show_a_cron_schedule_with_its_spec() {
    use tickstep::kernel::clock::ManualClock;
    use tickstep::schedules::testkit::{TestRunner, TestWorld};
    use tickstep::schedules::{DstPolicy, FoldPolicy, GapPolicy, Options, Schedules};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cron.db");
    let id = {
        let world = TestWorld::new();
        let wiz = world.add_wizard();
        world.add_verb(wiz, "report");
        let engine = Schedules::open(
            &db,
            ManualClock::new(),
            world,
            TestRunner::new(),
            tickstep::schedules::Config::default(),
        )
        .unwrap();
        let mut txn = engine.begin(wiz);
        let policy = DstPolicy {
            gap: GapPolicy::Skip,
            fold: FoldPolicy::Both,
        };
        let id = txn
            .schedule_cron(
                wiz,
                "report",
                "0 3 * * MON-FRI",
                "Europe/Paris",
                vec![],
                Options::new().dst_policy(policy),
            )
            .unwrap();
        txn.commit().unwrap();
        id.get().to_string()
    };
    let db = db.to_str().unwrap();
    let table = tickstep(&["schedules", "--db", db, "list"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(text.contains("CADENCE"), "{text}");
    assert!(
        text.contains("cron  ")
            && text.contains("\"0 3 * * MON-FRI\" Europe/Paris gap=skip fold=both"),
        "{text}"
    );
    let info = tickstep(&["schedules", "--db", db, "info", &id, "--json"]);
    assert!(info.status.success(), "{}", stderr(&info));
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(info["kind"], "cron");
    assert_eq!(info["cron"], "0 3 * * MON-FRI");
    assert_eq!(info["zone"], "Europe/Paris");
    assert_eq!(
        (info["dst_gap"].as_str(), info["dst_fold"].as_str()),
        (Some("skip"), Some("both"))
    );
    // The next fire times come from the calendar: 03:00 in Paris on weekdays.
    let next = next_json(db, &id, 3);
    let times = next["next_runs"].as_array().unwrap();
    assert_eq!(times.len(), 3);
    for t in times {
        let seconds = t.as_f64().unwrap() as i64;
        let local =
            tickstep::schedules::Calendar::new("0 3 * * *", "Europe/Paris", DstPolicy::default())
                .unwrap()
                .next_after(u64::try_from(seconds - 1).unwrap() * 1_000_000_000);
        assert_eq!(
            local,
            Some(u64::try_from(seconds).unwrap() * 1_000_000_000),
            "{t} is 03:00 in Paris"
        );
    }
}
