//! The dashboard section (docs/serve.md §13.15): how long a list of 100,000 schedules takes to show
//! its first page in Chromium, unfiltered and filtered by kind (`cron`) and by state (`paused`).
//!
//! | row | what | goal |
//! | --- | --- | --- |
//! | `first_page_ms` | a store of 100,000 schedules served by `tickstep::dashboard::store_router` (as `tickstep dashboard --db` serves it); headless Chromium loads `/dashboard` — from navigation start to the load event, median of 5 loads | ≤ 300 ms |
//! | `cron_page_ms` | the same with `?kind=cron` (a third of them) | ≤ 300 ms |
//! | `paused_page_ms` | the same with `?state=paused` | ≤ 300 ms |
//! | `server_page_ms` | the server's part: one `GET /dashboard?kind=cron` over a plain HTTP client, median of 5 | ≤ 300 ms |
//! | `overview_ms` | a store of 100,000 schedules every 60 s that all fired twice in the last few minutes (docs/serve.md §13.18): one `GET /dashboard/overview` over a plain HTTP client, median of 5 | ≤ 300 ms |
//!
//! It drives `chromedriver` through the W3C `WebDriver` protocol (plain HTTP and JSON); without
//! `chromium` and `chromedriver` on the `PATH` the browser rows are skipped with a note.
//! `--quick`: 10,000 schedules.

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{ObjId, Options, Value};

use crate::harness::{Opts, Section, median};
use crate::serve::value;

/// The page-load bar (docs/serve.md §13.15).
const GOAL_MS: f64 = 300.0;
/// Loads per figure; the median is kept.
const LOADS: usize = 5;

pub(crate) fn run(opts: &Opts) -> Section {
    let count = if opts.quick { 10_000 } else { 100_000 };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("dashboard.db");
    let paused = populate(&db, count);
    let addr = serve(&db);
    let scale = format!("{count} schedules (a third cron, {paused} paused), SQLite, store_router");

    let mut server = Vec::new();
    for _ in 0..LOADS {
        let started = Instant::now();
        let body = http_get(&addr, "/dashboard?kind=cron");
        server.push(started.elapsed().as_secs_f64() * 1e3);
        assert!(
            body.contains("live schedules"),
            "the list answered: {body:.200}"
        );
    }
    let mut rows = vec![value(
        "server_page_ms",
        median(&mut server),
        "ms",
        GOAL_MS,
        format!("GET /dashboard?kind=cron, whole answer read, median of {LOADS}; {scale}"),
    )];
    rows.push(overview(dir.path(), count));
    match Browser::start() {
        Ok(browser) => {
            for (name, query) in [
                ("first_page_ms", ""),
                ("cron_page_ms", "?kind=cron"),
                ("paused_page_ms", "?state=paused"),
            ] {
                let mut loads: Vec<f64> = (0..LOADS)
                    .map(|_| browser.load_ms(&format!("http://{addr}/dashboard{query}")))
                    .collect();
                rows.push(value(
                    name,
                    median(&mut loads),
                    "ms",
                    GOAL_MS,
                    format!(
                        "Chromium, /dashboard{query}: navigation start to load event, median of \
                         {LOADS}; {scale}"
                    ),
                ));
            }
        }
        Err(why) => eprintln!("dashboard: browser rows skipped: {why}"),
    }
    rows
}

/// Saves `count` schedules in a store at `db` — every third a weekday cron in Paris, the rest
/// recurring — and pauses one in 21; how many were paused.
fn populate(db: &Path, count: u64) -> usize {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(db)
        .build()
        .expect("a store");
    rt.verb("ring", |_| Ok(Value::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    let mut ids = Vec::new();
    for n in 1..=count {
        let args = vec![Value::from(format!("job {n}"))];
        let id = if n % 3 == 0 {
            txn.schedule_cron(
                ObjId(1),
                "ring",
                "0 3 * * MON-FRI",
                "Europe/Paris",
                args,
                Options::new(),
            )
        } else {
            txn.schedule_every(ObjId(1), "ring", 60.0 + n as f64, args, Options::new())
        };
        ids.push(id.expect("a schedule"));
    }
    txn.commit().expect("saved");
    let mut paused = 0;
    for id in ids.iter().step_by(21) {
        if rt
            .schedules()
            .pause(ObjId(1), *id, "maintenance")
            .expect("paused")
        {
            paused += 1;
        }
    }
    rt.shutdown().expect("closed");
    paused
}

/// The `overview_ms` row: a store whose `count` schedules every 60 s each fired twice in the
/// last few minutes of the wall clock, and its overview answered over plain HTTP.
fn overview(dir: &Path, count: u64) -> crate::harness::Row {
    let db = dir.join("overview.db");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    let start = u64::try_from(now.as_nanos()).expect("in range") - 300_000_000_000;
    let rt = Runtime::builder()
        .manual_clock(ManualClock::starting_at_unix_nanos(start))
        .store_path(&db)
        .build()
        .expect("a store");
    rt.verb("ring", |_| Ok(Value::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    for _ in 0..count {
        txn.schedule_every(ObjId(1), "ring", 60.0, vec![], Options::new())
            .expect("a schedule");
    }
    txn.commit().expect("saved");
    // Two points each: at 60 s and 120 s after the start, which is 5 minutes ago.
    rt.run_for(Duration::from_secs(150)).expect("ran");
    rt.shutdown().expect("closed");
    let addr = serve(&db);
    let mut times = Vec::new();
    for _ in 0..LOADS {
        let started = Instant::now();
        let body = http_get(&addr, "/dashboard/overview");
        times.push(started.elapsed().as_secs_f64() * 1e3);
        assert!(
            body.contains("in the last hour"),
            "the overview answered: {body:.300}"
        );
    }
    value(
        "overview_ms",
        median(&mut times),
        "ms",
        GOAL_MS,
        format!(
            "GET /dashboard/overview, whole answer read, median of {LOADS}; {count} schedules \
             every 60 s that each fired twice in the last 5 minutes, SQLite, store_router"
        ),
    )
}

/// Serves the store's dashboard on a loopback port from a thread of its own; its address.
fn serve(db: &Path) -> String {
    let app =
        tickstep::dashboard::store_router(db, tickstep::dashboard::DashboardOptions::default())
            .expect("the store's dashboard");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("an address").to_string();
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        // Store reads go to tokio's blocking threads, as in `tickstep dashboard`.
        let threads = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        threads.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            let _ = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
            )
            .await;
        });
    });
    addr
}

/// `GET path` with `Connection: close`; the body.
fn http_get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("the dashboard accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_once("\r\n\r\n")
        .map_or(answer.clone(), |(_, body)| body.to_owned())
}

/// One headless Chromium under chromedriver, ended when dropped.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
    profile: tempfile::TempDir,
}

impl Browser {
    fn start() -> Result<Browser, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("no chromedriver: {e}"))?;
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            profile,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while browser.call("GET", "/status", None).is_err() {
            if Instant::now() > deadline {
                return Err("chromedriver did not answer".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--window-size=1366,768",
        ];
        let mut args: Vec<String> = flags.iter().map(ToString::to_string).collect();
        args.push(format!(
            "--user-data-dir={}",
            browser.profile.path().display()
        ));
        let answer = browser.call(
            "POST",
            "/session",
            Some(json!({"capabilities": {"alwaysMatch": {
                "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}}}})),
        )?;
        browser.session = format!(
            "/session/{}",
            answer["sessionId"].as_str().ok_or("no session")?
        );
        Ok(browser)
    }

    /// Loads `url` (a fresh navigation each time) and reads its Navigation Timing: start to the
    /// load event, in milliseconds.
    fn load_ms(&self, url: &str) -> f64 {
        let session = &self.session;
        self.call("POST", &format!("{session}/url"), Some(json!({"url": url})))
            .expect("the page loaded");
        let timing = self
            .call(
                "POST",
                &format!("{session}/execute/sync"),
                Some(
                    json!({"script": "const n = performance.getEntriesByType('navigation')[0]; \
                    return n.loadEventEnd - n.startTime;", "args": []}),
                ),
            )
            .expect("the timing");
        timing.as_f64().expect("a number")
    }

    /// One `WebDriver` command; its `value`.
    fn call(&self, method: &str, path: &str, body: Option<Json>) -> Result<Json, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .map_err(|e| e.to_string())?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .map_err(|e| e.to_string())?;
        // chromedriver keeps the connection open: read the head, then Content-Length bytes.
        let mut reader = std::io::BufReader::new(stream);
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("no answer".into());
            }
            if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = n
                    .trim()
                    .parse()
                    .map_err(|_| format!("a bad length: {line}"))?;
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut json = vec![0; length];
        reader.read_exact(&mut json).map_err(|e| e.to_string())?;
        let parsed: Json = serde_json::from_slice(&json).map_err(|e| e.to_string())?;
        Ok(parsed["value"].clone())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.call("DELETE", &self.session.clone(), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
