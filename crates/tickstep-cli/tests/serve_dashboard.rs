//! The dashboard on `tickstep serve --http` (docs/serve.md §13), over real HTTP from a plain
//! socket: the list with its filters, the detail view, hostile text shown as text, a bad-input
//! table for every route, and the live view's server-sent events. Every wait is bounded; the
//! assertions are about what was answered, never how long it took.

#[path = "../../tickstep/tests/http_client/mod.rs"]
mod http_client;
mod serve_client;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use http_client::{events, get, http};
use serve_client::{PATIENCE, Server, id_of};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

/// The ids linked from a list page, in order.
fn listed(body: &str) -> Vec<u64> {
    body.split("<a href=\"/dashboard/schedules/")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn the_list_filters_sorts_and_shows_hostile_text_as_text() {
    // docs/serve.md §13.1–§13.3
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    let script = id_of(&alice.ask("every 3600 tell <script>alert(1)</script>"));
    let image = id_of(&alice.ask("every 7200 tell \"><img src=x onerror=alert(2)>"));
    let ansi = id_of(&alice.ask("remind 3600 \u{1b}[31mred\u{1b}[0m"));
    let tea = id_of(&bob.ask("remind 600 tea"));

    let page = get(&addr, "/dashboard");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.head
            .contains("content-security-policy: default-src 'self'; script-src 'self'")
    );
    assert_eq!(listed(&page.body), vec![script, image, ansi, tea]);
    assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        page.body
            .contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;")
    );
    assert!(page.body.contains("\\u{1b}[31mred"));
    assert!(!page.body.contains("<script>alert") && !page.body.contains("<img"));
    assert!(!page.body.contains('\u{1b}'));
    // The only script and style are the server's own files.
    http_client::assert_own_files(&addr, &page.body);

    assert_eq!(listed(&get(&addr, "/dashboard?owner=bob").body), vec![tea]);
    assert_eq!(
        listed(&get(&addr, "/dashboard?kind=every&sort=id").body),
        vec![script, image]
    );
    assert_eq!(
        listed(&get(&addr, "/dashboard?q=%3Cscript%3E").body),
        vec![script]
    );
    assert_eq!(
        listed(&get(&addr, "/dashboard?sort=next").body),
        vec![tea, script, ansi, image]
    );
    assert_eq!(
        listed(&get(&addr, "/dashboard?sort=owner&owner=").body)[3],
        tea
    );
    assert_eq!(
        alice.ask(&format!("pause {image} deploy <b>now</b>")),
        format!("ok: paused #{image}")
    );
    let paused = get(&addr, "/dashboard?state=paused");
    assert_eq!(listed(&paused.body), vec![image]);
    assert_eq!(
        listed(&get(&addr, "/dashboard?state=active&owner=alice").body),
        vec![script, ansi]
    );
    // The search box shows what was searched for, as text.
    let searched = get(&addr, "/dashboard?q=%22%3E%3Cb%3E");
    assert!(searched.body.contains("value=\"&quot;&gt;&lt;b&gt;\""));
    assert!(listed(&searched.body).is_empty());

    // The detail view: every schedule_info field, the pause and its note as text.
    let detail = get(&addr, &format!("/dashboard/schedules/{image}"));
    assert_eq!(detail.status, 200, "{}", detail.body);
    for field in [
        "id",
        "verb",
        "args",
        "owner",
        "kind",
        "interval",
        "next_run",
        "last_run",
        "run_count",
        "fault_count",
        "last_fault",
        "missed_count",
        "catchup",
        "overlap",
        "key",
        "paused",
        "next_runs",
        "history",
    ] {
        assert!(
            detail.body.contains(&format!("<tr><th>{field}</th>")),
            "{field} missing from {}",
            detail.body
        );
    }
    assert!(detail.body.contains("deploy &lt;b&gt;now&lt;/b&gt;"));
    assert!(detail.body.contains("<b id=\"owner\">alice</b>"));
    server.shutdown();
}

#[test]
fn every_route_answers_bad_input_with_a_clear_4xx() {
    // docs/serve.md §13.4
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let long_query = format!("GET /dashboard?q={} HTTP/1.1", "a".repeat(3_000));
    // hyper's limits: about 400 KiB of head, 100 headers.
    let huge_header = format!("GET /dashboard HTTP/1.1\r\nX-Big: {}", "b".repeat(500_000));
    let mut many_headers = "GET /dashboard HTTP/1.1".to_owned();
    for i in 0..150 {
        many_headers.push_str("\r\nX-");
        many_headers.push_str(&i.to_string());
        many_headers.push_str(": 1");
    }
    let table: &[(&str, u16, &str)] = &[
        (
            "GET /dashboard/schedules/abc HTTP/1.1",
            400,
            "\"abc\" is not a schedule id",
        ),
        (
            "GET /dashboard/schedules/0 HTTP/1.1",
            400,
            "\"0\" is not a schedule id",
        ),
        (
            "GET /dashboard/schedules/-3 HTTP/1.1",
            400,
            "\"-3\" is not a schedule id",
        ),
        (
            "GET /dashboard/schedules/99999999999999999999999 HTTP/1.1",
            400,
            "is not a schedule id",
        ),
        (
            "GET /dashboard/schedules/424242 HTTP/1.1",
            404,
            "no live schedule #424242",
        ),
        (
            "GET /dashboard?sort=size HTTP/1.1",
            400,
            "sort=\"size\" is not one of",
        ),
        ("GET /dashboard?kind=daily HTTP/1.1", 400, "kind=\"daily\""),
        ("GET /dashboard?state=dead HTTP/1.1", 400, "state=\"dead\""),
        (
            "GET /dashboard?colour=red HTTP/1.1",
            400,
            "unknown parameter \"colour\"",
        ),
        ("GET /dashboard?q=%zz HTTP/1.1", 400, "bad %-escape"),
        ("GET /dashboard?q=%ff HTTP/1.1", 400, "not UTF-8"),
        (&long_query, 400, "at most 2048"),
        (
            "GET /dashboard/commands?x=1 HTTP/1.1",
            400,
            "takes no query string",
        ),
        (
            "GET /dashboard/schedules/1?x=1 HTTP/1.1",
            400,
            "takes no query string",
        ),
        (
            "GET /dashboard/cluster HTTP/1.1",
            404,
            "only a PostgreSQL store",
        ),
        (
            "POST /dashboard/commands HTTP/1.1\r\nContent-Length: 0",
            405,
            "",
        ),
        ("GET /nowhere HTTP/1.1", 404, "no route \"/nowhere\""),
        ("GET /dashboard/schedules HTTP/1.1", 404, "no route"),
        ("POST /dashboard HTTP/1.1\r\nContent-Length: 0", 405, ""),
        ("DELETE /dashboard/schedules/1 HTTP/1.1", 405, ""),
        (
            "POST /dashboard/events HTTP/1.1\r\nContent-Length: 0",
            405,
            "",
        ),
        (&huge_header, 431, ""),
        (&many_headers, 431, ""),
    ];
    for (request, status, says) in table {
        let answer = http(&addr, request);
        let shown = &request[..request.len().min(60)];
        assert_eq!(answer.status, *status, "{shown}: {}", answer.body);
        assert!(answer.body.contains(says), "{shown}: {}", answer.body);
    }
    // Still serving after all that.
    assert_eq!(get(&addr, "/dashboard").status, 200);
    server.shutdown();
}

#[test]
fn the_live_view_streams_frame_times_against_the_budget() {
    // docs/serve.md §13.6
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    alice.ask("every 1 tell tick");
    let seen = events(&addr, 3);
    let last = seen.last().unwrap();
    assert_eq!(last["period_us"], 16_666);
    assert_eq!(last["schedules_live"], 1);
    assert_eq!(last["online"], 1);
    let priorities: Vec<&str> = last["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair[0].as_str().unwrap())
        .collect();
    assert_eq!(
        priorities,
        ["kernel", "high", "normal", "low", "background"],
        "one count per priority, kernel first: {last}"
    );
    // A firing a second runs frames; some snapshot holds them, each a [wall, cpu] pair.
    let frames: Vec<&serde_json::Value> = seen
        .iter()
        .flat_map(|s| s["frames"].as_array().unwrap())
        .collect();
    assert!(!frames.is_empty(), "{seen:#?}");
    assert!(frames.iter().all(|f| f.as_array().unwrap().len() == 2));
    let page = get(&addr, "/dashboard").body;
    let path = page
        .split("<script src=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let script = get(&addr, path);
    assert_eq!(script.status, 200);
    assert!(script.head.contains("content-type: text/javascript"));
    assert!(script.body.contains("textContent") && !script.body.contains("innerHTML"));
    server.shutdown();
}

#[test]
fn live_viewers_are_capped_and_a_seat_is_given_back() {
    // docs/serve.md §13.5
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let open = |addr: &str| {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        write!(
            stream,
            "GET /dashboard/events HTTP/1.1\r\nHost: {addr}\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        (status, reader)
    };
    let mut viewers = Vec::new();
    for _ in 0..64 {
        let (status, reader) = open(&addr);
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        viewers.push(reader);
    }
    let (refused, _) = open(&addr);
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    drop(viewers.pop());
    // The dropped viewer's seat comes back once the server notices the closed socket (at its
    // next event, within a second or two); bounded retries, no assumption about when.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, _) = open(&addr);
        if status.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the seat never came back: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server.shutdown();
}

#[test]
fn no_metrics_serves_the_dashboard_without_metrics() {
    // docs/serve.md §14.6: the benchmark's unwatched baseline.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0", "--no-metrics"]);
    let addr = server.http_addr();
    let metrics = get(&addr, "/metrics");
    assert_eq!(metrics.status, 404, "{}", metrics.body);
    assert_eq!(get(&addr, "/dashboard").status, 200);
    server.shutdown();
}

#[test]
fn metrics_are_served_beside_the_dashboard_as_prometheus_text() {
    // docs/serve.md §13.9: the engines' metrics on the HTTP side, with no player in a label.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    alice.ask("every 3600 say hello");
    let metrics = get(&addr, "/metrics");
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    assert!(
        metrics.head.contains("content-type: text/plain"),
        "{}",
        metrics.head
    );
    let frames: u64 = metrics
        .body
        .lines()
        .find_map(|line| line.strip_prefix("tickstep_kernel_frames_total "))
        .unwrap_or_else(|| panic!("no frame counter in:\n{}", metrics.body))
        .trim()
        .parse()
        .unwrap();
    assert!(frames > 0, "the server has run frames");
    assert!(
        metrics.body.contains("tickstep_schedules_live"),
        "{}",
        metrics.body
    );
    assert!(
        !metrics.body.contains("alice"),
        "no player's name in a label"
    );
}

#[test]
fn the_play_page_refuses_inline_script_and_loads_its_own_files() {
    // docs/serve.md §9.5, §9.7
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let page = get(&addr, "/");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.head
            .contains("content-security-policy: default-src 'self';")
            && !page.head.contains("unsafe-inline"),
        "{}",
        page.head
    );
    assert!(page.head.contains("x-content-type-options: nosniff"));
    assert_eq!(page.body.matches("<script").count(), 1);
    assert!(page.body.contains("<script src=\"/client.js\"></script>"));
    assert!(!page.body.contains("<style"));
    let script = get(&addr, "/client.js");
    assert_eq!(script.status, 200);
    assert!(script.head.contains("content-type: text/javascript"));
    assert!(script.body.contains("gmcp.mudstandards.org"));
    let style = get(&addr, "/client.css");
    assert_eq!(style.status, 200);
    assert!(style.head.contains("content-type: text/css"));
}

/// The count in the sample `name{labels}` of a Prometheus text answer, if there is one.
fn sample(body: &str, series: &str) -> Option<u64> {
    body.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse::<f64>().unwrap() as u64)
}

#[test]
fn serve_counts_its_connections_logins_refusals_and_mail() {
    // docs/observability.md §8: what the server counts about itself, each family with its help.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store(&dir),
        &["--http", "127.0.0.1:0", "--max-line", "256"],
    );
    let addr = server.http_addr();
    // Two new accounts; alice's reminder fires while she is away, so it becomes mail.
    let mut alice = server.login("alice");
    assert!(
        alice
            .ask("remind 1 you missed this")
            .starts_with("ok: schedule #")
    );
    alice.quit();
    let mut bob = server.login("bob");
    bob.ask("remind 1 ping");
    bob.expect("[#"); // bob's later reminder has fired, so alice's has too
    // A wrong password, then a line over the cap.
    let mut stranger = server.connect();
    let wrong = stranger.try_log_in("alice", "not her password at all");
    assert!(wrong.starts_with("error: wrong password"), "{wrong}");
    drop(stranger);
    bob.send(&"x".repeat(300));
    bob.expect_closed();
    // alice is back: her password is right, and her mail is shown.
    let mut alice = server.login("alice");
    alice.expect("[mail] [");

    let body = get(&addr, "/metrics").body;
    let value =
        |series: &str| sample(&body, series).unwrap_or_else(|| panic!("no {series} in:\n{body}"));
    assert_eq!(value(r#"tickstep_serve_logins_total{result="new"}"#), 2);
    assert_eq!(value(r#"tickstep_serve_logins_total{result="ok"}"#), 1);
    assert_eq!(value(r#"tickstep_serve_logins_total{result="failed"}"#), 1);
    assert_eq!(value(r#"tickstep_serve_logins_total{result="locked"}"#), 0);
    assert_eq!(
        value(r#"tickstep_serve_refused_total{reason="line_too_long"}"#),
        1
    );
    assert_eq!(value("tickstep_serve_mail_posted_total"), 1);
    assert_eq!(value("tickstep_serve_mail_delivered_total"), 1);
    let accepted = value(r#"tickstep_serve_connections_total{transport="tcp"}"#);
    assert!(accepted >= 4, "four connections were made: {accepted}");
    let open = value(r#"tickstep_serve_connections_open{transport="tcp"}"#);
    assert!((1..=accepted).contains(&open), "alice is connected: {open}");
    for family in [
        "tickstep_serve_connections_total",
        "tickstep_serve_connections_open",
        "tickstep_serve_logins_total",
        "tickstep_serve_refused_total",
        "tickstep_serve_mail_posted_total",
        "tickstep_serve_mail_delivered_total",
    ] {
        assert!(
            body.contains(&format!("# HELP {family} ")),
            "{family} has no help"
        );
        assert!(
            body.contains(&format!("# TYPE {family} ")),
            "{family} has no type"
        );
    }
    assert!(
        !body.contains("alice") && !body.contains("127.0.0.1"),
        "no name or address in a label"
    );
    drop(alice);
    server.shutdown();
}
