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
