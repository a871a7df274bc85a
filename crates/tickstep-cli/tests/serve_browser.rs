//! The dashboard in a real browser (docs/serve.md §13): headless Chromium, driven through
//! chromedriver by `tests/clients/dashboard_browser.py`, loads the list of a running
//! `tickstep serve`, sees hostile text as text, watches the live chart update, filters through the
//! form, opens a detail view, pauses and stops a schedule through its forms; the screenshot is kept under target/. Every wait is bounded.
//!
//! The play page too (docs/serve.md §9.5): `tests/clients/play_browser.py` logs in by typing,
//! sets a reminder and sees it fire, and sees another player's hostile line as text.
//!
//! Without Chromium and chromedriver the tests are skipped with a note, except under `CI`, where
//! `.ci/run` installs them and their absence fails it.

mod serve_client;

use std::path::{Path, PathBuf};
use std::process::Command;

use serve_client::{PATIENCE, Server, available, id_of, password_of, run_bounded};

fn installed(program: &str) -> bool {
    available(program, Command::new(program).arg("--version"))
}

#[test]
fn chromium_filters_opens_a_detail_and_sees_hostile_text_as_text() {
    // docs/serve.md §13.1–§13.3, §13.6
    if !installed("chromium") || !installed("chromedriver") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "correct-horse-battery-staple\n").unwrap();
    let server = Server::start(
        &dir.path().join("world.db"),
        &[
            "--http",
            "127.0.0.1:0",
            "--action-token-file",
            token.to_str().unwrap(),
        ],
    );
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    let script = id_of(&alice.ask("every 1 tell <script>window.pwned=2</script>"));
    let image = id_of(&alice.ask("every 3600 tell \"><img src=x onerror=\"window.pwned=1\">"));
    let tea = id_of(&bob.ask("remind 3600 tea"));

    let shot: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    let _ = std::fs::remove_file(&shot);
    let seen = drive_chromium(
        "dashboard_browser.py",
        &[
            &addr,
            shot.to_str().unwrap(),
            "correct-horse-battery-staple",
            &image.to_string(),
        ],
    );

    let rows = |key: &str| -> Vec<String> {
        seen[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        rows("all_rows"),
        [script, image, tea].map(|id| format!("#{id}"))
    );
    // The payloads are text in the cells; no image was made and nothing ran.
    let cells = rows("args_cells");
    assert_eq!(cells[0], "\"<script>window.pwned=2</script>\"");
    assert_eq!(
        cells[1],
        "\"\\\"><img src=x onerror=\\\"window.pwned=1\\\">\""
    );
    assert_eq!(seen["images"], 0);
    assert_eq!(seen["pwned"], 0);
    assert_eq!(seen["pwned_after"], 0);
    assert_live_view_hot_tasks_and_commands(&seen);
    // The form's search, and the detail view reached by clicking.
    assert!(seen["filtered_url"].as_str().unwrap().contains("q=tea"));
    assert_eq!(rows("filtered_rows"), [format!("#{tea}")]);
    assert_eq!(seen["detail_h1"], format!("Schedule #{tea}"));
    assert_eq!(seen["detail_owner"], "bob");
    let fields = rows("detail_fields");
    for field in [
        "verb",
        "args",
        "last_fault",
        "next_runs",
        "history",
        "paused",
    ] {
        assert!(fields.iter().any(|f| f == field), "{field}: {fields:?}");
    }
    // Paused, then stopped, through the page's forms; the store says so too.
    assert!(
        seen["after_pause_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/dashboard/schedules/{image}")),
        "{seen}"
    );
    assert_eq!(seen["after_pause_note"], "\"from the browser\"");
    // The pause was asked in a dialog on the schedule's own page, and its badge says so now;
    // cancelling the stop's dialog left the page as it was.
    let page = format!("/dashboard/schedules/{image}");
    assert!(
        seen["pause_dialog_url"].as_str().unwrap().ends_with(&page),
        "{seen}"
    );
    assert_eq!(seen["pause_badge"], "paused");
    assert!(
        seen["after_cancel_url"].as_str().unwrap().ends_with(&page),
        "{seen}"
    );
    assert_eq!(
        rows("after_stop_rows"),
        [script, tea].map(|id| format!("#{id}"))
    );
    let gone = alice.ask(&format!("info {image}"));
    assert!(gone.starts_with("error:"), "{gone}");
    let png = std::fs::read(&shot).expect("the screenshot was saved");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    server.shutdown();
}

/// What the dashboard test saw of the live view, the hot tasks and the commands page
/// (docs/serve.md §13.6, §13.11).
fn assert_live_view_hot_tasks_and_commands(seen: &serde_json::Value) {
    // The live view drew at least twice and says the budget and who is online.
    assert!(seen["live_updates"].as_u64().unwrap() >= 2, "{seen}");
    assert_eq!(seen["budget_text"], "16.7 ms");
    assert_eq!(seen["online_text"], "2");
    // The hot tasks (docs/serve.md §13.6): the kernel's profiler names serve's own work.
    let hot = seen["hot_rows"].as_array().unwrap();
    assert!(!hot.is_empty(), "{seen}");
    assert!(
        hot.iter().all(|o| !o.as_str().unwrap().is_empty()),
        "{seen}"
    );
    // The commands page (docs/serve.md §13.11), reached from the list's link.
    assert_eq!(seen["commands_h1"], "Commands");
    assert!(
        seen["commands_count"]
            .as_str()
            .unwrap()
            .ends_with(" running"),
        "{seen}"
    );
}

#[test]
fn chromium_plays_the_page_logs_in_sees_a_reminder_fire_and_hostile_text_as_text() {
    // docs/serve.md §9.1, §9.5, §10.1, §11.1
    if !installed("chromium") || !installed("chromedriver") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("world.db"), &["--http", "127.0.0.1:0"]);
    let addr = server
        .printed("tickstep serve: browsers on http://")
        .trim_start_matches("tickstep serve: browsers on http://")
        .trim_end_matches('/')
        .to_owned();
    // Another player's schedule says markup and an escape to everyone connected, every second.
    let payload = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>\u{1b}[2J";
    let mut mallory = server.login("mallory");
    assert!(
        mallory
            .ask(&format!("every 1 say {payload}"))
            .starts_with("ok: schedule #")
    );
    let password = password_of("carol");
    let seen = drive_chromium("play_browser.py", &[&addr, "carol", &password]);

    assert_eq!(seen["title"], "tickstep world");
    // The password was typed into a masked field and never shown back; a refused one was asked
    // again with the field still masked, and the field is plain again once logged in
    // (docs/serve.md §10.1, §10.9).
    assert_eq!(seen["input_type_at_password"], "password");
    assert_eq!(seen["input_type_at_password_again"], "password");
    assert_eq!(seen["input_type_after_login"], "text");
    assert_eq!(seen["password_shown"], false);
    assert_eq!(
        seen["typed_password_lines"],
        serde_json::json!(["> (password)", "> (password)"])
    );
    assert!(
        seen["welcome"]
            .as_str()
            .unwrap()
            .starts_with("ok: welcome, carol")
    );
    assert!(
        seen["who"].as_str().unwrap().starts_with("carol (#"),
        "{seen}"
    );
    // The reminder set from the page fired on it, and GMCP listed the other schedule.
    assert!(
        seen["every_reply"]
            .as_str()
            .unwrap()
            .ends_with("runs tell every 3600 s"),
        "{seen}"
    );
    assert!(
        seen["fired"].as_str().unwrap().ends_with("] the kettle"),
        "{seen}"
    );
    let sidebar = seen["sidebar"].as_array().unwrap();
    assert!(
        sidebar[0].as_str().unwrap().contains("every 3600 s tell"),
        "{seen}"
    );
    // The hostile line is text: escaped control bytes, no element made, nothing run.
    assert_eq!(
        seen["hostile"]
            .as_str()
            .unwrap()
            .split_once("] ")
            .unwrap()
            .1,
        "mallory says: <img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>\\x1b[2J"
    );
    assert_eq!(seen["images"], 0);
    assert_eq!(seen["scripts"], 1, "only the page's own script");
    assert_eq!(seen["pwned"], 0);
    server.shutdown();
}

/// Runs `tests/clients/SCRIPT` (a browser script on `tests/clients/webdriver.py`) with `args`,
/// bounded, and what it saw: the one JSON line it prints.
fn drive_chromium(script: &str, args: &[&str]) -> serde_json::Value {
    let output = run_bounded(
        Command::new(std::env::var("TICKSTEP_PYTHON").unwrap_or("python3".into()))
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/clients")
                    .join(script),
            )
            .args(args),
        PATIENCE * 6,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the browser script failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).expect("one JSON line")
}
