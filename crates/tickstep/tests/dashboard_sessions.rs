//! The dashboard's sessions, bulk actions and audit (docs/serve.md §13.8, §13.16, §13.17), over
//! real HTTP: `store_router` on a `SQLite` store, served on a loopback listener by a tokio thread,
//! asked by a plain client. Sign-in once for a `HttpOnly; SameSite=Strict` cookie (`Secure`
//! behind TLS), a cookie the server never issued refused, sign-out ending the session, an idle
//! session over (an idle limit of zero, so nothing sleeps), sign-ins rate-limited, the CSRF token
//! required, the action token never in any answer; bulk actions through their confirm step, a
//! stale confirm refused, at most 1,000 acted on; every action in the audit with who did it. Every
//! wait is bounded; the assertions are about what was answered and what the store holds.

mod http_client;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::dashboard::{ActionGrant, DashboardOptions, SessionLimits};
use tickstep::kernel::ManualClock;
use tickstep::schedules::{Inspector, ObjId, Options, ScheduleId, StoredSchedule, Value};

use http_client::{Answer, FORM, http, post};

const TOKEN: &str = "session-test-token-0123456789";

/// A store of `rings` schedules of verb `ring` and `chimes` of verb `chime`; their ids.
fn store(path: &Path, rings: usize, chimes: usize) -> Vec<ScheduleId> {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(path)
        .build()
        .unwrap();
    rt.verb("ring", |_| Ok(Value::Int(0)));
    rt.verb("chime", |_| Ok(Value::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    let mut ids = Vec::new();
    for (verb, n) in [("ring", rings), ("chime", chimes)] {
        for _ in 0..n {
            ids.push(
                txn.schedule_every(ObjId(1), verb, 60.0, vec![], Options::new())
                    .unwrap(),
            );
        }
    }
    txn.commit().unwrap();
    rt.shutdown().unwrap();
    ids
}

/// Serves the store's dashboard with `options` (the grant added) on a loopback port, on a
/// thread of its own that ends with the test process; its address.
fn serve(db: &Path, mut options: DashboardOptions) -> String {
    options.grant = Some(ActionGrant::new(TOKEN, "ops").unwrap());
    let app = tickstep::dashboard::store_router(db, options).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let threads = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        threads.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let app = app.into_make_service_with_connect_info::<SocketAddr>();
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the listener binds")
        .to_string()
}

fn saved(db: &Path, id: ScheduleId) -> StoredSchedule {
    Inspector::open(db)
        .unwrap()
        .get(id)
        .unwrap()
        .expect("saved")
}

/// Everything answered, so the test can say the token was in none of it.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn keep(&mut self, answer: Answer) -> Answer {
        self.0.push(format!("{}\n{}", answer.head, answer.body));
        answer
    }
}

fn get_with(addr: &str, path: &str, cookie: &str) -> Answer {
    http(addr, &format!("GET {path} HTTP/1.1\r\nCookie: {cookie}"))
}

fn post_with(addr: &str, path: &str, cookie: &str, body: &str) -> Answer {
    post(addr, path, &format!("{FORM}Cookie: {cookie}\r\n"), body)
}

/// Signs in as `name`; the `name=value` of the cookie it was given, and the `Set-Cookie` line.
fn sign_in(addr: &str, name: &str) -> (String, String) {
    let answer = post(
        addr,
        "/dashboard/login",
        FORM,
        &format!("name={name}&token={TOKEN}"),
    );
    assert_eq!(answer.status, 303, "{}", answer.body);
    assert!(
        answer.head.contains("location: /dashboard\r\n"),
        "{}",
        answer.head
    );
    let line = answer
        .head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a cookie")
        .to_owned();
    let pair = line.split(';').next().unwrap().to_owned();
    (pair, line)
}

/// The value of the first hidden `csrf` field of `page`.
fn csrf(page: &str) -> String {
    let from = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    page[from..].split('"').next().unwrap().to_owned()
}

#[test]
fn one_sign_in_gives_a_strict_http_only_session_that_acts_until_sign_out() {
    // docs/serve.md §13.8, §13.17
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let ids = store(&db, 2, 0);
    let addr = serve(&db, DashboardOptions::default());
    let addr = addr.as_str();
    let mut seen = Seen::default();
    signed_out(addr, ids[0], &mut seen);
    let (cookie, again) = signed_in(addr, &mut seen);
    let token = refused_then_done(addr, &db, &ids, &cookie, &mut seen);
    signed_out_again(addr, &db, ids[0], &cookie, &again, &token, &mut seen);
    for answer in &seen.0 {
        assert!(!answer.contains(TOKEN), "the token was answered: {answer}");
    }
}

/// Signed out: a way in, no action forms, actions refused; wrong sign-ins refused.
fn signed_out(addr: &str, id: ScheduleId, seen: &mut Seen) {
    let pause = format!("/dashboard/schedules/{}/pause", id.get());
    // Signed out: a way in, no action forms, and actions refused without the session.
    let list = seen.keep(http(addr, "GET /dashboard HTTP/1.1"));
    assert!(
        list.body.contains("href=\"/dashboard/login\""),
        "{}",
        list.body
    );
    assert!(!list.body.contains("name=\"csrf\""));
    let detail = seen.keep(http(
        addr,
        &format!("GET /dashboard/schedules/{} HTTP/1.1", id.get()),
    ));
    assert!(
        detail.body.contains("Sign in</a> to pause"),
        "{}",
        detail.body
    );
    let confirm = seen.keep(http(addr, &format!("GET {pause} HTTP/1.1")));
    assert_eq!(confirm.status, 303);
    assert!(confirm.head.contains("location: /dashboard/login"));
    let form = seen.keep(http(addr, "GET /dashboard/login HTTP/1.1"));
    assert_eq!(form.status, 200);
    assert!(form.body.contains("type=\"password\" name=\"token\""));
    let refused = seen.keep(post(addr, &pause, FORM, "note=x"));
    assert_eq!(refused.status, 403);
    assert!(refused.body.contains("sign in first"), "{}", refused.body);

    // A wrong token: 403, no cookie, nothing said about what was wrong; another site: 403.
    let wrong = seen.keep(post(
        addr,
        "/dashboard/login",
        FORM,
        "name=eve&token=guess-guess-guess",
    ));
    assert_eq!(wrong.status, 403);
    assert_eq!(wrong.body, "sign-in refused (docs/serve.md §13.8)\n");
    assert!(!wrong.head.contains("set-cookie"));
    let cross = seen.keep(post(
        addr,
        "/dashboard/login",
        &format!("{FORM}Origin: http://evil.example\r\n"),
        &format!("token={TOKEN}"),
    ));
    assert_eq!(cross.status, 403);
    assert!(!cross.head.contains("set-cookie"));
    // A name that would turn a log line or a note around is refused, shown escaped.
    let bidi = seen.keep(post(
        addr,
        "/dashboard/login",
        FORM,
        &format!("name=eve%E2%80%AEevil&token={TOKEN}"),
    ));
    assert_eq!(bidi.status, 400, "{}", bidi.body);
    assert!(bidi.body.contains("eve\\u{202e}evil"), "{}", bidi.body);
    assert!(!bidi.head.contains("set-cookie"));
}

/// Signs in twice; the two cookies, after checking the first's attributes.
fn signed_in(addr: &str, seen: &mut Seen) -> (String, String) {
    // The right token: a random id in a strict, HttpOnly cookie scoped to the dashboard.
    let (cookie, line) = sign_in(addr, "alice");
    let id = cookie.strip_prefix("tickstep_session=").unwrap();
    assert_eq!(id.len(), 64);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        line.split("; ").skip(1).collect::<Vec<_>>(),
        [
            "path=/dashboard",
            "httponly",
            "samesite=strict",
            "max-age=43200"
        ],
        "not Secure unless behind TLS"
    );
    let (again, _) = sign_in(addr, "alice");
    assert_ne!(again, cookie, "every sign-in a new id");
    let list = seen.keep(get_with(addr, "/dashboard", &cookie));
    assert!(
        list.body
            .contains("signed in as <b id=\"signed-in\">alice</b>"),
        "{}",
        list.body
    );
    assert!(list.body.contains("id=\"bulk-pause\""));
    (cookie, again)
}

/// Refusals without the CSRF token or with a planted cookie, then the pause done as alice and a
/// script's trigger, both in the audit; the session's CSRF token.
fn refused_then_done(
    addr: &str,
    db: &Path,
    ids: &[ScheduleId],
    cookie: &str,
    seen: &mut Seen,
) -> String {
    let cookie = cookie.to_owned();
    let pause = format!("/dashboard/schedules/{}/pause", ids[0].get());

    // Signed in: the actions with the CSRF token and no token field.
    let detail = seen.keep(get_with(
        addr,
        &format!("/dashboard/schedules/{}", ids[0].get()),
        &cookie,
    ));
    assert!(!detail.body.contains("name=\"token\""));
    let token = csrf(&detail.body);
    assert_eq!(token.len(), 64);
    let confirm = seen.keep(get_with(addr, &pause, &cookie));
    assert_eq!(confirm.status, 200);
    assert_eq!(csrf(&confirm.body), token);

    // The CSRF token missing or wrong, or from another site: 403, nothing done.
    for body in [
        "note=x".to_owned(),
        format!("note=x&csrf={}", "0".repeat(64)),
    ] {
        let refused = seen.keep(post_with(addr, &pause, &cookie, &body));
        assert_eq!(refused.status, 403, "{body}");
        assert!(refused.body.contains("CSRF"), "{}", refused.body);
    }
    let cross = seen.keep(post(
        addr,
        &pause,
        &format!("{FORM}Cookie: {cookie}\r\nSec-Fetch-Site: cross-site\r\n"),
        &format!("csrf={token}"),
    ));
    assert_eq!(cross.status, 403);
    // A cookie this server never issued is no session, whatever CSRF token comes with it.
    let planted = format!("tickstep_session={}", "a".repeat(64));
    let fixed = seen.keep(post_with(addr, &pause, &planted, &format!("csrf={token}")));
    assert_eq!(fixed.status, 403);
    assert!(fixed.body.contains("sign in first"));
    assert!(
        seen.keep(get_with(addr, "/dashboard", &planted))
            .body
            .contains("href=\"/dashboard/login\"")
    );
    assert!(
        saved(db, ids[0]).pause.is_none(),
        "nothing done by any refusal"
    );

    // With both: done, as alice, who the pause note and the audit name.
    let paused = seen.keep(post_with(
        addr,
        &pause,
        &cookie,
        &format!("csrf={token}&note=lunch"),
    ));
    assert_eq!(paused.status, 303, "{}", paused.body);
    assert_eq!(
        saved(db, ids[0]).pause.unwrap().note,
        "lunch (by alice on the dashboard)"
    );
    // A script still acts with the token, under the grant's name.
    let scripted = seen.keep(post(
        addr,
        &format!("/dashboard/schedules/{}/trigger", ids[1].get()),
        FORM,
        &format!("token={TOKEN}"),
    ));
    assert_eq!(scripted.status, 303, "{}", scripted.body);
    let audit = seen.keep(get_with(addr, "/dashboard/audit", &cookie));
    assert_eq!(audit.status, 200);
    let rows: Vec<&str> = audit.body.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{}", audit.body);
    assert!(
        rows[0].contains("<td>ops</td>") && rows[0].contains("trigger"),
        "{}",
        rows[0]
    );
    assert!(rows[0].contains("127.0.0.1"));
    assert!(
        rows[1].contains("<td>alice</td>") && rows[1].contains("pause"),
        "{}",
        rows[1]
    );
    assert!(rows[1].contains(">done<"));
    token
}

/// Sign-out needs the CSRF token and ends that session only.
fn signed_out_again(
    addr: &str,
    db: &Path,
    id: ScheduleId,
    cookie: &str,
    again: &str,
    token: &str,
    seen: &mut Seen,
) {
    // Sign-out needs the CSRF token, clears the cookie and ends the session.
    assert_eq!(
        seen.keep(post_with(addr, "/dashboard/logout", cookie, ""))
            .status,
        403
    );
    let out = seen.keep(post_with(
        addr,
        "/dashboard/logout",
        cookie,
        &format!("csrf={token}"),
    ));
    assert_eq!(out.status, 303);
    assert!(
        out.head.contains(
            "set-cookie: tickstep_session=; path=/dashboard; httponly; samesite=strict; max-age=0"
        ),
        "{}",
        out.head
    );
    let resume = format!("/dashboard/schedules/{}/resume", id.get());
    let after = seen.keep(post_with(addr, &resume, cookie, &format!("csrf={token}")));
    assert_eq!(after.status, 403);
    assert!(
        saved(db, id).pause.is_some(),
        "the ended session did nothing"
    );
    // The other sign-in's session is its own, and still acts.
    let page = seen.keep(get_with(addr, "/dashboard", again));
    let other = csrf(&page.body);
    assert_ne!(other, token, "each session its own CSRF token");
    let resumed = seen.keep(post_with(addr, &resume, again, &format!("csrf={other}")));
    assert_eq!(resumed.status, 303, "{}", resumed.body);
    assert!(saved(db, id).pause.is_none());
}

#[test]
fn behind_tls_the_cookie_is_secure_and_an_idle_session_is_over() {
    // docs/serve.md §13.8: an idle limit of zero ends a session before its next request.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let ids = store(&db, 1, 0);
    let addr = serve(
        &db,
        DashboardOptions {
            behind_tls: true,
            sessions: SessionLimits {
                idle: Duration::ZERO,
                ..SessionLimits::default()
            },
            ..DashboardOptions::default()
        },
    );
    let (cookie, line) = sign_in(&addr, "bob");
    assert!(line.ends_with("; secure"), "{line}");
    let list = get_with(&addr, "/dashboard", &cookie);
    assert!(
        list.body.contains("href=\"/dashboard/login\""),
        "over: signed out"
    );
    assert!(!list.body.contains("signed in as"));
    let paused = post_with(
        &addr,
        &format!("/dashboard/schedules/{}/pause", ids[0].get()),
        &cookie,
        "csrf=whatever",
    );
    assert_eq!(paused.status, 403);
    assert!(saved(&db, ids[0]).pause.is_none());
}

#[test]
fn sign_ins_are_rate_limited_per_address_and_overall() {
    // docs/serve.md §13.8
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    store(&db, 1, 0);
    let addr = serve(&db, DashboardOptions::default());
    for n in 0..10 {
        let wrong = post(&addr, "/dashboard/login", FORM, "token=wrong-wrong-wrong");
        assert_eq!(wrong.status, 403, "attempt {n}");
    }
    let limited = post(&addr, "/dashboard/login", FORM, &format!("token={TOKEN}"));
    assert_eq!(limited.status, 429, "{}", limited.body);
    assert!(limited.head.contains("retry-after: 60"));
    assert!(limited.body.contains("this address"));
    assert!(
        !limited.head.contains("set-cookie"),
        "not even the right token"
    );

    let overall = serve(
        &db,
        DashboardOptions {
            sessions: SessionLimits {
                logins_overall: 2,
                ..SessionLimits::default()
            },
            ..DashboardOptions::default()
        },
    );
    sign_in(&overall, "a");
    sign_in(&overall, "b");
    let limited = post(
        &overall,
        "/dashboard/login",
        FORM,
        &format!("token={TOKEN}"),
    );
    assert_eq!(limited.status, 429);
    assert!(limited.body.contains("everyone"), "{}", limited.body);
}

#[test]
fn a_bulk_action_confirms_the_count_and_filter_then_acts_on_each_match() {
    // docs/serve.md §13.16, §13.17
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let ids = store(&db, 3, 2);
    let addr = serve(&db, DashboardOptions::default());
    let addr = addr.as_str();
    let (cookie, _) = sign_in(addr, "carol");
    let confirm = get_with(addr, "/dashboard/bulk/pause?verb=ring", &cookie);
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    assert!(
        confirm
            .body
            .contains("<b>pause</b> 3 schedules matching verb=ring"),
        "{}",
        confirm.body
    );
    assert!(
        confirm
            .body
            .contains("action=\"/dashboard/bulk/pause?verb=ring\"")
    );
    assert!(confirm.body.contains("name=\"count\" value=\"3\""));
    let token = csrf(&confirm.body);

    // A confirm that no longer holds (another count) does nothing.
    let stale = post_with(
        addr,
        "/dashboard/bulk/pause?verb=ring",
        &cookie,
        &format!("csrf={token}&count=4"),
    );
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(
        stale
            .body
            .contains("now matches 3 schedules, not the 4 confirmed")
    );
    // Without the CSRF token, nothing either.
    assert_eq!(
        post_with(addr, "/dashboard/bulk/pause?verb=ring", &cookie, "count=3").status,
        403
    );
    assert!(ids.iter().all(|id| saved(&db, *id).pause.is_none()));

    let done = post_with(
        addr,
        "/dashboard/bulk/pause?verb=ring",
        &cookie,
        &format!("csrf={token}&count=3&note=maintenance"),
    );
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(
        done.body
            .contains("pause: 3 done, 0 refused, of the 3 schedules matching verb=ring"),
        "{}",
        done.body
    );
    for id in &ids[..3] {
        assert_eq!(
            saved(&db, *id).pause.expect("paused").note,
            "maintenance (by carol on the dashboard)"
        );
        assert!(
            done.body
                .contains(&format!("href=\"/dashboard/schedules/{}\"", id.get()))
        );
    }
    assert!(
        ids[3..].iter().all(|id| saved(&db, *id).pause.is_none()),
        "chimes untouched"
    );
    let audit = get_with(addr, "/dashboard/audit", &cookie).body;
    assert_eq!(audit.matches("(bulk)").count(), 3, "{audit}");
    assert_eq!(audit.matches("<td>carol</td>").count(), 3);

    // An empty filter's confirm says so and offers nothing to confirm.
    let none = get_with(addr, "/dashboard/bulk/stop?verb=nothing", &cookie);
    assert!(none.body.contains("No schedule matches"));
    assert!(!none.body.contains("bulk-confirm"));
    // Unknown actions and filters are refused; signed out, the confirm sends to sign in.
    assert_eq!(get_with(addr, "/dashboard/bulk/melt", &cookie).status, 404);
    assert_eq!(
        get_with(addr, "/dashboard/bulk/stop?kind=weekly", &cookie).status,
        400
    );
    assert_eq!(http(addr, "GET /dashboard/bulk/stop HTTP/1.1").status, 303);
}

#[test]
fn a_bulk_action_acts_on_at_most_two_hundred_and_says_so() {
    // docs/serve.md §13.16; the script path (token=) acts in bulk too.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let ids = store(&db, 201, 0);
    let addr = serve(&db, DashboardOptions::default());
    let (cookie, _) = sign_in(&addr, "dave");
    let confirm = get_with(&addr, "/dashboard/bulk/stop", &cookie);
    assert!(
        confirm
            .body
            .contains("<b>stop</b> 200 schedules (every live schedule)"),
        "{}",
        confirm.body
    );
    assert!(
        confirm
            .body
            .contains("201 match; one request acts on at most 200")
    );
    let done = post(
        &addr,
        "/dashboard/bulk/stop",
        FORM,
        &format!("token={TOKEN}&count=201"),
    );
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(
        done.body.contains("stop: 200 done, 0 refused"),
        "{}",
        done.body
    );
    let left = Inspector::open(&db).unwrap().list().unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, ids[200], "the first 200 by id went");
}
