//! The dashboard in a real browser (docs/serve.md §13): headless Chromium, driven through
//! chromedriver by `tests/clients/dashboard_browser.py`, loads the list of a running
//! `tickstep serve`, sees hostile text as text, watches the live chart update, filters through the
//! form, opens a detail view, pauses and stops a schedule through its forms, and sees the
//! overview's charts drawn from the last hour, live or, for a store whose schedules never fired,
//! saying so (docs/serve.md §13.18); the screenshots are kept under target/. Every wait is bounded.
//!
//! The play page too (docs/serve.md §9.5): `tests/clients/play_browser.py` logs in by typing,
//! sets a reminder and sees it fire, and sees another player's hostile line as text.
//!
//! Without Chromium and chromedriver the tests are skipped with a note, except under `CI`, where
//! `.ci/run` installs them and their absence fails it.

mod common;
mod dashboard_process;
mod serve_client;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::pg;
use dashboard_process::Dashboard;
use serve_client::{PATIENCE, Server, available, id_of, password_of, run_bounded};
use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{ObjId, Options, Value};

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

    let shots: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screens");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let seen = drive_chromium(
        "dashboard_browser.py",
        &[
            &addr,
            shots.to_str().unwrap(),
            "correct-horse-battery-staple",
            &image.to_string(),
            &script.to_string(),
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
    assert_signed_in_bulk_and_audit(&seen, [script, image], tea);
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
    assert_seen_as_styled(&seen, &shots);

    // The overview (docs/serve.md §13.18): the hour's charts drew the firings live.
    assert_a_busy_hour(&overview(&addr, &shots, "overview"));
    server.shutdown();
}

/// A running serve's overview drew its firings: bars with their minute and value on hover, the
/// lateness, the sentence, the table's busy minutes and the frame chart (docs/serve.md §13.18).
fn assert_a_busy_hour(overview: &serde_json::Value) {
    let charts = &overview["charts"];
    assert!(
        charts["firings"]["bars"].as_u64().unwrap() >= 1,
        "{overview}"
    );
    assert!(
        charts["firings"]["tallest"].as_f64().unwrap() > 0.0,
        "{overview}"
    );
    assert_eq!(charts["firings"]["empty"], serde_json::Value::Null);
    assert!(charts["p99"]["bars"].as_u64().unwrap() >= 1, "{overview}");
    assert!(
        charts["firings"]["tip"]
            .as_str()
            .unwrap()
            .contains(" UTC: "),
        "{overview}"
    );
    assert_eq!(charts["faults"]["empty"], "no faults in the last hour");
    assert!(
        overview["summary"]
            .as_str()
            .unwrap()
            .contains(" in the last hour; lateness p50 "),
        "{overview}"
    );
    assert!(overview["busy_rows"].as_u64().unwrap() >= 1, "{overview}");
    assert!(overview["frame_pixels"].as_u64().unwrap() > 0, "{overview}");
}

/// A store whose schedules never fired says so in each chart and in the sentence, and has no
/// frame chart (docs/serve.md §13.18).
fn assert_an_empty_hour(overview: &serde_json::Value) {
    let charts = &overview["charts"];
    assert_eq!(charts["firings"]["bars"], 0, "{overview}");
    assert_eq!(charts["firings"]["empty"], "no firings in the last hour");
    assert_eq!(
        charts["p99"]["empty"],
        "no firings, so no lateness, in the last hour"
    );
    assert_eq!(
        overview["summary"],
        "no firings in the last hour; faults: 0; missed points: 0"
    );
    assert_eq!(
        overview["frame_pixels"],
        serde_json::Value::Null,
        "a store has no frames"
    );
}

/// The overview at `addr` as Chromium saw it, its screenshots saved as `shots/name-SIZE.png`,
/// checked for what every overview shows (docs/serve.md §13.18): its heading and link first in
/// the bar, the four charts with their scales, the hour's 60 minutes as text, no CSP violation or
/// console error, no sideways scroll at a phone's width, and the screenshots saved.
fn overview(addr: &str, shots: &Path, name: &str) -> serde_json::Value {
    let seen = drive_chromium(
        "dashboard_overview.py",
        &[addr, shots.to_str().unwrap(), name],
    );
    assert_eq!(seen["h1"], "Overview", "{seen}");
    assert_eq!(seen["nav"][0], "overview", "{seen}");
    let charts = seen["charts"].as_object().unwrap();
    let names: Vec<&str> = charts.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 4, "{seen}");
    for (series, chart) in charts {
        let ticks = chart["ticks"].as_array().unwrap();
        assert_eq!(ticks.len(), 4, "{series}: {seen}");
        assert_eq!(ticks[3], "now", "{series}: {seen}");
    }
    assert_eq!(seen["table_rows"], 60, "{seen}");
    assert_eq!(seen["csp"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["console_errors"], serde_json::json!([]), "{seen}");
    assert!(seen["phone_width"].as_u64().unwrap() <= 390, "{seen}");
    for size in ["1366x768", "390x844"] {
        let png = std::fs::read(shots.join(format!("{name}-{size}.png")))
            .expect("the screenshot was saved");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
    }
    seen
}

#[test]
fn chromium_pages_a_store_of_many_schedules_and_filters_it_by_kind_and_state() {
    // docs/serve.md §13.2, §13.13
    if !installed("chromium") || !installed("chromedriver") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("many.db");
    // 130 schedules: every third a weekday cron in Paris, every seventh of those paused.
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(&db)
        .build()
        .unwrap();
    rt.verb("ring", |_| Ok(Value::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    let mut ids = Vec::new();
    for n in 1..=130u64 {
        let id = if n % 3 == 0 {
            txn.schedule_cron(
                ObjId(1),
                "ring",
                "0 3 * * MON-FRI",
                "Europe/Paris",
                vec![],
                Options::new(),
            )
        } else {
            txn.schedule_every(ObjId(1), "ring", 60.0 * n as f64, vec![], Options::new())
        };
        ids.push(id.unwrap());
    }
    txn.commit().unwrap();
    let paused: Vec<u64> = ids
        .iter()
        .map(|id| id.get())
        .filter(|n| n % 21 == 0)
        .collect();
    for id in &paused {
        let id = tickstep::schedules::ScheduleId::from_raw(*id);
        assert!(
            rt.schedules()
                .pause(ObjId(1), id, "<b>maintenance</b>")
                .unwrap()
        );
    }
    rt.shutdown().unwrap();
    let dash = Dashboard::start(&db, &[]);
    let seen = drive_chromium("dashboard_paging.py", &[&dash.addr]);

    let ids_of = |key: &str| -> Vec<u64> {
        seen[key]["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let all: Vec<u64> = ids.iter().map(|id| id.get()).collect();
    assert_eq!(ids_of("first"), all[..50], "{seen}");
    assert_eq!(seen["first"]["count"], "130 of 130 live schedules");
    assert_eq!(seen["first"]["page"], "page 1 of 3");
    assert_eq!(ids_of("second"), all[50..100], "{seen}");
    assert_eq!(seen["second"]["page"], "page 2 of 3");
    assert_eq!(ids_of("back"), all[..50]);
    let cron: Vec<u64> = all.iter().copied().filter(|n| n % 3 == 0).collect();
    assert_eq!(ids_of("cron"), cron, "{seen}");
    assert_eq!(seen["cron"]["count"], "43 of 130 live schedules");
    assert_eq!(
        seen["cron_cadences"],
        serde_json::json!(["0 3 * * MON-FRI Europe/Paris"])
    );
    assert_eq!(ids_of("paused_cron"), paused, "{seen}");
    assert!(
        seen["pause_titles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t == "<b>maintenance</b>"),
        "{seen}"
    );
    assert_eq!(seen["csp"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["console_errors"], serde_json::json!([]), "{seen}");

    // The overview of a store whose schedules never fired says so (docs/serve.md §13.18).
    let shots: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screens-store");
    std::fs::create_dir_all(&shots).unwrap();
    assert_an_empty_hour(&overview(&dash.addr, &shots, "overview-empty"));
}

/// The pages as the browser rendered them (docs/serve.md §13.3, §13.7): the stylesheet applied
/// (computed colours and fonts are the stylesheet's, not the browser's defaults), no CSP
/// violation reported by the page or logged by the browser, the chart drew bars, the firing
/// schedule's page lists its firings, at a phone's width the page does not scroll sideways, and
/// each screenshot was saved.
fn assert_seen_as_styled(seen: &serde_json::Value, shots: &Path) {
    for page in ["list", "detail"] {
        for size in ["1366x768", "390x844"] {
            let png = std::fs::read(shots.join(format!("{page}-{size}.png")))
                .expect("the screenshot was saved");
            assert!(png.starts_with(b"\x89PNG"), "a PNG");
        }
    }
    assert_eq!(seen["csp"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["console_errors"], serde_json::json!([]), "{seen}");
    // Keyboard access (docs/serve.md §13.2): Tab reaches each control in reading order, outlined.
    let tabbed: Vec<(String, String)> = seen["tab_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f[0].as_str().unwrap().to_owned(),
                f[1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let order: Vec<&str> = tabbed.iter().map(|(what, _)| what.trim()).collect();
    assert_eq!(
        order,
        [
            "a overview",
            "a schedules",
            "a commands",
            "a audit",
            "a sign in",
            "input[q]",
            "input[owner]",
            "input[verb]",
            "select[kind]",
            "select[state]",
            "select[sort]",
            "button Filter",
            "a #1",
            "a #2",
        ],
        "{seen}"
    );
    assert!(
        tabbed.iter().all(|(_, outline)| outline == "solid"),
        "{seen}"
    );
    let look = &seen["look"];
    assert_eq!(look["badge_background"], "rgb(218, 251, 225)", "{seen}");
    assert_eq!(look["header_background"], "rgb(31, 78, 121)", "{seen}");
    assert!(
        look["body_font"].as_str().unwrap().starts_with("system-ui"),
        "{seen}"
    );
    assert_eq!(look["cell_border"], "solid", "{seen}");
    // The header's "sign in" link reads white on the blue bar, not the page's link blue.
    assert_eq!(look["sign_in_color"], "rgb(255, 255, 255)", "{seen}");
    assert_eq!(seen["detail_look"]["header_background"], "rgb(31, 78, 121)");
    assert!(seen["chart_pixels"].as_u64().unwrap() > 0, "{seen}");
    assert!(seen["firings_rows"].as_u64().unwrap() > 0, "{seen}");
    assert!(seen["phone_width"].as_u64().unwrap() <= 390, "{seen}");
    assert!(
        seen["phone_detail_width"].as_u64().unwrap() <= 390,
        "{seen}"
    );
}

/// The sign-in through the form, a pause and resume with no token typed, the bulk pause of the
/// `every` schedules and the bulk resume of the paused ones through their confirm pages, and the
/// audit naming who did each (docs/serve.md §13.8, §13.16, §13.17).
fn assert_signed_in_bulk_and_audit(seen: &serde_json::Value, every: [u64; 2], other: u64) {
    // Before the sign-in, no action forms; after, the name in the header, no token field
    // anywhere, and the cookie out of the script's reach (HttpOnly).
    assert_eq!(seen["signed_out_actions"], 0, "{seen}");
    assert_eq!(seen["signed_in_as"], "ada", "{seen}");
    assert_eq!(seen["cookie_visible_to_script"], "", "HttpOnly: {seen}");
    assert_eq!(seen["token_fields"], 0, "{seen}");
    assert!(
        seen.get("token_in").is_none(),
        "no page holds the token: {seen}"
    );
    // Who asked is in the note.
    assert_eq!(
        seen["after_pause_note"],
        "\"from the browser (by ada on the dashboard)\""
    );
    assert_eq!(seen["resume_badge"], "active", "{seen}");
    let badge = |rows: &serde_json::Value, id: u64| -> String {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r[0] == format!("#{id}"))
            .map_or_else(
                || panic!("#{id} in {rows}"),
                |r| r[1].as_str().unwrap().to_owned(),
            )
    };
    let paused = &seen["bulk_pause"];
    assert_eq!(paused[0], "pause 2 schedules matching kind=every", "{seen}");
    assert!(
        paused[1]
            .as_str()
            .unwrap()
            .starts_with("pause: 2 done, 0 refused"),
        "{seen}"
    );
    for id in every {
        assert_eq!(badge(&paused[2], id), "paused", "{seen}");
    }
    assert_eq!(badge(&paused[2], other), "active", "{seen}");
    let resumed = &seen["bulk_resume"];
    assert_eq!(
        resumed[0], "resume 2 schedules matching state=paused",
        "{seen}"
    );
    for id in every {
        assert_ne!(badge(&resumed[2], id), "paused", "{seen}");
    }
    let audit = seen["audit_rows"].as_array().unwrap();
    assert_eq!(
        audit.len(),
        6,
        "pause, resume, two bulk pauses, two bulk resumes: {seen}"
    );
    assert!(audit.iter().all(|r| r[0] == "ada"), "{seen}");
    assert_eq!(audit[0][1], "resume (bulk)", "{seen}");
    assert_eq!(audit[5][1], "pause", "{seen}");
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

#[test]
fn chromium_sees_a_clusters_hour_its_holdings_drawn_and_a_takeover_with_its_time() {
    // docs/serve.md §13.12, §13.19; docs/schedules.md §11.50
    if !installed("chromium") || !installed("chromedriver") {
        return;
    }
    let Some(url) = pg::database_or_skip("browser_cluster") else {
        return;
    };
    let node = || {
        let rt = Runtime::builder()
            .store_path(&url)
            .without_commands()
            .build()
            .expect("a node opens the PostgreSQL store");
        rt.verb("ring", |_| Ok(Value::Int(0)));
        rt
    };
    let hourly = |rt: &Runtime, count: usize| {
        let mut txn = rt.schedules().begin(ObjId(1));
        for _ in 0..count {
            txn.schedule_every(ObjId(1), "ring", 3600.0, vec![], Options::new())
                .unwrap();
        }
        txn.commit().unwrap();
        rt.schedules().flush().unwrap();
    };
    // A node dies holding three schedules and its lease runs out; the next node to open takes
    // them over. A third node leaves cleanly, handing two back.
    // Its lease is long, so its store thread (which outlives `forget`) does not renew it again
    // before the page is read.
    let dead = Runtime::builder()
        .store_path(&url)
        .lease(std::time::Duration::from_secs(600))
        .without_commands()
        .build()
        .expect("a node opens the PostgreSQL store");
    dead.verb("ring", |_| Ok(Value::Int(0)));
    hourly(&dead, 3);
    std::mem::forget(dead);
    let mut sql = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    sql.batch_execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'")
        .unwrap();
    let taker = node();
    let leaver = node();
    hourly(&leaver, 2);
    leaver.shutdown().unwrap();

    let dash = Dashboard::start(Path::new(&url), &[]);
    let shots: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screens");
    std::fs::create_dir_all(&shots).unwrap();
    let seen = drive_chromium(
        "dashboard_cluster.py",
        &[&dash.addr, shots.to_str().unwrap(), "cluster"],
    );
    assert_eq!(seen["h1"], "Cluster", "{seen}");
    assert_eq!(seen["csp"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["console_errors"], serde_json::json!([]), "{seen}");
    let spans: Vec<&str> = seen["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(spans, ["span expired", "span live", "span left"], "{seen}");
    // The holdings chart drew a line a node, styled by the stylesheet; the taker's rises to 3.
    let lines = seen["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 3, "{seen}");
    assert!(
        lines
            .iter()
            .all(|l| l["points"].as_u64().unwrap() >= 1 && l["fill"] == "none"),
        "{seen}"
    );
    assert!(
        lines[1]["points"].as_u64().unwrap() >= 3,
        "the taker's line steps from 0 up to 3: {seen}"
    );
    assert!(
        lines.iter().all(|l| l["stroke"] != "none"),
        "the stylesheet coloured the lines: {seen}"
    );
    assert!(seen["dots"].as_u64().unwrap() >= 5, "{seen}");
    assert!(seen["chart_width"].as_f64().unwrap() > 300.0, "{seen}");
    let holdings = seen["holdings_rows"].as_array().unwrap();
    assert_eq!(holdings.len(), 3, "{seen}");
    assert_eq!(holdings[1][1], "3", "the taker holds the three: {seen}");
    assert!(
        holdings[2][4].as_str().unwrap().ends_with("ago"),
        "the leaver's row says when it left: {seen}"
    );
    // The takeover: when (in words), from, to, how many.
    let takeovers = seen["takeover_rows"].as_array().unwrap();
    assert_eq!(takeovers.len(), 1, "{seen}");
    assert_eq!(takeovers[0][3], "3", "{seen}");
    assert!(takeovers[0][0].as_str().unwrap().contains("ago"), "{seen}");
    assert!(seen["phone_width"].as_u64().unwrap() <= 390, "{seen}");
    for size in ["1366x768", "390x844"] {
        let png = std::fs::read(shots.join(format!("cluster-{size}.png")))
            .expect("the screenshot was saved");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
    }
    taker.shutdown().unwrap();
    drop(dash);
    pg::drop_database(&url);
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
