//! A plain HTTP/1.1 client on a socket, for the dashboard tests: this crate's and
//! tickstep-cli's (which include this file by path). One request per connection
//! (`Connection: close`), read to its end within [`PATIENCE`]; the answer's status, head and body.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest an answer may take to arrive.
pub(crate) const PATIENCE: Duration = Duration::from_secs(15);

/// A form's content type, as an extra header line for [`post`].
pub(crate) const FORM: &str = "Content-Type: application/x-www-form-urlencoded\r\n";

/// One answer: its status (0 if none came), its head (lower-cased), its body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

/// Sends `request` (its first line and any headers, without the blank line) and reads the
/// answer to the end.
pub(crate) fn http(addr: &str, request: &str) -> Answer {
    send(
        addr,
        &format!("{request}\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

/// `GET path`.
pub(crate) fn get(addr: &str, path: &str) -> Answer {
    http(addr, &format!("GET {path} HTTP/1.1"))
}

/// POSTs `body` to `path`, with `extra` header lines (each ending in CRLF, e.g. [`FORM`]).
pub(crate) fn post(addr: &str, path: &str, extra: &str, body: &str) -> Answer {
    send(
        addr,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Reads server-sent events from `/dashboard/events` until `count` data lines came, each as JSON.
pub(crate) fn events(addr: &str, count: usize) -> Vec<serde_json::Value> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "GET /dashboard/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    let mut lines = BufReader::new(stream).lines();
    while seen.len() < count {
        assert!(Instant::now() < deadline, "only {} events came", seen.len());
        let line = lines.next().expect("the stream stays open").unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            seen.push(serde_json::from_str(data).expect("each event is JSON"));
        }
    }
    seen
}

fn send(addr: &str, request: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("the HTTP side accepts");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    Answer {
        status: head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
        head: head.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}
