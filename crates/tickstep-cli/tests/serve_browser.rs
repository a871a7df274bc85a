//! The dashboard in a real browser (docs/serve.md §13): headless Chromium, driven through
//! chromedriver by `tests/clients/dashboard_browser.py`, loads the list of a running
//! `tickstep serve`, sees hostile text as text, watches the live chart update, filters through the
//! form, opens a detail view, pauses and stops a schedule through its forms; the screenshot is kept under target/. Every wait is bounded.
//!
//! Without Chromium and chromedriver the test is skipped with a note, except under `CI`, where
//! `.ci/run` installs them and their absence fails it.

mod serve_client;

use std::path::{Path, PathBuf};
use std::process::Command;

use serve_client::{PATIENCE, Server, available, id_of, run_bounded};

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
    let seen = drive_chromium(&addr, &shot, image);

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
    // The live view drew at least twice and says the budget and who is online.
    assert!(seen["live_updates"].as_u64().unwrap() >= 2, "{seen}");
    assert_eq!(seen["budget_text"], "16.7 ms");
    assert_eq!(seen["online_text"], "2");
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

/// Runs `tests/clients/dashboard_browser.py` against `addr` (bounded), and what it saw.
fn drive_chromium(addr: &str, shot: &Path, image: u64) -> serde_json::Value {
    let output = run_bounded(
        Command::new(std::env::var("TICKSTEP_PYTHON").unwrap_or("python3".into()))
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/dashboard_browser.py"))
            .arg(addr)
            .arg(shot)
            .arg("correct-horse-battery-staple")
            .arg(image.to_string()),
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
