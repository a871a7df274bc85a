//! Issue 31 against the real binary, on each transport: a mistyped password is asked again and
//! never shown back, a lockout says so and gives the name prompt, and a WebSocket frame ending in
//! CRLF is one line (docs/serve.md §9.2, §10.7–§10.12). Before the fix a wrong password left the
//! server reading names, so the retyped password came back as `password: <it> is a new name`,
//! and a frame `name\r\n` was a name and an empty password.
//!
//! The clients: a raw TCP client as `nc` is (`tests/serve_client`), telnetlib3 and websockets
//! (`tests/clients`). Every wait is bounded; a client program that is not installed skips its test
//! with a note, except under `CI`. The in-process state-machine test over every transport is
//! `src/serve/login_tests.rs`.

mod serve_client;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use serve_client::{Client, PATIENCE, Server, available, password_of, run_bounded};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

/// The next line, which must come.
fn next(client: &mut Client) -> String {
    let deadline = std::time::Instant::now() + PATIENCE;
    client
        .line(deadline)
        .unwrap_or_else(|| panic!("closed; saw {:#?}", client.seen))
}

/// Whether any line the client saw holds `secret`.
fn shown(client: &Client, secret: &str) -> bool {
    client.seen.iter().any(|line| line.contains(secret))
}

/// Makes `name`'s account with [`password_of`], and leaves.
fn register(server: &Server, name: &str) {
    server.login(name).quit();
}

#[test]
fn over_raw_tcp_a_mistyped_password_is_asked_again_and_the_retyped_one_is_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    register(&server, "alice");
    // alice's password is shaped like a name: read as one, it would make an account.
    let right = password_of("alice");
    let wrong = "alice-secreT";

    let mut nc = server.connect();
    nc.send("alice");
    assert_eq!(next(&mut nc), "password: type alice's password");
    nc.send(wrong);
    assert_eq!(next(&mut nc), "error: wrong password for alice");
    assert_eq!(next(&mut nc), "password: type alice's password");
    nc.send(&right);
    assert_eq!(next(&mut nc), "ok: welcome, alice (#101)");
    assert!(!shown(&nc, &right) && !shown(&nc, wrong), "{:#?}", nc.seen);
    assert_eq!(nc.ask("who"), "ok: 1 online: alice");
    nc.quit();
    server.shutdown();
}

#[test]
fn over_raw_tcp_a_lockout_says_so_and_gives_the_name_prompt_and_quotes_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    register(&server, "alice");
    let mut nc = server.connect();
    nc.send("alice");
    let mut guesses = Vec::new();
    for n in 0..5 {
        assert_eq!(next(&mut nc), "password: type alice's password");
        let guess = format!("open sesame {n}!");
        nc.send(&guess);
        guesses.push(guess);
        if n < 4 {
            assert_eq!(next(&mut nc), "error: wrong password for alice");
        }
    }
    assert!(
        next(&mut nc).starts_with("error: too many failed logins from your address: 5 at once"),
        "{:#?}",
        nc.seen
    );
    assert_eq!(
        next(&mut nc),
        "name: type your name (a new name makes an account), or help"
    );
    // A player who types the password again now typed it at the name prompt: it is refused as a
    // name without being quoted (docs/serve.md §10.11), and the name prompt comes again.
    nc.send("open sesame 5!");
    guesses.push("open sesame 5!".into());
    assert_eq!(
        next(&mut nc),
        "error: a name is 1-24 letters, digits, '_' or '-'"
    );
    assert_eq!(
        next(&mut nc),
        "name: type your name (a new name makes an account), or help"
    );
    // The name again, locked out: refused before its password, then the name prompt.
    nc.send("alice");
    assert!(next(&mut nc).starts_with("error: too many failed logins"));
    assert_eq!(
        next(&mut nc),
        "name: type your name (a new name makes an account), or help"
    );
    assert!(
        guesses
            .iter()
            .all(|guess| !shown(&nc, guess) && !shown(&nc, "sesame")),
        "{:#?}",
        nc.seen
    );
}

#[test]
fn over_telnet_a_mistyped_password_is_asked_again_with_the_echo_still_off() {
    if !available(
        "python3 with telnetlib3 (.ci/requirements.txt)",
        Command::new("python3").args(["-c", "import telnetlib3"]),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    register(&server, "tess");
    let (host, port) = server.addr.rsplit_once(':').unwrap();
    let right = password_of("tess");
    let wrong = "tess-secreT";
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/telnetlib3_login.py");
    let output = run_bounded(
        Command::new("python3")
            .arg(script)
            .args([host, port, "tess", wrong, &right]),
        PATIENCE * 2,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(
        seen["after_wrong"],
        json!([
            "error: wrong password for tess",
            "password: type tess's password"
        ])
    );
    assert_eq!(seen["welcome"], "ok: welcome, tess (#101)");
    // docs/serve.md §8.5, §10.9: the echo is off at the first prompt and stays off at the prompt
    // asked again; it is back on once the login is through.
    assert_eq!(
        seen["echo_off_at_each_password_prompt"],
        json!([true, true])
    );
    assert_eq!(seen["echo_on_after"], true);
    let lines = seen["lines"].to_string();
    assert!(!lines.contains(&right) && !lines.contains(wrong), "{lines}");
    server.shutdown();
}

#[test]
fn over_websocket_a_frame_ending_in_crlf_is_one_line_and_no_password_comes_back() {
    if !available(
        "python3 with websockets (.ci/requirements.txt)",
        Command::new("python3").args(["-c", "import websockets"]),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--http", "127.0.0.1:0"]);
    register(&server, "wendy");
    let addr = server.http_addr();
    let right = password_of("wendy");
    let wrong = "wendy-secreT";
    let plain_password = password_of("pat");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/websocket_login.py");
    let output = run_bounded(
        Command::new("python3").arg(script).args([
            addr.as_str(),
            "wendy",
            wrong,
            &right,
            "pat",
            &plain_password,
        ]),
        PATIENCE * 2,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    // gmcp.mudstandards.org: `wendy\r\n` is one line, so the next line is its password prompt
    // and nothing else (docs/serve.md §9.2); each line comes back in a frame of its own, in CRLF.
    assert_eq!(seen["name"], json!(["password: type wendy's password\r\n"]));
    assert_eq!(
        seen["wrong"],
        json!([
            "error: wrong password for wendy\r\n",
            "password: type wendy's password\r\n"
        ])
    );
    // The right password in a frame ending in CR, whose LF starts the next frame, which holds two
    // more lines: `who`, ended, and `who`, ended by the frame's end.
    assert_eq!(
        seen["right"],
        json!([
            "ok: welcome, wendy (#101)\r\n",
            "ok: 1 online: wendy\r\n",
            "ok: 1 online: wendy\r\n"
        ])
    );
    // Plain TEXT frames end their lines the same way: `pat\n` is one line.
    assert_eq!(
        seen["plain_name"],
        json!(["password: pat is a new name; choose a password (at least 6 characters)"])
    );
    assert_eq!(seen["plain_password"], json!(["ok: welcome, pat (#102)"]));
    let frames = seen.to_string();
    for secret in [right.as_str(), wrong, plain_password.as_str()] {
        assert!(!frames.contains(secret), "{secret} came back: {frames}");
    }
    server.shutdown();
}
