//! The real `tickstep` binary, run as a user would.

mod run;

use std::path::Path;
use std::process::Command;

use run::{stderr, stdout, tickstep};

#[test]
fn help_is_available_on_every_command() {
    let commands: [&[&str]; 8] = [
        &["--help"],
        &["sim", "--help"],
        &["demo", "--help"],
        &["schedules", "--help"],
        &["schedules", "list", "--help"],
        &["schedules", "info", "--help"],
        &["schedules", "stop", "--help"],
        &["schedules", "running", "--help"],
    ];
    for args in commands {
        let out = tickstep(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("Usage: tickstep"), "{args:?}");
    }
}

#[test]
fn sim_prints_frames_and_overload_events() {
    let out = tickstep(&[
        "sim",
        "--frames",
        "400",
        "--load",
        "normal=50x300us",
        "--every",
        "50",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("budget"), "{text}");
    assert!(text.contains("Kernel.Overload"), "{text}");
}

#[test]
fn sim_plot_writes_a_valid_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("sim.svg");
    let out = tickstep(&[
        "sim",
        "--frames",
        "240",
        "--long-task",
        "12ms",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_valid_svg(&svg);
}

fn assert_valid_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.trim();
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..80.min(text.len())]
    );
    assert!(text.ends_with("</svg>"));
    assert!(text.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(
        text.matches("<polyline").count() >= 5,
        "budget, step and per-priority lines"
    );
    // Every element that opens is closed: a cheap well-formedness check without an XML parser.
    let opens = text.matches('<').count();
    let closes = text.matches('>').count();
    assert_eq!(opens, closes);
}

#[test]
fn bad_arguments_give_a_clear_message_and_exit_code_2() {
    let cases: [(&[&str], &str); 15] = [
        (&["demo", "--duration", "0s"], "must be longer than zero"),
        (
            &["sim", "--frames", "100000000000"],
            "is not in 1..=1000000",
        ),
        (
            &["sim", "--load", "low=100000000x1us"],
            "at most 100000 tasks",
        ),
        (&["sim", "--long-task", "1h"], "a task may cost at most 1s"),
        (
            &[
                "sim",
                "--frames",
                "10",
                "--long-task",
                "12ms",
                "--long-task-frame",
                "10",
            ],
            "past the last frame",
        ),
        (
            &["demo", "--duration", "soon"],
            "does not start with a number",
        ),
        (&["schedules", "info", "seven"], "invalid value 'seven'"),
        (
            &["schedules", "list", "--colour"],
            "unexpected argument '--colour'",
        ),
        (&["sim", "--frames", "0"], "0 is not in 1.."),
        (&["sim", "--fps", "5000"], "5000 is not in 1..=1000"),
        (
            &["sim", "--frames", "many"],
            "invalid value 'many' for '--frames",
        ),
        (&["sim", "--long-task", "12"], "has no unit"),
        (&["sim", "--load", "urgent=3x1ms"], "unknown priority"),
        (
            &["sim", "--role", "referee"],
            "invalid value 'referee' for '--role",
        ),
        (&["teleport"], "unrecognized subcommand 'teleport'"),
    ];
    for (args, message) in cases {
        let out = tickstep(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_plot_that_cannot_be_written_is_a_runtime_error_with_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("no").join("such").join("dir.svg");
    let out = tickstep(&["sim", "--frames", "10", "--plot", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
}

/// `created schedule N: name` and `found schedule N ...: name, fired R times` lines.
fn schedule_lines(text: &str, word: &str) -> Vec<(u64, String, u64)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix(word)?.strip_prefix(" schedule ")?;
            let (id, rest) = rest.split_once([' ', ':'])?;
            let named = rest
                .rsplit_once(": ")
                .map_or(rest.trim_start_matches([':', ' ']), |(_, n)| n);
            let name = named.split(',').next()?.to_owned();
            let fired = rest
                .split_once("fired ")
                .and_then(|(_, n)| n.split(' ').next()?.parse().ok())
                .unwrap_or(0);
            Some((id.parse().ok()?, name, fired))
        })
        .collect()
}

#[test]
fn demo_twice_on_one_store_the_second_run_finds_the_first_runs_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("world.db");
    let db = db.to_str().unwrap();
    let first = tickstep(&["demo", "--virtual", "--duration", "5s", "--db", db]);
    assert!(first.status.success(), "{}", stderr(&first));
    let text = stdout(&first);
    let created = schedule_lines(&text, "created");
    let names: Vec<&str> = created.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(names, ["bell", "regenerate", "lockup"], "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with('[')).count(),
        5,
        "{text}"
    );
    assert!(text.contains("store committed"), "{text}");

    let second = tickstep(&["demo", "--virtual", "--duration", "3s", "--db", db]);
    assert!(second.status.success(), "{}", stderr(&second));
    let text = stdout(&second);
    let found = schedule_lines(&text, "found");
    assert!(text.contains("ids and counters intact"), "{text}");
    for (id, name, fired) in &found {
        let (first_id, _, _) = created.iter().find(|(_, n, _)| n == name).unwrap();
        assert_eq!(id, first_id, "{name} kept its id: {text}");
        if name != "lockup" {
            // The recurring ones fired in the first run; their counters came back.
            assert!(*fired > 0, "{name} kept its counters: {text}");
        }
    }
    let found_names: Vec<&str> = found.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(&found_names[..2], ["bell", "regenerate"], "{text}");
}

#[test]
fn demo_runs_on_the_real_clock_for_its_duration() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db");
    let out = tickstep(&["demo", "--duration", "1s", "--db", db.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("[   1s] budget"), "{text}");
    assert!(text.contains("stopped cleanly"), "{text}");
    assert!(db.exists());
}

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
fn demo_tui_without_a_terminal_says_what_to_do_instead() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let out = tickstep(&[
        "demo",
        "--tui",
        "--duration",
        "1s",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--tui needs a terminal"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn demo_tui_draws_the_world_in_a_terminal() {
    // `script` (util-linux, in every Debian base system) gives the demo a pseudo-terminal.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tui.db");
    let inner = format!(
        "stty cols 120 rows 40; {} demo --tui --virtual --duration 2s --db {}",
        env!("CARGO_BIN_EXE_tickstep"),
        db.display()
    );
    let out = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .output()
        .expect("the `script` command gives the demo a terminal");
    assert!(out.status.success(), "{}", stderr(&out));
    let screen = stdout(&out);
    for text in [
        "tickstep demo",
        "frame",
        "rooms",
        "hall",
        "durable",
        "bell",
        "stopped cleanly",
    ] {
        assert!(screen.contains(text), "{text:?} not drawn: {screen}");
    }
    assert!(
        db.exists(),
        "the live view commits the store like line mode"
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

#[test]
fn sim_client_with_a_long_task_overruns_the_fixed_slice() {
    let out = tickstep(&["sim", "--role", "client", "--long-task", "12ms"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("client (fixed 1.5 ms slice)"), "{text}");
    assert!(text.contains("<- long task"), "{text}");
    assert!(
        text.contains("0 Overload event(s)"),
        "the client publishes none: {text}"
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

fn sqlite3(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
        .expect("the sqlite3 shell must be installed (.ci/run installs it)");
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

#[test]
fn a_damaged_store_is_refused_with_how_to_recover_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("world.db");
    let path = db.to_str().unwrap();
    let demo = tickstep(&["demo", "--virtual", "--duration", "2s", "--db", path]);
    assert!(demo.status.success(), "{}", stderr(&demo));
    let root: usize = sqlite3(
        &db,
        "SELECT rootpage FROM sqlite_master WHERE name = 'schedules'",
    )
    .parse()
    .unwrap();
    let page: usize = sqlite3(&db, "PRAGMA page_size").parse().unwrap();
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[(root - 1) * page..root * page].fill(0xA5);
    std::fs::write(&db, &bytes).unwrap();
    for args in [
        &["schedules", "--db", path, "list"][..],
        &["demo", "--virtual", "--duration", "1s", "--db", path][..],
    ] {
        let out = tickstep(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("is damaged"), "{err}");
        assert!(err.contains(&format!("sqlite3 {path} .recover")), "{err}");
        assert_eq!(
            std::fs::read(&db).unwrap(),
            bytes,
            "{args:?} changed the file"
        );
    }
}

#[test]
fn a_demo_pointed_at_another_applications_database_refuses_it_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    sqlite3(
        &db,
        "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me');",
    );
    let before = std::fs::read(&db).unwrap();
    let out = tickstep(&[
        "demo",
        "--virtual",
        "--duration",
        "1s",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("another application's tables (notes)"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no WAL files either"
    );
}

#[test]
fn a_store_from_a_newer_tickstep_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("future.db");
    let path = db.to_str().unwrap();
    let demo = tickstep(&["demo", "--virtual", "--duration", "1s", "--db", path]);
    assert!(demo.status.success(), "{}", stderr(&demo));
    sqlite3(
        &db,
        "INSERT INTO schema_migrations VALUES (99, 'from the future')",
    );
    for args in [
        &["schedules", "--db", path, "list"][..],
        &["demo", "--virtual", "--duration", "1s", "--db", path][..],
    ] {
        let out = tickstep(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("version 99") && err.contains("up to 12"),
            "{err}"
        );
    }
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
