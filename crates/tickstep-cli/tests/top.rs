//! `tickstep top` (docs/serve.md §14) against a real `tickstep serve --http`: its plain lines, its
//! live view in a real terminal (tmux), and hostile or vanishing servers. Every wait is bounded;
//! the assertions are about what was shown, never how long it took.

mod serve_client;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};

use serve_client::tmux::Tmux;
use serve_client::{PATIENCE, Server, available, id_of};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

/// `tickstep top` with `args`, run to its end within [`PATIENCE`] — less than the 30 s of silence
/// after which `top` gives up on a server, so a wait on a quiet connection fails the test.
fn top(args: &[&str]) -> Output {
    serve_client::run_bounded(
        Command::new(env!("CARGO_BIN_EXE_tickstep"))
            .arg("top")
            .args(args),
        PATIENCE,
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A server with three schedules of alice's, its HTTP address, and alice (online while kept).
fn serve_with_schedules(dir: &tempfile::TempDir) -> (Server, String, serve_client::Client) {
    let server = Server::start(&store(dir), &["--http", "127.0.0.1:0"]);
    let addr = server.http_addr();
    let mut alice = server.login("alice");
    for verb in [
        "every 3600 tell one",
        "every 7200 tell two",
        "remind 600 tea",
    ] {
        id_of(&alice.ask(verb));
    }
    (server, addr, alice)
}

#[test]
fn frames_prints_a_line_per_snapshot_of_a_running_serve() {
    // docs/serve.md §14.4
    let dir = tempfile::tempdir().unwrap();
    let (server, addr, mut alice) = serve_with_schedules(&dir);
    let quiet = id_of(&alice.ask("every 60 tell quiet"));
    assert!(
        alice
            .ask(&format!("pause {quiet}"))
            .starts_with("ok: paused")
    );
    let out = top(&["--http", &format!("http://{addr}/"), "--frames", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for line in &lines {
        assert!(line.starts_with("period_us=16666 frames="), "{line}");
        assert!(line.contains(" schedules=4 paused=1 "), "{line}");
        assert!(line.contains(" online=1"), "{line}");
        assert!(
            line.contains(" pending=kernel:0,high:0,normal:0,low:0,background:0 "),
            "{line}"
        );
    }
    server.shutdown();
}

/// `tickstep top --http ADDR` in a tmux pane of its own; its exit status is printed after it
/// (`top-exited=N`), and the pane stays for the test to read.
fn top_in_tmux(name: &str, addr: &str) -> Tmux {
    Tmux::start(
        name,
        110,
        32,
        &format!(
            "{} top --http {addr}; echo top-exited=$?; sleep 60",
            env!("CARGO_BIN_EXE_tickstep")
        ),
    )
}

#[test]
fn the_live_view_shows_the_budget_and_the_schedules_in_a_terminal_and_q_quits() {
    // docs/serve.md §14.1, §14.5
    if !available("tmux", Command::new("tmux").arg("-V")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (server, addr, _alice) = serve_with_schedules(&dir);
    let tmux = top_in_tmux("top", &addr);
    tmux.wait_for("step time vs budget");
    let screen = tmux.wait_for("live schedules          3");
    assert!(screen.contains("budget 16.67ms"), "{screen}");
    assert!(screen.contains("players online          1"), "{screen}");
    assert!(screen.contains("of them paused        0"), "{screen}");
    assert!(screen.contains("background"), "{screen}");
    assert!(screen.contains("running commands: 0"), "{screen}");
    tmux.type_keys("q");
    let screen = tmux.wait_for("top-exited=0");
    // The terminal is given back: the view's alternate screen is gone.
    assert!(!screen.contains("step time vs budget"), "{screen}");
    server.shutdown();
}

#[test]
fn the_live_view_says_why_when_the_server_goes_and_gives_the_terminal_back() {
    // docs/serve.md §14.1, §14.2
    if !available("tmux", Command::new("tmux").arg("-V")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (server, addr, _alice) = serve_with_schedules(&dir);
    let tmux = top_in_tmux("top-gone", &addr);
    tmux.wait_for("live schedules          3");
    drop(server); // killed, mid-stream
    let screen = tmux.wait_for("top-exited=1");
    assert!(
        screen.contains("tickstep: the server closed the stream"),
        "{screen}"
    );
    assert!(!screen.contains("step time vs budget"), "{screen}");
}

/// A fake HTTP side that answers one request with `answer`, on its own thread, then closes the
/// connection (or, if `hold`, keeps it open as a keep-alive server would).
fn fake_server(answer: Vec<u8>, hold: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        read_request(&stream);
        // The client may hang up before all of it is written: that is what is tested.
        let _ = stream.write_all(&answer);
        if hold {
            // Until the client hangs up (or the test process ends).
            let _ = std::io::Read::read(&mut stream, &mut [0u8; 1]);
        }
    });
    addr
}

fn read_request(stream: &TcpStream) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
        line.clear();
    }
}

const EVENT_STREAM: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";

/// Runs `top --frames 3` against a fake answer; it must fail, saying `expected`.
fn refused(answer: Vec<u8>, expected: &str) -> Output {
    refused_by(&fake_server(answer, false), expected)
}

fn refused_by(addr: &str, expected: &str) -> Output {
    let out = top(&["--http", addr, "--frames", "3"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.starts_with("tickstep: "), "{said}");
    assert!(said.contains(expected), "{said}");
    out
}

#[test]
fn a_ten_megabyte_event_is_refused_at_the_bound() {
    // docs/serve.md §14.2
    let mut answer = format!("{EVENT_STREAM}data: ").into_bytes();
    answer.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    answer.extend_from_slice(b"\n\n");
    refused(
        answer,
        "the server sent an event over the 1048576-byte bound",
    );
}

#[test]
fn junk_is_refused_with_what_it_was() {
    // docs/serve.md §14.2, §14.3
    refused(
        format!("{EVENT_STREAM}data: <html>\u{1b}[2J</html>\n\n").into_bytes(),
        "an event is not a live-view snapshot",
    );
    let out = refused(
        b"\x16\x03\x01 binary junk\r\n\r\n".to_vec(),
        "not HTTP/1.1 server-sent events",
    );
    assert!(
        !text(&out.stderr).contains('\u{16}'),
        "control bytes shown escaped"
    );
    refused(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n<html>".to_vec(),
        "not text/event-stream",
    );
    // A refusal on a connection the server keeps open is read to its length, not waited on.
    refused_by(
        &fake_server(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 17\r\n\r\n64 viewers watch\n"
                .to_vec(),
            true,
        ),
        "\"HTTP/1.1 503 Service Unavailable\" for /dashboard/events: 64 viewers watch",
    );
}

#[test]
fn a_server_gone_mid_stream_ends_top_with_an_error_after_what_it_showed() {
    // docs/serve.md §14.2
    let snapshot = r#"{"period_us":16666,"frames":[[40,38]],"schedules_live":2}"#;
    let out = refused(
        format!("{EVENT_STREAM}data: {snapshot}\n\n").into_bytes(),
        "the server closed the stream (docs/serve.md §14.2), after 1 snapshots",
    );
    let shown = text(&out.stdout);
    assert_eq!(shown.lines().count(), 1, "{shown}");
    assert!(shown.contains(" schedules=2 "), "{shown}");
}

#[test]
fn a_wrong_address_is_named() {
    // docs/serve.md §14.2
    let free = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap().to_string();
    drop(free);
    let out = top(&["--http", &addr, "--frames", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!("cannot connect to {addr}")),
        "{said}"
    );
    let out = top(&["--http", "not-an-address", "--frames", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("\"not-an-address\" is not an address"),
        "{}",
        text(&out.stderr)
    );
}
