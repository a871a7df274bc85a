//! The real `tickstep` binary on a `PostgreSQL` store: `demo --db postgres://…` and every
//! `schedules` subcommand, and `dashboard --db postgres://…` beside two nodes, on the throwaway server the schedules crate's tests start (its
//! starter is included from there, not copied). Without a server each test prints that it
//! skipped and why, unless `TICKSTEP_REQUIRE_PG=1` makes that a failure.

mod common;
mod dashboard_process;
#[path = "../../tickstep/tests/http_client/mod.rs"]
mod http_client;
mod run;
mod serve_client;

use common::pg;
use dashboard_process::Dashboard;
use http_client::{FORM, get, post};
use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{Inspector, ObjId, Options, ScheduleId, Value};

use run::{stderr, stdout, tickstep};

/// The same database with a password in the URL (the throwaway server trusts loopback, so it is
/// ignored) that no output may show.
fn with_password(url: &str) -> String {
    url.replacen("://postgres@", "://postgres:hunter2@", 1)
}

fn bell_id(db: &str) -> u64 {
    let list = tickstep(&["schedules", "--db", db, "list", "--json"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let all: serde_json::Value = serde_json::from_str(&stdout(&list)).expect("list --json is JSON");
    all.as_array()
        .unwrap()
        .iter()
        .find(|s| s["verb"] == "ring")
        .expect("the bell is saved")["id"]
        .as_u64()
        .unwrap()
}

#[test]
fn demo_and_schedules_list_info_running_and_stop_work_on_postgres() {
    let Some(url) = pg::database_or_skip("cli_demo_and_schedules") else {
        return;
    };
    let db = with_password(&url);
    let demo = tickstep(&["demo", "--virtual", "--duration", "3s", "--db", &db]);
    assert!(demo.status.success(), "{}", stderr(&demo));
    let text = stdout(&demo);
    assert!(
        text.contains("created schedule") && text.contains(": bell"),
        "{text}"
    );
    assert!(
        text.contains("store committed: postgres://postgres:***@"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");

    let id = bell_id(&db).to_string();
    let table = tickstep(&["schedules", "--db", &db, "list"]);
    assert!(stdout(&table).starts_with("ID  KEY"), "{}", stdout(&table));
    assert!(stdout(&table).contains("#10:ring"));
    let info = tickstep(&["schedules", "--db", &db, "info", &id, "--json"]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(info["verb"], "ring");
    assert!(info["run_count"].as_u64().unwrap() >= 1);
    let running = tickstep(&["schedules", "--db", &db, "running", "--json"]);
    assert!(running.status.success(), "{}", stderr(&running));
    let running: serde_json::Value = serde_json::from_str(&stdout(&running)).unwrap();
    assert!(running.is_array(), "{running}");

    let stop = tickstep(&["schedules", "--db", &db, "stop", &id, "--json"]);
    assert_eq!(
        stdout(&stop).trim(),
        format!("{{\"id\":{id},\"stopped\":true}}"),
        "{}",
        stderr(&stop)
    );
    let again = tickstep(&["schedules", "--db", &db, "stop", &id]);
    assert!(again.status.success());
    assert!(stdout(&again).contains("nothing to stop"));
    let gone = tickstep(&["schedules", "--db", &db, "info", &id]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stderr(&gone).contains(&format!("no schedule {id}")),
        "{}",
        stderr(&gone)
    );
    assert!(!stderr(&gone).contains("hunter2"), "{}", stderr(&gone));

    // The next demo run no longer finds the stopped bell, and finds the others.
    let rerun = tickstep(&["demo", "--virtual", "--duration", "1s", "--db", &db]);
    let text = stdout(&rerun);
    assert!(
        text.contains("created schedule") && text.contains(": bell"),
        "{text}"
    );
    assert!(
        text.contains("found schedule") && text.contains(": regenerate"),
        "{text}"
    );
}

#[test]
fn schedules_on_a_database_no_engine_opened_says_so_and_creates_nothing() {
    let Some(url) = pg::database_or_skip("cli_not_a_store") else {
        return;
    };
    let out = tickstep(&["schedules", "--db", &with_password(&url), "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("is not a tickstep schedule store"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let tables: i64 = client
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "a read-only command created nothing");
}

#[test]
fn schedules_on_an_unreachable_server_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let db = format!("postgres://postgres:hunter2@127.0.0.1:{port}/db");
    let out = tickstep(&["schedules", "--db", &db, "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("connecting to PostgreSQL"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn schedules_stops_a_bell_while_a_demo_runs_on_postgres_and_the_demo_notices() {
    let Some(db) = pg::database_or_skip("cli_live_stop") else {
        return;
    };
    // The real clock: the demo must really be running while the operator acts (bounded: 3 s).
    let demo = run::live_demo(&db);
    let bell = bell_id(&db);
    let stop = tickstep(&["schedules", "--db", &db, "stop", &bell.to_string()]);
    assert!(
        stdout(&stop).contains(&format!("stopped schedule {bell}")),
        "{}{}",
        stdout(&stop),
        stderr(&stop)
    );
    let text = demo.finish();
    assert!(
        text.contains(&format!("schedule {bell} was stopped by an operator")),
        "{text}"
    );
    let after = tickstep(&["schedules", "--db", &db, "info", &bell.to_string()]);
    assert_eq!(
        after.status.code(),
        Some(1),
        "the demo did not resurrect it"
    );
}

/// A node on the store at `url`: a runtime whose schedules it holds, with the verb `ring`.
fn node(url: &str) -> Runtime {
    let rt = Runtime::builder()
        .store_path(url)
        .without_commands()
        .build()
        .expect("a node opens the PostgreSQL store");
    rt.verb("ring", |_| Ok(Value::Int(0)));
    rt
}

/// `count` hourly schedules created on `rt` (so held by its node); their ids.
fn hourly(rt: &Runtime, count: usize) -> Vec<ScheduleId> {
    let mut txn = rt.schedules().begin(ObjId(1));
    let ids = (0..count)
        .map(|_| {
            txn.schedule_every(ObjId(1), "ring", 3600.0, vec![], Options::new())
                .unwrap()
        })
        .collect();
    txn.commit().unwrap();
    ids
}

#[test]
fn the_dashboard_of_a_postgres_store_shows_its_nodes_and_what_each_holds() {
    // docs/serve.md §13.12, §13.13; docs/schedules.md §11.43
    let Some(url) = pg::database_or_skip("cli_dashboard_cluster") else {
        return;
    };
    let (first, second) = (node(&url), node(&url));
    let held_first = hourly(&first, 3);
    let held_second = hourly(&second, 2);
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "cluster-token-0123456789\n").unwrap();
    let dash = Dashboard::start(
        std::path::Path::new(&with_password(&url)),
        &["--action-token-file", token.to_str().unwrap()],
    );
    let addr = dash.addr.as_str();

    let list = get(addr, "/dashboard");
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains("5 of 5 live schedules"), "{}", list.body);
    assert!(
        list.body
            .contains("<a href=\"/dashboard/cluster\">cluster</a>")
    );
    assert!(
        !list.body.contains("hunter2"),
        "the URL's password is never shown"
    );

    let cluster = get(addr, "/dashboard/cluster");
    assert_eq!(cluster.status, 200, "{}", cluster.body);
    assert!(
        cluster
            .body
            .contains("2 nodes; 0 schedules held by no live node"),
        "{}",
        cluster.body
    );
    let (nodes, _) = cluster.body.split_once("id=\"cluster-hour\"").unwrap();
    let rows: Vec<&str> = nodes.split("<tr><td>").skip(1).collect();
    assert_eq!(rows.len(), 2, "{}", cluster.body);
    for (row, held) in rows.iter().zip([&held_first, &held_second]) {
        assert!(row.contains(">live</span></td>"), "{row}");
        // The lease's end and the node's start as times for people, not Unix seconds.
        assert_eq!(row.matches("<td><time datetime=").count(), 2, "{row}");
        assert!(
            row.contains(&format!("<td class=\"num\">{}</td>", held.len())),
            "{row}"
        );
        for id in held {
            assert!(
                row.contains(&format!("<a href=\"/dashboard/schedules/{}\">", id.get())),
                "{row}"
            );
        }
    }

    // An action on PostgreSQL, as the store's operator: the node holding it sees it.
    let id = held_second[0];
    let paused = post(
        addr,
        &format!("/dashboard/schedules/{}/pause", id.get()),
        FORM,
        "token=cluster-token-0123456789&note=maintenance",
    );
    assert_eq!(paused.status, 303, "{}", paused.body);
    let saved = Inspector::open(&url).unwrap().get(id).unwrap().unwrap();
    assert_eq!(
        saved.pause.expect("paused in the database").note,
        "maintenance (by operator on the dashboard)"
    );

    // A clean shutdown releases its rows and leaves the cluster.
    second.shutdown().unwrap();
    let after = get(addr, "/dashboard/cluster");
    assert!(
        after
            .body
            .contains("1 nodes; 2 schedules held by no live node"),
        "{}",
        after.body
    );
    // The node that left is still on the hour's timeline, to when it left (docs/serve.md §13.19).
    let (_, hour) = after.body.split_once("id=\"cluster-hour\"").unwrap();
    assert_eq!(
        hour.matches("<rect class=\"span left\"").count(),
        1,
        "{hour}"
    );
    assert!(
        hour.contains("left cleanly") && hour.contains("handing back 2 schedules"),
        "{hour}"
    );
    first.shutdown().unwrap();
    drop(dash);
    pg::drop_database(&url);
}

#[test]
fn the_dashboard_of_a_servers_database_shows_its_players_by_name() {
    // docs/serve.md §13.13: serve keeps its players in the store's database; the dashboard reads
    // them in a read-only session, beside the running server.
    let Some(url) = pg::database_or_skip("cli_dashboard_names") else {
        return;
    };
    let db = std::path::Path::new(&url);
    let server = serve_client::Server::start(db, &[]);
    let mut alice = server.login("alice");
    let tea = serve_client::id_of(&alice.ask("every 3600 tell tea"));
    let mut bob = server.login("bob");
    serve_client::id_of(&bob.ask("every 60 tell coffee"));
    let dash = Dashboard::start(db, &[]);
    let addr = dash.addr.as_str();
    let list = get(addr, "/dashboard");
    assert!(list.body.contains("<td>alice</td>"), "{}", list.body);
    assert!(list.body.contains("<td>bob</td>"), "{}", list.body);
    for (query, matched) in [
        ("owner=alice", "1 of 2"),
        ("q=bo", "1 of 2"),
        ("owner=carol", "0 of 2"),
    ] {
        let page = get(addr, &format!("/dashboard?{query}"));
        assert!(
            page.body.contains(&format!("{matched} live schedules")),
            "{query}: {}",
            page.body
        );
    }
    let detail = get(addr, &format!("/dashboard/schedules/{tea}"));
    assert!(detail.body.contains("alice"), "{}", detail.body);
    drop(dash);
    alice.quit();
    bob.quit();
    server.shutdown();
    pg::drop_database(&url);
}

#[test]
fn the_cluster_page_shows_a_takeover_and_each_nodes_hour() {
    // docs/serve.md §13.19; docs/schedules.md §11.39
    let Some(url) = pg::database_or_skip("cli_dashboard_takeover") else {
        return;
    };
    // The first node starts a firing that never ends, so its row says it runs there.
    let clock = ManualClock::new();
    let first = Runtime::builder()
        .manual_clock(clock.clone())
        .store_path(&url)
        // Long, so its store thread (which outlives `forget`) does not renew it once ended.
        .lease(std::time::Duration::from_secs(600))
        .without_commands()
        .build()
        .expect("a node opens the PostgreSQL store");
    first.async_verb("hang", |_| std::future::pending());
    let mut txn = first.schedules().begin(ObjId(1));
    let id = txn
        .schedule_every(ObjId(1), "hang", 1.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    for _ in 0..20 {
        clock.advance(std::time::Duration::from_millis(500));
        first.step_frame().unwrap();
        if first.stats().firings_started > 0 {
            break;
        }
    }
    assert_eq!(first.stats().firings_started, 1);
    first.schedules().flush().unwrap();
    // It dies with the firing running (no clean close hands the row back) and its lease runs
    // out; the second node takes the schedule over when it opens and settles that firing.
    std::mem::forget(first);
    let mut sql = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    sql.batch_execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'")
        .unwrap();
    let second = node(&url);
    second.schedules().flush().unwrap();

    let dash = Dashboard::start(std::path::Path::new(&url), &[]);
    let cluster = get(&dash.addr, "/dashboard/cluster");
    assert_eq!(cluster.status, 200, "{}", cluster.body);
    assert!(cluster.body.contains("2 nodes;"), "{}", cluster.body);
    // Each node's hour: the dead one grey to where its lease ran out, the live one green to now.
    let (_, hour) = cluster.body.split_once("id=\"cluster-hour\"").unwrap();
    let (hour, takeovers) = hour.split_once("id=\"takeovers\"").unwrap();
    assert_eq!(
        hour.matches("<rect class=\"span live\"").count(),
        1,
        "{hour}"
    );
    assert_eq!(
        hour.matches("<rect class=\"span expired\"").count(),
        1,
        "{hour}"
    );
    assert!(hour.contains("lease ran out"), "{hour}");
    // The takeover, linked, with what the store recorded.
    assert!(
        takeovers.contains("settled that firing): 1</p>"),
        "{takeovers}"
    );
    assert!(
        takeovers.contains(&format!("<a href=\"/dashboard/schedules/{}\">", id.get())),
        "{takeovers}"
    );
    assert!(
        takeovers.contains("taken over from node") && takeovers.contains("whose lease ran out"),
        "{takeovers}"
    );
    // The takeover itself, from the store's cluster history: when, from, to, how many
    // (docs/schedules.md §11.50).
    let nodes = Inspector::open(&url)
        .unwrap()
        .cluster()
        .unwrap()
        .unwrap()
        .nodes;
    let dead = nodes.iter().find(|n| !n.live).unwrap().node;
    let alive = nodes.iter().find(|n| n.live).unwrap().node;
    let (_, events) = takeovers.split_once("id=\"takeover-events\"").unwrap();
    let (events, _) = events.split_once("</table>").unwrap();
    let rows: Vec<&str> = events.split("<tr><td>").skip(1).collect();
    assert_eq!(rows.len(), 1, "{events}");
    assert!(rows[0].starts_with("<time datetime="), "{events}");
    assert!(
        rows[0].contains(&format!(
            "</time></td><td>{dead}</td><td>{alive}</td><td class=\"num\">1</td>"
        )),
        "{events}"
    );
    // Each node's holdings over the hour, drawn and as numbers: the live node holds the one.
    let (_, holdings) = cluster.body.split_once("id=\"cluster-holdings\"").unwrap();
    assert!(
        holdings.contains("<svg class=\"holdings\"") && holdings.contains("data-lines=\"2\""),
        "{holdings}"
    );
    let (_, table) = holdings.split_once("id=\"holdings-rows\"").unwrap();
    let row = table
        .split("<tr>")
        .find(|r| r.contains(&format!("</span> {alive}</td>")))
        .expect("the live node's row");
    assert!(row.contains("<td class=\"num\">1</td>"), "{row}");
    second.shutdown().unwrap();
    drop(dash);
    pg::drop_database(&url);
}
