//! `tickstep serve` spoken to by real clients (docs/serve.md §8, §9): `tt++` in tmux,
//! telnetlib3, and hostile byte streams beside a steady player. Every wait is bounded (a deadline
//! per expected line or screen, a bound on each process); the assertions are about what was said,
//! never how long it took.
//!
//! A client program that is not installed skips its test with a note, except under `CI`, where
//! `.ci/run` installs them and a missing one fails the test.

mod serve_client;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serve_client::tmux::Tmux;
use serve_client::{PATIENCE, Server, available, id_of, password_of};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

/// Runs `command` to its end within [`PATIENCE`] × 2, killing it past that.
fn run_bounded(command: &mut Command) -> Output {
    serve_client::run_bounded(command, PATIENCE * 2)
}

fn host_port(addr: &str) -> (&str, &str) {
    addr.rsplit_once(':').expect("host:port")
}

#[test]
fn telnetlib3_negotiates_naws_ttype_charset_and_gmcp() {
    if !available(
        "python3 with telnetlib3 (.ci/requirements.txt)",
        Command::new("python3").args(["-c", "import telnetlib3"]),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let (host, port) = host_port(&server.addr);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/telnetlib3_client.py");
    let output = run_bounded(Command::new("python3").arg(script).args([
        host,
        port,
        "lib",
        &password_of("lib"),
    ]));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");

    // docs/serve.md §8.6: a Get before login is refused, and so is one after the name but before
    // its password (docs/serve.md §10.1); at login the client learns who it is.
    for before in ["before_login", "before_password"] {
        assert_eq!(
            seen[before]["error"], "log in first: your name, then its password",
            "{before}"
        );
    }
    assert_eq!(seen["char_name_before_password"], false);
    // docs/serve.md §8.5, §10.1: the client's echo is off while it types the password, and on
    // again after.
    assert_eq!(seen["echo_before"], false);
    assert_eq!(seen["echo_off_for_password"], true);
    assert_eq!(seen["echo_on_after_password"], true);
    assert_eq!(seen["char_name"]["name"], "lib");
    assert_eq!(seen["char_name"]["wizard"], false);
    // The player's schedules, as `schedules` lists them.
    assert_eq!(seen["listing"]["total"], 2);
    let texts: Vec<&str> = seen["listing"]["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("as hourly every 3600 s")),
        "{texts:?}"
    );
    // docs/serve.md §8.4: what the server recorded of the client's negotiation.
    let client = &seen["client"];
    assert_eq!(client["telnet"], true);
    assert_eq!(client["width"], 100);
    assert_eq!(client["height"], 30);
    assert_eq!(client["utf8"], true, "{client}");
    let types = client["terminal_types"].as_array().unwrap();
    assert!(
        types
            .iter()
            .any(|t| t.as_str().unwrap().eq_ignore_ascii_case("xterm-256color")),
        "{client}"
    );
    assert!(
        client["client"].as_str().unwrap().contains("telnetlib3"),
        "{client}"
    );
    // The reminder fired, and no negotiation byte reached the line parser (docs/serve.md §8.2): no line was
    // refused, none shows a stray byte.
    assert!(
        seen["fired"].as_str().unwrap().ends_with("tea is ready"),
        "{seen}"
    );
    let lines: Vec<&str> = seen["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(!lines.iter().any(|l| l.starts_with("error:")), "{lines:#?}");
    // docs/serve.md §8.4: a long line arrives wrapped at the 100 columns the client reported,
    // counted as the client shows them (the server's colour takes no column).
    let shown = |l: &str| l.replace("\u{1b}[36m", "").replace("\u{1b}[0m", "");
    assert!(
        lines.iter().all(|l| shown(l).chars().count() <= 100),
        "{lines:#?}"
    );
    // docs/serve.md §8.10: the client said it is an xterm, so the server's marker comes in colour.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("\u{1b}[36m[say]\u{1b}[0m lib says: word word")),
        "{lines:#?}"
    );
    server.shutdown();
}

fn tintin() -> Option<&'static str> {
    ["/usr/games/tt++", "/usr/bin/tt++"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

#[test]
fn tintin_logs_in_sets_a_reminder_and_receives_it() {
    let found = tintin();
    if !available("tmux", Command::new("tmux").arg("-V"))
        || !available(
            "TinTin++ (apt: tintin++)",
            // `tt++ -V` prints its version but exits 1 when its input is not a terminal (as
            // under CI), so the probe reads what it printed instead of its status.
            Command::new("sh").args([
                "-c",
                &format!("{} -V </dev/null | grep -q TinTin", found.unwrap_or("tt++")),
            ]),
        )
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let (host, port) = host_port(&server.addr);
    let tt = found.unwrap();
    let tmux = Tmux::start(
        "tintin",
        120,
        40,
        &format!("{tt} -G -e '#session s {host} {port}'"),
    );
    tmux.wait_for("hello: this is a tickstep world");
    tmux.type_line("tina");
    tmux.wait_for("password: tina is a new name");
    tmux.type_line(&password_of("tina"));
    let screen = tmux.wait_for("ok: welcome, tina");
    // The server turned TinTin++'s echo off for the password line (docs/serve.md §8.5, §10.1).
    assert!(!screen.contains(&password_of("tina")), "{screen}");
    tmux.type_line("remind 1 tea is ready");
    let screen = tmux.wait_for("reminds you in 1 s");
    let reply = screen
        .lines()
        .find(|l| l.starts_with("ok: schedule #"))
        .expect("the reply is on screen");
    let fired = format!("[#{}] tea is ready", id_of(reply));
    let screen = tmux.wait_for(&fired);
    // TinTin++'s negotiation never reached the line parser: no line was refused, and the
    // screen shows no byte of telnet (docs/serve.md §8.2).
    assert!(!screen.contains("error:"), "{screen}");
    assert!(
        !screen.contains('\u{fffd}') && !screen.contains('ÿ') && !screen.contains("^["),
        "{screen}"
    );
    tmux.type_line("quit");
    tmux.wait_for("ok: bye");
    server.shutdown();
}

/// Writes `bytes` in chunks, stopping quietly when the server has closed the connection.
fn pour(stream: &mut TcpStream, bytes: &[u8]) {
    for chunk in bytes.chunks(64 * 1024) {
        if stream.write_all(chunk).is_err() {
            return;
        }
    }
}

/// Reads what the server sends until it closes or goes quiet for a moment; the byte count.
fn drain(stream: &mut TcpStream) -> usize {
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut total = 0;
    let mut chunk = [0u8; 4096];
    while Instant::now() < deadline {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    total
}

#[test]
fn hostile_telnet_leaves_other_players_served_and_frames_in_budget() {
    // docs/serve.md §8.3, docs/serve.md §8.7
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--max-line", "1024"]);
    let mut steady = server.login("steady");
    let mut wizard = server.login("merlin");
    assert!(wizard.ask("stats").starts_with("ok:")); // a fresh window

    // A sub-negotiation that never ends: 4 MB inside IAC SB GMCP.
    let mut endless = server.connect();
    pour(&mut endless.stream, &[255, 250, 201]);
    pour(&mut endless.stream, &vec![b'x'; 4 << 20]);
    // The connection is not harmed either: once the sub-negotiation ends, lines flow again.
    pour(&mut endless.stream, &[255, 240]);
    endless.log_in("endless", &password_of("endless"));

    // A megabyte of IAC bytes: data bytes 255, so an over-long line that closes the connection.
    let mut iacs = server.connect();
    pour(&mut iacs.stream, &vec![255; 1 << 20]);
    assert_eq!(
        iacs.expect("error:"),
        "error: line longer than 1024 bytes; closing the connection"
    );
    iacs.expect_closed();

    // A DO/DONT flood on every option: a bounded answer, and the connection still works.
    let mut flood = server.connect();
    let storm: Vec<u8> = (0..20_000u32)
        .flat_map(|i| {
            let option = (i % 256) as u8;
            [
                255, 253, option, 255, 254, option, 255, 251, option, 255, 252, option,
            ]
        })
        .collect();
    pour(&mut flood.stream, &storm);
    let answered = drain(&mut flood.stream);
    assert!(
        answered < 16 * 1024,
        "{answered} bytes answered 960,000 bytes of negotiation"
    );
    flood.log_in("flood", &password_of("flood"));

    // The steady player was served throughout, and a reminder fired for them.
    let remind = steady.ask("remind 1 still here");
    let id = id_of(&remind);
    assert_eq!(steady.expect("[#"), format!("[#{id}] still here"));
    assert!(steady.ask("who").starts_with("ok: 4 online"));
    // No frame's own work overran its period (CPU time: docs/serve.md §3.5; on this shared
    // machine a preempted frame may still run over on the wall clock, which is not asserted).
    let stats = wizard.ask("stats");
    assert!(stats.contains(" cpu_overruns=0 "), "{stats}");
    wizard.quit();
    server.shutdown();
}

#[test]
fn a_websocket_client_logs_in_plays_and_receives_a_firing() {
    // docs/serve.md §9
    if !available(
        "python3 with websockets (.ci/requirements.txt)",
        Command::new("python3").args(["-c", "import websockets"]),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--ws", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let addr = addr.as_str();

    // The page itself: plain HTTP, no external resources.
    let mut http = TcpStream::connect(addr).unwrap();
    write!(
        http,
        "GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut body = String::new();
    http.read_to_string(&mut body).unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    // Its script is its own file, under a policy with no inline script (docs/serve.md §9.5, §9.7).
    assert!(body.contains("<script src=\"/client.js\">") && !body.contains("https://"));

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/websocket_client.py");
    // Both of the script's players log in with this password (docs/serve.md §9.3, §10.1).
    let password = password_of("ws");
    let output = run_bounded(Command::new("python3").arg(script).args([addr, &password]));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");

    // Plain text: one line per TEXT frame, nothing of telnet, the reminder fired.
    assert_eq!(seen["plain_protocol"], serde_json::Value::Null);
    let plain: Vec<&str> = seen["plain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().expect("TEXT frames only"))
        .collect();
    assert!(
        plain.iter().all(|l| !l.contains(['\r', '\n', '\u{fffd}'])),
        "{plain:#?}"
    );
    assert!(
        plain.iter().any(|l| l.ends_with("] tea is ready")),
        "{plain:#?}"
    );

    // gmcp.mudstandards.org: lines in BINARY frames, GMCP in TEXT frames.
    assert_eq!(seen["gmcp_protocol"], "gmcp.mudstandards.org");
    assert_eq!(seen["listing"]["total"], 1);
    let framed = seen["framed"].as_array().unwrap();
    assert!(
        framed
            .iter()
            .any(|f| f.as_str().is_some_and(|t| t.starts_with("Char.Name {"))),
        "{framed:#?}"
    );
    assert!(
        framed.iter().any(|f| f["binary"]
            .as_str()
            .is_some_and(|l| l.starts_with("[#") && l.ends_with("tea\r\n"))),
        "{framed:#?}"
    );

    // A page of another origin may not open a WebSocket (docs/serve.md §9.4).
    assert_eq!(seen["foreign_origin"], 403);
    server.shutdown();
}

#[test]
fn every_line_end_a_client_may_send_gets_a_reply() {
    // docs/serve.md §8.2: CR alone (which once got no reply at all), CR NUL, CRLF and LF.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut client = server.connect();
    client.send_bytes(b"carol\r");
    client.expect("password: ");
    client.send_bytes(format!("{}\r", password_of("carol")).as_bytes());
    client.expect("ok: welcome, carol");
    for (end, name) in [
        (&b"\r"[..], "CR"),
        (b"\r\0", "CR NUL"),
        (b"\r\n", "CRLF"),
        (b"\n", "LF"),
    ] {
        client.send_bytes(&[b"who".as_slice(), end].concat());
        assert_eq!(
            client.expect("ok:"),
            "ok: 1 online: carol",
            "a line ended by {name}"
        );
    }
    // No line end was read as an empty line or a second command: nothing else came back.
    assert_eq!(client.ask("schedules"), "ok: 0 live schedules");
    client.quit();
    server.shutdown();
}
