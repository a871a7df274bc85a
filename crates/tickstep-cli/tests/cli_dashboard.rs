//! `tickstep dashboard --db FILE` (docs/serve.md §13.13): the real binary serving the dashboard
//! of a `SQLite` store with no server running, asked over real HTTP — the list with hostile text as
//! text, a detail view with the next fire times and history, the views a store alone has not
//! (`404`), bad input, and actions: refused read-only, refused without the token or from another
//! origin, and with it done as the store's operator (checked in the store). Every wait is
//! bounded; the assertions are about what was answered and what the store holds.

mod dashboard_process;
#[path = "../../tickstep/tests/http_client/mod.rs"]
mod http_client;
mod serve_client;

use std::path::Path;
use std::time::Duration;

use dashboard_process::Dashboard;
use http_client::{FORM, get, post};
use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{Inspector, ObjId, Options, ScheduleId, StoredSchedule, Value};

const TOKEN: &str = "store-dashboard-token-42";

/// A store with a ringing schedule (run a few times, so it has a history) and one whose
/// arguments are hostile; their ids.
fn store_with_schedules(path: &Path) -> (ScheduleId, ScheduleId) {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(path)
        .build()
        .unwrap();
    rt.verb("ring", |_| Ok(Value::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    let bell = txn
        .schedule_every(ObjId(1), "ring", 1.0, vec![], Options::new())
        .unwrap();
    let hostile = txn
        .schedule_every(
            ObjId(2),
            "ring",
            3600.0,
            vec![Value::from(
                "\"><img src=x onerror=\"window.pwned=1\">\u{1b}[2J",
            )],
            Options::new(),
        )
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_millis(3500)).unwrap();
    rt.shutdown().unwrap();
    (bell, hostile)
}

/// Schedule `id` as the store holds it now.
fn saved(db: &Path, id: ScheduleId) -> StoredSchedule {
    Inspector::open(db)
        .unwrap()
        .get(id)
        .unwrap()
        .expect("still saved")
}

#[test]
fn a_store_alone_is_served_read_only() {
    // docs/serve.md §13.13, §13.3, §13.4, §13.8
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let (bell, hostile) = store_with_schedules(&db);
    let dash = Dashboard::start(&db, &[]);
    let addr = dash.addr.as_str();

    let list = get(addr, "/dashboard");
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains("2 of 2 live schedules"), "{}", list.body);
    assert!(list.body.contains("tickstep dashboard: "));
    assert!(
        list.body
            .contains("&quot;&gt;&lt;img src=x onerror=\\&quot;window.pwned=1\\&quot;&gt;"),
        "{}",
        list.body
    );
    assert!(!list.body.contains("<img"), "hostile markup stays text");
    assert!(
        !list.body.contains('\u{1b}'),
        "an ANSI escape is shown, not sent"
    );
    assert!(
        !list.body.contains("id=\"frames\""),
        "a store has no live view"
    );
    http_client::assert_own_files(addr, &list.body);
    assert!(
        list.head
            .contains("content-security-policy: default-src 'self'")
    );
    let filtered = get(addr, "/dashboard?owner=%231&q=onerror");
    assert!(
        filtered.body.contains("1 of 2 live schedules"),
        "{}",
        filtered.body
    );

    let detail = get(addr, &format!("/dashboard/schedules/{}", bell.get()));
    assert_eq!(detail.status, 200, "{}", detail.body);
    for field in ["next_runs", "history", "run_count", "paused", "last_fault"] {
        assert!(
            detail.body.contains(&format!("<th>{field}</th>")),
            "{field}"
        );
    }
    assert!(
        detail
            .body
            .contains("&quot;outcome&quot;:&quot;returned&quot;"),
        "{}",
        detail.body
    );
    assert!(
        !detail.body.contains("<form"),
        "no actions without the token"
    );
    assert_detail_reads_as_people_read(&detail.body);

    let bad: &[(&str, u16, &str)] = &[
        ("/dashboard/schedules/0", 400, "is not a schedule id"),
        ("/dashboard/schedules/abc", 400, "is not a schedule id"),
        (
            "/dashboard/schedules/424242",
            404,
            "no live schedule #424242",
        ),
        ("/dashboard?sort=size", 400, "sort=\"size\""),
        ("/dashboard/commands", 404, "a store alone runs no commands"),
        ("/dashboard/cluster", 404, "only a PostgreSQL store"),
        ("/dashboard/events", 404, "no route"),
        ("/dashboard/live.js", 404, "no route"),
        ("/nowhere", 404, "no route \"/nowhere\""),
    ];
    for (path, status, says) in bad {
        let answer = get(addr, path);
        assert_eq!(answer.status, *status, "{path}: {}", answer.body);
        assert!(answer.body.contains(says), "{path}: {}", answer.body);
    }
    let refused = post(
        addr,
        &format!("/dashboard/schedules/{}/stop", hostile.get()),
        FORM,
        &format!("token={TOKEN}"),
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("read-only"), "{}", refused.body);
    assert_nothing_to_sign_in_to(addr);
    let saved = Inspector::open(&db).unwrap();
    assert!(saved.get(hostile).unwrap().is_some(), "nothing changed");
}

/// A dashboard with the token, acting as `ops <b>`, on a fresh store; the store, its two ids.
fn acting(dir: &tempfile::TempDir) -> (Dashboard, std::path::PathBuf, ScheduleId, ScheduleId) {
    let db = dir.path().join("s.db");
    let (bell, hostile) = store_with_schedules(&db);
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let dash = Dashboard::start(
        &db,
        &[
            "--action-token-file",
            token.to_str().unwrap(),
            "--actions-as",
            "ops <b>",
        ],
    );
    (dash, db, bell, hostile)
}

#[test]
fn behind_tls_a_session_cookie_is_secure_and_its_name_signs_the_pause() {
    // docs/serve.md §13.8, §13.17: `--http-behind-tls`, and a session acting through the binary.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let (bell, _) = store_with_schedules(&db);
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let dash = Dashboard::start(
        &db,
        &[
            "--action-token-file",
            token.to_str().unwrap(),
            "--http-behind-tls",
        ],
    );
    let addr = dash.addr.as_str();
    let signed = post(
        addr,
        "/dashboard/login",
        FORM,
        &format!("name=eve&token={TOKEN}"),
    );
    assert_eq!(signed.status, 303, "{}", signed.body);
    let line = signed
        .head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a session cookie");
    assert!(
        line.ends_with("; httponly; samesite=strict; max-age=43200; secure"),
        "{line}"
    );
    let cookie = line.split(';').next().unwrap();
    let page = http_client::http(
        addr,
        &format!(
            "GET /dashboard/schedules/{} HTTP/1.1\r\nCookie: {cookie}",
            bell.get()
        ),
    );
    let from = page
        .body
        .find("name=\"csrf\" value=\"")
        .expect("a CSRF field")
        + 19;
    let csrf = page.body[from..].split('"').next().unwrap();
    let paused = post(
        addr,
        &format!("/dashboard/schedules/{}/pause", bell.get()),
        &format!("{FORM}Cookie: {cookie}\r\n"),
        &format!("csrf={csrf}&note=lunch"),
    );
    assert_eq!(paused.status, 303, "{}", paused.body);
    assert_eq!(
        saved(&db, bell).pause.expect("paused").note,
        "lunch (by eve on the dashboard)"
    );
}

/// Read-only, there is nothing to sign in to, act on in bulk or audit (docs/serve.md §13.8).
fn assert_nothing_to_sign_in_to(addr: &str) {
    for path in [
        "/dashboard/login",
        "/dashboard/audit",
        "/dashboard/bulk/stop",
    ] {
        let answer = get(addr, path);
        assert_eq!(answer.status, 403, "{path}: {}", answer.body);
        assert!(answer.body.contains("read-only"), "{path}: {}", answer.body);
    }
    for path in ["/dashboard/login", "/dashboard/bulk/stop"] {
        let answer = post(addr, path, FORM, &format!("token={TOKEN}&count=2"));
        assert_eq!(answer.status, 403, "{path}: {}", answer.body);
        assert!(!answer.head.contains("set-cookie"), "{path}");
    }
    let list = get(addr, "/dashboard").body;
    assert!(!list.contains("/dashboard/login") && !list.contains("/dashboard/audit"));
}

#[test]
fn actions_without_the_token_or_from_another_origin_change_nothing() {
    // docs/serve.md §13.13, §13.8
    let dir = tempfile::tempdir().unwrap();
    let (dash, db, bell, _) = acting(&dir);
    let addr = dash.addr.as_str();
    let page = get(addr, &format!("/dashboard/schedules/{}", bell.get()));
    assert!(
        page.body.contains("to act as <b>ops &lt;b&gt;</b>"),
        "{}",
        page.body
    );
    let path = |action: &str| format!("/dashboard/schedules/{}/{action}", bell.get());
    // Refusals change nothing: a wrong token, another origin, not a form, an unknown action.
    let wrong = post(addr, &path("pause"), FORM, "token=not-the-token-at-all");
    assert_eq!(wrong.status, 403, "{}", wrong.body);
    let cross = post(
        addr,
        &path("pause"),
        &format!("{FORM}Origin: http://evil.example\r\n"),
        &format!("token={TOKEN}"),
    );
    assert_eq!(cross.status, 403, "{}", cross.body);
    let fetch_site = post(
        addr,
        &path("pause"),
        &format!("{FORM}Sec-Fetch-Site: cross-site\r\n"),
        &format!("token={TOKEN}"),
    );
    assert_eq!(fetch_site.status, 403, "{}", fetch_site.body);
    let not_form = post(addr, &path("pause"), "Content-Type: text/plain\r\n", "x");
    assert_eq!(not_form.status, 415);
    let melt = post(addr, &path("melt"), FORM, &format!("token={TOKEN}"));
    assert_eq!(melt.status, 404, "{}", melt.body);
    let huge = post(addr, &path("pause"), FORM, &"a".repeat(10_000));
    assert_eq!(huge.status, 413);
    let missing = post(
        addr,
        "/dashboard/schedules/424242/pause",
        FORM,
        &format!("token={TOKEN}"),
    );
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert!(saved(&db, bell).pause.is_none());
}

#[test]
fn with_the_token_actions_are_the_store_operators() {
    // docs/serve.md §13.13, §13.8
    let dir = tempfile::tempdir().unwrap();
    let (dash, db, bell, hostile) = acting(&dir);
    let addr = dash.addr.as_str();
    let path = |action: &str| format!("/dashboard/schedules/{}/{action}", bell.get());
    // Pause, with the name in the note; trigger; resume; stop.
    let paused = post(
        addr,
        &path("pause"),
        FORM,
        &format!("token={TOKEN}&note=lunch"),
    );
    assert_eq!(paused.status, 303, "{}", paused.body);
    assert!(
        paused
            .head
            .contains(&format!("location: /dashboard/schedules/{}", bell.get()))
    );
    let pause = saved(&db, bell).pause.expect("paused in the store");
    assert_eq!(pause.note, "lunch (by ops <b> on the dashboard)");
    assert_eq!(
        post(addr, &path("trigger"), FORM, &format!("token={TOKEN}")).status,
        303
    );
    assert!(saved(&db, bell).trigger_pending);
    assert_eq!(
        post(addr, &path("resume"), FORM, &format!("token={TOKEN}")).status,
        303
    );
    assert!(saved(&db, bell).pause.is_none());
    let stopped = post(
        addr,
        &format!("/dashboard/schedules/{}/stop", hostile.get()),
        FORM,
        &format!("token={TOKEN}"),
    );
    assert_eq!(stopped.status, 303, "{}", stopped.body);
    assert!(
        stopped.head.contains("location: /dashboard\r")
            || stopped.head.ends_with("location: /dashboard")
    );
    assert_eq!(Inspector::open(&db).unwrap().get(hostile).unwrap(), None);
    assert!(
        get(addr, "/dashboard")
            .body
            .contains("1 of 1 live schedules")
    );
}

#[test]
fn a_missing_store_or_a_bad_token_file_stops_it_at_start() {
    // docs/serve.md §13.13
    let dir = tempfile::tempdir().unwrap();
    let missing = dashboard_process::run_to_end(&[
        "dashboard",
        "--db",
        dir.path().join("none.db").to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
    ]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no schedule store at"));
    let db = dir.path().join("s.db");
    store_with_schedules(&db);
    let short = dir.path().join("short");
    std::fs::write(&short, "short\n").unwrap();
    let bad_token = dashboard_process::run_to_end(&[
        "dashboard",
        "--db",
        db.to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
        "--action-token-file",
        short.to_str().unwrap(),
    ]);
    assert_eq!(bad_token.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad_token.stderr).contains("at least 16 bytes"),
        "{}",
        String::from_utf8_lossy(&bad_token.stderr)
    );
}

/// A schedule's page as a person reads it (docs/serve.md §13.2): the fields grouped, the recent
/// firings with how late each started and how long it took, and the next runs — of the bell,
/// which has fired three times.
fn assert_detail_reads_as_people_read(body: &str) {
    for shown in [
        "<h2>Cadence</h2>",
        "<dt>interval</dt><dd>1 s</dd>",
        "<h2>Policies</h2>",
        "<dt>catch-up</dt><dd>",
        "<h2>Counters</h2>",
        "<dt>runs</dt><dd>3</dd>",
        // The lateness percentiles over the kept history and why points were missed
        // (docs/schedules.md §9.15, §9.16): none missed, three firings measured.
        "<dt>late, p99</dt><dd>+0.",
        "<dt>firings measured</dt><dd>3</dd>",
        "<dt>missed, by reason</dt><dd><span class=\"muted\">none</span></dd>",
        "<th class=\"num\">late</th><th class=\"num\">took</th>",
        "<span class=\"badge active\">active</span>",
    ] {
        assert!(body.contains(shown), "{shown}: {body}");
    }
    assert!(!body.contains("<h2>Pause</h2>"), "not paused");
    let firings = body.split("<table id=\"firings\">").nth(1).unwrap();
    let firings = firings.split("</table>").next().unwrap();
    assert_eq!(
        firings
            .matches("<span class=\"badge ok\">ok</span>")
            .count(),
        3,
        "{firings}"
    );
    // How late each started, signed, and how long each took, in milliseconds.
    assert_eq!(
        firings.matches("<td class=\"num\">+0.").count(),
        3,
        "{firings}"
    );
    assert_eq!(firings.matches(" ms</td>").count(), 3, "{firings}");
    let next = body.split("<ol id=\"next-runs\">").nth(1).unwrap();
    assert_eq!(
        next.split("</ol>")
            .next()
            .unwrap()
            .matches("<li><time datetime=")
            .count(),
        5
    );
}

/// The owner cells of a list page, in order.
fn owners(body: &str) -> Vec<String> {
    body.split("<tr>")
        .skip(2)
        .filter_map(|row| row.split("<td>").nth(2)?.split("</td>").next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_servers_world_shows_its_players_by_name() {
    // docs/serve.md §13.13: a world made by a real `tickstep serve`, its players in the world
    // file beside the store; read-only, through SQLite.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("world.db");
    let server = serve_client::Server::start(&db, &[]);
    let mut alice = server.login("alice");
    let tea = ScheduleId::from_raw(serve_client::id_of(&alice.ask("every 3600 tell tea")));
    let mut bob = server.login("bob");
    let coffee = ScheduleId::from_raw(serve_client::id_of(&bob.ask("every 60 tell coffee")));
    let (alice_id, bob_id) = (saved(&db, tea).owner, saved(&db, coffee).owner);
    assert_ne!(alice_id, bob_id);
    {
        // While the server holds its world file (exclusively, docs/serve.md §12.4) the names
        // cannot be read: owners show as ids, and the page is not held up.
        let dash = Dashboard::start(&db, &[]);
        let list = get(&dash.addr, "/dashboard");
        assert_eq!(list.status, 200, "{}", list.body);
        assert_eq!(
            owners(&list.body),
            [alice_id.to_string(), bob_id.to_string()]
        );
    }
    alice.quit();
    bob.quit();
    server.shutdown();
    let world = std::fs::read(dir.path().join("world.db.world")).unwrap();

    let dash = Dashboard::start(&db, &[]);
    let addr = dash.addr.as_str();
    let list = get(addr, "/dashboard");
    assert_eq!(owners(&list.body), ["alice", "bob"], "{}", list.body);
    for (query, matched) in [
        ("owner=alice", "1 of 2"),
        ("owner=bob", "1 of 2"),
        // An id still names its owner; a name nobody has matches nothing.
        (&format!("owner=%23{}", bob_id.0) as &str, "1 of 2"),
        ("owner=carol", "0 of 2"),
        // q= finds an owner's name as well as the verb, arguments and key.
        ("q=ali", "1 of 2"),
        ("q=coffee", "1 of 2"),
        ("q=tell", "2 of 2"),
    ] {
        let page = get(addr, &format!("/dashboard?{query}"));
        assert!(
            page.body.contains(&format!("{matched} live schedules")),
            "{query}: {}",
            page.body
        );
    }
    let only_bob = get(addr, "/dashboard?q=bo");
    assert_eq!(owners(&only_bob.body), ["bob"]);
    let detail = get(addr, &format!("/dashboard/schedules/{}", tea.get()));
    assert!(detail.body.contains("alice"), "{}", detail.body);
    drop(dash);
    // Read, never written: the world file is as the server left it (a WAL reader's index
    // beside it aside), and the next server finds its players where they were.
    assert_eq!(
        std::fs::read(dir.path().join("world.db.world")).unwrap(),
        world
    );
    let again = serve_client::Server::start(&db, &[]);
    let mut alice = again.login("alice");
    let later = ScheduleId::from_raw(serve_client::id_of(&alice.ask("every 60 tell later")));
    assert_eq!(saved(&db, later).owner, alice_id);
    alice.quit();
    again.shutdown();
}
