//! The dashboard mounted by a `TokioDriver` host (docs/serve.md §13.10–§13.11): the router of
//! `tickstep::dashboard` on a loopback listener beside a running driver, asked over real HTTP by a
//! client thread — the list with hostile text as text, the commands page with each command's
//! mechanisms and priority, the live view's hot tasks, commands and last hour (docs/serve.md §13.18), the
//! overview page, bad input, and an action done
//! through the engine under the grant. The driver runs on the real clock (a TCP server); every
//! wait is bounded and the assertions are about what was answered, never how long it took.

mod http_client;
#[cfg(feature = "postgres")]
#[path = "../../tickstep-schedules/tests/common/pg.rs"]
mod pg;

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use tickstep::commands::Mechanism;
use tickstep::dashboard::{ActionGrant, DashboardOptions, LiveFrames, PlainHost};
use tickstep::schedules::{ObjId, Options, ScheduleId, Value};
use tickstep::{Runtime, TokioDriver};

use http_client::{Answer, FORM};

const TOKEN: &str = "tokio-host-token-0123";

fn get(addr: SocketAddr, path: &str) -> Answer {
    http_client::get(&addr.to_string(), path)
}

fn post(addr: SocketAddr, path: &str, form: &str) -> Answer {
    http_client::post(&addr.to_string(), path, FORM, form)
}

/// The live snapshot after two seconds of frames (the first may come before any frame ran).
fn live_snapshot(addr: SocketAddr) -> serde_json::Value {
    let seen = http_client::events(&addr.to_string(), 2);
    seen.into_iter().last().unwrap()
}

/// What the client found, checked on the test's thread.
struct Found {
    list: Answer,
    detail: Answer,
    commands: Answer,
    live: serde_json::Value,
    overview: Answer,
    bad: Vec<(String, u16, String)>,
    paused: Answer,
    refused_token: Answer,
    cluster: Answer,
}

fn client(addr: SocketAddr, hostile: ScheduleId) -> Found {
    let bad = [
        ("GET", "/dashboard/schedules/0", ""),
        ("GET", "/dashboard/schedules/x", ""),
        ("GET", "/dashboard/schedules/999", ""),
        ("GET", "/dashboard?sort=size", ""),
        ("GET", "/dashboard/commands?x=1", ""),
        ("GET", "/dashboard/cluster?x=1", ""),
        ("GET", "/dashboard/overview?x=1", ""),
        (
            "POST",
            "/dashboard/schedules/1/melt",
            "token=tokio-host-token-0123",
        ),
    ]
    .into_iter()
    .map(|(method, path, form)| {
        let answer = if method == "GET" {
            get(addr, path)
        } else {
            post(addr, path, form)
        };
        (path.to_owned(), answer.status, answer.body)
    })
    .collect();
    let id = hostile.get();
    let list = get(addr, "/dashboard");
    // Styled and scripted by its own static files only (docs/serve.md §13.3).
    http_client::assert_own_files(&addr.to_string(), &list.body);
    Found {
        list,
        detail: get(addr, &format!("/dashboard/schedules/{id}")),
        // After a second of frames: the command cycle has started the command.
        live: live_snapshot(addr),
        overview: get(addr, "/dashboard/overview"),
        commands: get(addr, "/dashboard/commands"),
        bad,
        refused_token: post(
            addr,
            &format!("/dashboard/schedules/{id}/pause"),
            "token=not-the-token-at-all",
        ),
        paused: post(
            addr,
            &format!("/dashboard/schedules/{id}/pause"),
            &format!("token={TOKEN}&note=%3Cb%3Elunch"),
        ),
        cluster: get(addr, "/dashboard/cluster"),
    }
}

/// Runs a driver with two schedules (one with hostile text) and a command, mounts its dashboard
/// with a grant for `#1`, and lets the client thread ask; what it found, and the runtime after.
fn serve_and_ask() -> (Found, Rc<Runtime>) {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&threads, async {
        let mut driver = TokioDriver::new(Runtime::builder().in_memory_store()).unwrap();
        let rt = Rc::clone(driver.runtime());
        rt.verb("ring", |_| Ok(Value::Int(0)));
        let wizard = ObjId(1);
        let mut txn = rt.schedules().begin(wizard);
        let hostile = txn
            .schedule_every(
                wizard,
                "ring",
                0.05,
                vec![Value::from("<script>window.pwned=1</script>\u{1b}[31m")],
                Options::new(),
            )
            .unwrap();
        txn.schedule_every(wizard, "ring", 3600.0, vec![], Options::new())
            .unwrap();
        txn.commit().unwrap();
        // A command holding a mechanism, at a priority, for the commands view.
        let arm = Mechanism::new(rt.commands(), "arm<1>");
        let hold = arm
            .run(|co| async move {
                co.park().await;
            })
            .with_priority(7)
            .named("hold <arm>");
        let _ = rt.commands().schedule(&hold);

        let frames = LiveFrames::default();
        let recorded = frames.clone();
        driver.on_frame(move |rt| recorded.record(rt.frame_loop().heartbeat_time(), None));
        let host = Rc::new(PlainHost { reader: wizard });
        let options = DashboardOptions {
            title: "tokio host".into(),
            grant: Some(ActionGrant::new(TOKEN, "#1").unwrap()),
            frames,
            ..Default::default()
        };
        let app = tickstep::dashboard::router(&rt, driver.handle(), &host, options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let http = tokio::task::spawn_local(async move {
            let app = app.into_make_service_with_connect_info::<SocketAddr>();
            axum::serve(listener, app).await.unwrap();
        });
        let asked = tokio::task::spawn_blocking(move || client(addr, hostile));
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let waiter = tokio::task::spawn_local(async move {
            let _ = done_tx.send(asked.await.unwrap());
        });
        let (found_tx, found_rx) = std::sync::mpsc::channel();
        driver
            .run_until(async move {
                let found = tokio::time::timeout(Duration::from_secs(120), done_rx)
                    .await
                    .expect("the client finishes within two minutes")
                    .unwrap();
                found_tx.send(found).unwrap();
            })
            .await
            .unwrap();
        waiter.abort();
        http.abort();
        drop(host);
        (found_rx.recv().unwrap(), rt)
    })
}

#[test]
fn a_tokio_host_mounts_the_dashboard_and_acts_through_the_engine() {
    // docs/serve.md §13.10, §13.11, §13.6, §13.8
    let (found, rt) = serve_and_ask();

    // The list: both schedules, hostile text as text, no script of the page's but its own.
    assert_eq!(found.list.status, 200, "{}", found.list.body);
    assert!(found.list.body.contains("id=\"host\">tokio host</p>"));
    assert!(found.list.body.contains("2 of 2 live schedules"));
    assert!(
        found
            .list
            .body
            .contains("&lt;script&gt;window.pwned=1&lt;/script&gt;"),
        "{}",
        found.list.body
    );
    assert!(!found.list.body.contains("<script>window"));
    assert!(
        !found.list.body.contains('\u{1b}'),
        "an ANSI escape is shown, not sent"
    );
    assert!(
        found
            .list
            .head
            .contains("content-security-policy: default-src 'self'")
    );
    assert!(found.list.body.contains("<a href=\"/dashboard/commands\">"));
    assert!(
        !found.list.body.contains("/dashboard/cluster"),
        "an in-memory store has no cluster"
    );
    assert!(
        !found.list.body.contains("id=\"online\""),
        "a plain host has no users"
    );
    assert_eq!(found.detail.status, 200);
    assert!(found.detail.body.contains("<th>next_runs</th>"));

    // The commands view: the command, its priority and mechanism, escaped.
    assert_eq!(found.commands.status, 200, "{}", found.commands.body);
    assert!(
        found.commands.body.contains("1 running"),
        "{}",
        found.commands.body
    );
    assert!(
        found
            .commands
            .body
            .contains("<td>hold &lt;arm&gt;</td><td class=\"num\">7</td><td>arm&lt;1&gt;</td>"),
        "{}",
        found.commands.body
    );

    // The live view: the fields serve's had, and the hot tasks and commands.
    let live = &found.live;
    for field in [
        "period_us",
        "frames",
        "over_budget",
        "overloads",
        "deferred_last_step",
        "pending",
        "commands_running",
        "schedules_live",
        "firings",
        "hot_tasks",
        "commands",
    ] {
        assert!(live.get(field).is_some(), "{field} in {live}");
    }
    assert!(live.get("online").is_none(), "a plain host counts no users");
    assert_eq!(live["commands_running"], 1);
    assert_eq!(live["commands"][0]["name"], "hold <arm>");
    assert_eq!(live["commands"][0]["priority"], 7);
    assert_eq!(live["commands"][0]["mechanisms"][0], "arm<1>");
    let hot = live["hot_tasks"].as_array().unwrap();
    assert!(
        !hot.is_empty(),
        "the ringing schedule and the command cycle ran"
    );
    assert!(hot.iter().all(|t| t[2].as_u64().unwrap() > 0), "{hot:?}");

    assert_the_hour_and_the_overview(live, &found.overview);

    // Bad input: a clear 4xx naming the value.
    let expected = [400, 400, 404, 400, 400, 400, 400, 404];
    for ((path, status, body), want) in found.bad.iter().zip(expected) {
        assert_eq!(*status, want, "{path}: {body}");
        assert!(body.contains("docs/serve.md"), "{path}: {body}");
    }
    // In memory: no cluster.
    assert_eq!(found.cluster.status, 404, "{}", found.cluster.body);

    // The action: refused without the token, done with it, through the engine as #1.
    assert_eq!(found.refused_token.status, 403);
    assert_eq!(found.paused.status, 303, "{}", found.paused.body);
    let hostile = rt.schedules().begin(ObjId(1)).schedules(None).unwrap()[0];
    let info = rt
        .schedules()
        .begin(ObjId(1))
        .schedule_info(hostile)
        .unwrap();
    let pause = info.pause.expect("paused by the dashboard");
    assert_eq!(pause.by, ObjId(1));
    // Who asked is in the note (docs/serve.md §13.17): the grant's name, for a script.
    assert_eq!(pause.note, "<b>lunch (by #1 on the dashboard)");
}

/// The live view's last hour and the overview page (docs/serve.md §13.18).
fn assert_the_hour_and_the_overview(live: &serde_json::Value, overview: &Answer) {
    // The last hour a minute at a time (docs/serve.md §13.18): 60 of each, this minute last,
    // counting the ringing schedule's starts as the engine did, none late by a minute.
    let minutes = &live["minutes"];
    let column =
        |name: &str| -> Vec<serde_json::Value> { minutes[name].as_array().unwrap().clone() };
    for name in ["firings", "faults", "missed", "p50", "p99"] {
        assert_eq!(column(name).len(), 60, "{name} in {minutes}");
    }
    assert_eq!(minutes["start"].as_u64().unwrap() % 60, 0, "{minutes}");
    let started: u64 = column("firings").iter().map(|v| v.as_u64().unwrap()).sum();
    assert!(
        started >= 1,
        "the ringing schedule fired in the hour: {minutes}"
    );
    assert!(
        started <= live["firings"].as_u64().unwrap(),
        "{minutes} vs {live}"
    );
    assert!(
        column("faults").iter().all(|v| v == 0),
        "ring returns: {minutes}"
    );
    assert_eq!(
        minutes["hour_samples"].as_u64(),
        Some(started),
        "one lateness a start"
    );
    assert!(minutes["hour_p99"].as_f64().unwrap() < 60.0, "{minutes}");
    assert_eq!(
        minutes["missed_by"].as_object().unwrap().len(),
        5,
        "{minutes}"
    );
    // The overview page: its charts for the script to draw, and the frame budget.
    assert_eq!(overview.status, 200, "{}", overview.body);
    for part in [
        "<a href=\"/dashboard/overview\" aria-current=\"page\">overview</a>",
        "id=\"chart-firings\"",
        "id=\"chart-p99\"",
        "id=\"minutes-table\"",
        "waiting for the first live update",
        "id=\"frames\"",
    ] {
        assert!(overview.body.contains(part), "{part} in {}", overview.body);
    }
}

/// A driver on the `PostgreSQL` store at `url` holding `count` schedules, its dashboard mounted;
/// the list and cluster pages the client thread got.
#[cfg(feature = "postgres")]
fn cluster_of_a_postgres_host(url: &str, count: usize) -> (Answer, Answer) {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&threads, async {
        let builder = Runtime::builder().store_path(url).without_commands();
        let driver = TokioDriver::new(builder).unwrap();
        let rt = Rc::clone(driver.runtime());
        rt.verb("ring", |_| Ok(Value::Int(0)));
        let mut txn = rt.schedules().begin(ObjId(1));
        for _ in 0..count {
            txn.schedule_every(ObjId(1), "ring", 3600.0, vec![], Options::new())
                .unwrap();
        }
        txn.commit().unwrap();
        let host = Rc::new(PlainHost { reader: ObjId(1) });
        let app =
            tickstep::dashboard::router(&rt, driver.handle(), &host, DashboardOptions::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let http = tokio::task::spawn_local(async move {
            let app = app.into_make_service_with_connect_info::<SocketAddr>();
            axum::serve(listener, app).await.unwrap();
        });
        let asked = tokio::task::spawn_blocking(move || {
            (get(addr, "/dashboard"), get(addr, "/dashboard/cluster"))
        });
        let (tx, rx) = std::sync::mpsc::channel();
        driver
            .run_until(async move {
                let pages = tokio::time::timeout(Duration::from_secs(60), asked)
                    .await
                    .expect("the client finishes within a minute")
                    .unwrap();
                tx.send(pages).unwrap();
            })
            .await
            .unwrap();
        http.abort();
        rx.recv().unwrap()
    })
}

#[cfg(feature = "postgres")]
#[test]
fn a_tokio_host_on_postgres_shows_its_node_and_what_it_holds() {
    // docs/serve.md §13.12, docs/schedules.md §11.43
    let Some(url) = pg::database_or_skip("dashboard_tokio_cluster") else {
        return;
    };
    let (list, cluster) = cluster_of_a_postgres_host(&url, 3);
    assert!(
        list.body
            .contains("<a href=\"/dashboard/cluster\">cluster</a>"),
        "{}",
        list.body
    );
    assert_eq!(cluster.status, 200, "{}", cluster.body);
    assert!(
        cluster
            .body
            .contains("1 nodes; 0 schedules held by no live node"),
        "{}",
        cluster.body
    );
    assert!(
        cluster.body.contains(">live</span></td>"),
        "{}",
        cluster.body
    );
    assert!(
        cluster.body.contains("<td class=\"num\">3</td>"),
        "{}",
        cluster.body
    );
    pg::drop_database(&url);
}
