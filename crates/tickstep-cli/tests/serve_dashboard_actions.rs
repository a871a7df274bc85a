//! The dashboard's actions on `tickstep serve --http` (docs/serve.md §13.8): read-only without
//! an action token; with one, a signed-in browser (or a script giving the token) pauses, resumes,
//! triggers and stops as a named player under that player's permissions; another origin, a wrong
//! token or a missing CSRF token changes nothing. Over real HTTP; every wait is bounded.

#[path = "../../tickstep/tests/http_client/mod.rs"]
mod http_client;
mod serve_client;

use std::path::PathBuf;

use http_client::{FORM, get, http, post};
use serve_client::{Server, id_of};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

const TOKEN: &str = "correct-horse-battery-staple";

fn token_file(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn without_a_token_the_dashboard_is_read_only() {
    // docs/serve.md §13.8
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    let id = id_of(&alice.ask("every 3600 tell hourly"));
    let refused = post(
        &addr,
        &format!("/dashboard/schedules/{id}/stop"),
        FORM,
        &format!("token={TOKEN}"),
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("read-only"), "{}", refused.body);
    let page = get(&addr, &format!("/dashboard/schedules/{id}"));
    assert!(!page.body.contains("method=\"post\""));
    let confirm = get(&addr, &format!("/dashboard/schedules/{id}/stop"));
    assert_eq!(confirm.status, 403, "{}", confirm.body);
    assert!(confirm.body.contains("read-only"), "{}", confirm.body);
    assert!(alice.ask(&format!("info {id}")).starts_with("ok:"));
    server.shutdown();
}

/// A server whose dashboard acts as the wizard, alice with an hourly schedule, and its id.
fn acting_server(dir: &tempfile::TempDir) -> (Server, String, serve_client::Client, u64) {
    let token = token_file(dir);
    let server = Server::start(
        &store(dir),
        &["--http", "127.0.0.1:0", "--action-token-file", &token],
    );
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    let id = id_of(&alice.ask("every 3600 tell hourly"));
    (server, addr, alice, id)
}

#[test]
fn actions_without_the_token_or_from_another_origin_change_nothing() {
    // docs/serve.md §13.8
    let dir = tempfile::tempdir().unwrap();
    let (server, addr, mut alice, id) = acting_server(&dir);
    let path = |action: &str| format!("/dashboard/schedules/{id}/{action}");
    let good = format!("token={TOKEN}&note=deploy+%3Cb%3E");
    let same = format!("{FORM}Origin: http://{addr}\r\n");

    let page = get(&addr, &format!("/dashboard/schedules/{id}"));
    // Signed out, the page offers a sign-in, not the forms (docs/serve.md §13.8).
    assert!(
        page.body.contains("to act as <b>merlin</b>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("href=\"/dashboard/login\""));
    assert!(!page.body.contains(&format!("action=\"{}\"", path("pause"))));

    let refusals: &[(&str, String, String, u16, &str)] = &[
        (
            "pause",
            FORM.to_owned(),
            "token=wrong".to_owned(),
            403,
            "a wrong action token",
        ),
        (
            "pause",
            FORM.to_owned(),
            String::new(),
            403,
            "sign in first",
        ),
        (
            "pause",
            format!("{FORM}Origin: http://evil.example\r\n"),
            good.clone(),
            403,
            "another origin",
        ),
        (
            "pause",
            format!("{FORM}Sec-Fetch-Site: cross-site\r\n"),
            good.clone(),
            403,
            "another origin",
        ),
        (
            "pause",
            "Content-Type: text/plain\r\n".to_owned(),
            good.clone(),
            415,
            "a form",
        ),
        (
            "explode",
            FORM.to_owned(),
            good.clone(),
            404,
            "no action \"explode\"",
        ),
        (
            "pause",
            FORM.to_owned(),
            "token=%zz".to_owned(),
            400,
            "bad %-escape",
        ),
        (
            "pause",
            FORM.to_owned(),
            format!("token={TOKEN}&note={}", "n".repeat(5_000)),
            413,
            "",
        ),
    ];
    for (action, headers, body, status, says) in refusals {
        let answer = post(&addr, &path(action), headers, body);
        assert_eq!(
            answer.status, *status,
            "{action} {headers:?}: {}",
            answer.body
        );
        assert!(answer.body.contains(says), "{action}: {}", answer.body);
    }
    let unknown = post(&addr, "/dashboard/schedules/424242/pause", &same, &good);
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let bad_id = post(&addr, "/dashboard/schedules/x/pause", &same, &good);
    assert_eq!(bad_id.status, 400, "{}", bad_id.body);
    assert!(
        !alice.ask(&format!("info {id}")).contains("paused"),
        "nothing refused changed the schedule"
    );
    server.shutdown();
}

#[test]
fn behind_tls_serve_marks_its_session_cookie_secure() {
    // docs/serve.md §13.8: `--http-behind-tls`.
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(&dir);
    let server = Server::start(
        &store(&dir),
        &[
            "--http",
            "127.0.0.1:0",
            "--action-token-file",
            &token,
            "--http-behind-tls",
        ],
    );
    let signed = post(
        &server.http_addr(),
        "/dashboard/login",
        FORM,
        &format!("token={TOKEN}"),
    );
    assert_eq!(signed.status, 303, "{}", signed.body);
    assert!(
        signed
            .head
            .contains("; samesite=strict; max-age=43200; secure\r\n"),
        "{}",
        signed.head
    );
    server.shutdown();
}

/// Signs in to the dashboard at `addr` with the token; the session cookie's `name=value`.
fn sign_in(addr: &str) -> String {
    let answer = post(addr, "/dashboard/login", FORM, &format!("token={TOKEN}"));
    assert_eq!(answer.status, 303, "{}", answer.body);
    let line = answer
        .head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a session cookie");
    line.split(';').next().unwrap().to_owned()
}

#[test]
fn the_wizards_token_pauses_resumes_triggers_and_stops() {
    // docs/serve.md §13.8
    let dir = tempfile::tempdir().unwrap();
    let (server, addr, mut alice, id) = acting_server(&dir);
    let path = |action: &str| format!("/dashboard/schedules/{id}/{action}");
    let good = format!("token={TOKEN}&note=deploy+%3Cb%3E");
    let same = format!("{FORM}Origin: http://{addr}\r\n");

    // Without the page's script, each action's link is a confirm page holding its form
    // (docs/serve.md §13.8); asking changes nothing. Signed out, it sends to the sign-in.
    assert_eq!(get(&addr, &path("pause")).status, 303);
    let cookie = sign_in(&addr);
    let get =
        |addr: &str, path: &str| http(addr, &format!("GET {path} HTTP/1.1\r\nCookie: {cookie}"));
    for action in ["pause", "resume", "trigger", "stop"] {
        let page = get(&addr, &path(action));
        assert_eq!(page.status, 200, "{action}: {}", page.body);
        assert!(
            page.body.contains(&format!(
                "<form class=\"confirm\" method=\"post\" action=\"{}\">",
                path(action)
            )),
            "{action}: {}",
            page.body
        );
        assert!(
            page.body.contains(&format!("<button id=\"{action}\"")),
            "{action}"
        );
        assert!(
            page.body
                .contains(&format!("<a href=\"/dashboard/schedules/{id}\">Cancel</a>"))
        );
        http_client::assert_own_files(&addr, &page.body);
    }
    assert!(!alice.ask(&format!("info {id}")).contains("paused"));
    let melt = get(&addr, &path("melt"));
    assert_eq!(melt.status, 404, "{}", melt.body);
    assert!(melt.body.contains("no action \"melt\""), "{}", melt.body);
    assert_eq!(get(&addr, "/dashboard/schedules/999/pause").status, 404);
    // The page's own links open the same forms in dialogs.
    let detail = get(&addr, &format!("/dashboard/schedules/{id}")).body;
    assert!(
        detail.contains(&format!(
            "href=\"{}\" data-confirm=\"confirm-pause\"",
            path("pause")
        )),
        "{detail}"
    );
    assert!(detail.contains("<dialog id=\"confirm-stop\""), "{detail}");

    // The wizard (the default) may pause, resume, trigger and stop anyone's schedule.
    let paused = post(&addr, &path("pause"), &same, &good);
    assert_eq!(paused.status, 303, "{}", paused.body);
    assert!(
        paused
            .head
            .contains(&format!("location: /dashboard/schedules/{id}"))
    );
    let info = alice.ask(&format!("info {id}"));
    // Who asked is in the note: the grant's name, for a script (docs/serve.md §13.17).
    assert!(
        info.ends_with("paused by merlin: deploy <b> (by merlin on the dashboard)"),
        "{info}"
    );
    assert_eq!(post(&addr, &path("resume"), &same, &good).status, 303);
    assert!(!alice.ask(&format!("info {id}")).contains("paused"));
    assert_eq!(post(&addr, &path("trigger"), FORM, &good).status, 303);
    assert_eq!(alice.expect("[#"), format!("[#{id}] hourly"));
    let stopped = post(&addr, &path("stop"), &same, &good);
    assert_eq!(stopped.status, 303, "{}", stopped.body);
    assert!(
        stopped.head.contains("location: /dashboard\r")
            || stopped.head.ends_with("location: /dashboard")
    );
    assert!(alice.ask(&format!("info {id}")).starts_with("error:"));
    server.shutdown();
}

#[test]
fn actions_as_a_player_meet_that_players_permissions() {
    // docs/serve.md §13.8, §4.4, §4.7
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(&dir);
    let server = Server::start(
        &store(&dir),
        &[
            "--http",
            "127.0.0.1:0",
            "--action-token-file",
            &token,
            "--actions-as",
            "bob",
        ],
    );
    let addr = server.http_addr();
    let good = format!("token={TOKEN}");
    let mut alice = server.login("alice");
    let alices = id_of(&alice.ask("every 3600 tell hourly"));
    // bob has never logged in: refused, naming him.
    let early = post(
        &addr,
        &format!("/dashboard/schedules/{alices}/stop"),
        FORM,
        &good,
    );
    assert_eq!(early.status, 403, "{}", early.body);
    assert!(
        early.body.contains("\"bob\", who has never logged in"),
        "{}",
        early.body
    );
    let mut bob = server.login("bob");
    let bobs = id_of(&bob.ask("every 3600 tell mine"));
    let refused = post(
        &addr,
        &format!("/dashboard/schedules/{alices}/stop"),
        FORM,
        &good,
    );
    // Another's schedule reads as one that is not there, status and words (docs/serve.md §4.7).
    assert_eq!(refused.status, 404, "{}", refused.body);
    assert_eq!(
        refused.body,
        format!("error: you have no schedule #{alices} (acting as bob)\n")
    );
    let missing = post(&addr, "/dashboard/schedules/999999/stop", FORM, &good);
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert_eq!(
        missing.body,
        "error: you have no schedule #999999 (acting as bob)\n"
    );
    assert!(alice.ask(&format!("info {alices}")).starts_with("ok:"));
    let own = post(
        &addr,
        &format!("/dashboard/schedules/{bobs}/stop"),
        FORM,
        &good,
    );
    assert_eq!(own.status, 303, "{}", own.body);
    assert!(bob.ask(&format!("info {bobs}")).starts_with("error:"));
    server.shutdown();
}
