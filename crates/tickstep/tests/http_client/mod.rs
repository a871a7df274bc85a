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

/// Asserts a dashboard page runs and styles itself only from its own static files
/// (docs/serve.md §13.3): one `<script src>`, one stylesheet, nothing inline (no `<style>`, no
/// `style=`, no `on…=` handler), each file served with its type and a year's cache, and
/// `/favicon.ico` answering with the icon.
pub(crate) fn assert_own_files(addr: &str, page: &str) {
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(
        !page.contains("<style") && !page.contains(" style="),
        "{page}"
    );
    let linked = |before: &str| -> String {
        let from = page
            .find(before)
            .unwrap_or_else(|| panic!("{before} in {page}"))
            + before.len();
        page[from..].split('"').next().unwrap().to_owned()
    };
    for (path, kind) in [
        (linked("<script src=\""), "text/javascript"),
        (linked("<link rel=\"stylesheet\" href=\""), "text/css"),
        (
            linked("<link rel=\"icon\" type=\"image/svg+xml\" href=\""),
            "image/svg+xml",
        ),
    ] {
        assert!(path.starts_with("/dashboard/static/"), "{path}");
        let file = get(addr, &path);
        assert_eq!(file.status, 200, "{path}: {}", file.body);
        assert!(
            file.head.contains(&format!("content-type: {kind}")),
            "{path}: {}",
            file.head
        );
        assert!(
            file.head.contains("max-age=31536000, immutable"),
            "{path}: {}",
            file.head
        );
    }
    let icon = get(addr, "/favicon.ico");
    assert_eq!(icon.status, 200, "{}", icon.body);
    assert!(icon.head.contains("content-type: image/svg+xml"));
    assert_eq!(get(addr, "/dashboard/static/dashboard-0.css").status, 404);
}
