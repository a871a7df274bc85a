//! A small HTTP/1.1 client for one server-sent-event stream (docs/serve.md §14.2): it asks for
//! `/dashboard/events`, checks the answer is `200` and `text/event-stream`, undoes chunked
//! transfer encoding and yields each event's data.
//!
//! Every buffer is bounded: the answer's head at [`MAX_HEAD`], a chunk-size line at 64 bytes, an
//! event's data at [`MAX_EVENT`]; past a bound the stream ends with an error naming it, having
//! held no more than the bound. A server silent for [`SILENCE`] (no event, no keep-alive comment)
//! is taken for gone.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The largest answer head read (status line and headers).
pub(crate) const MAX_HEAD: usize = 16 * 1024;
/// The largest event (its data lines together); a snapshot is a few KiB.
pub(crate) const MAX_EVENT: usize = 1024 * 1024;
/// How long the stream may be silent: the server sends a snapshot a second and a keep-alive
/// comment every 15 s even when nothing changes.
pub(crate) const SILENCE: Duration = Duration::from_secs(30);
/// Bytes a line may have beside its share of an event: `data: `, a CR and the LF.
const FIELD_ROOM: usize = 16;
/// How long connecting may take.
const CONNECT: Duration = Duration::from_secs(5);
/// The live view's route (docs/serve.md §13.1).
pub(crate) const ROUTE: &str = "/dashboard/events";

/// Why the stream could not be opened or read (each message names the value and the rule).
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    #[error("{0:?} is not an address (use HOST:PORT, e.g. 127.0.0.1:8080)")]
    Address(String),
    #[error("cannot connect to {addr}: {source} (is `tickstep serve --http {addr}` running?)")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("{addr} answered {status:?} for {ROUTE}{detail} (docs/serve.md §13.5, §13.6)")]
    Refused {
        addr: String,
        status: String,
        detail: String,
    },
    #[error(
        "{addr} answered {ROUTE} with {content_type:?}, not text/event-stream: is it a tickstep serve --http?"
    )]
    NotEventStream { addr: String, content_type: String },
    #[error("the server closed the stream (docs/serve.md §14.2)")]
    Closed,
    #[error("the server sent nothing for {} s, not even a keep-alive (docs/serve.md §14.2)", SILENCE.as_secs())]
    Silent,
    #[error("the server sent {what} over the {limit}-byte bound (docs/serve.md §14.2)")]
    Oversized { what: &'static str, limit: usize },
    #[error("the server's answer is not HTTP/1.1 server-sent events: {0} (docs/serve.md §14.2)")]
    Garbage(String),
    #[error("reading the stream failed: {0}")]
    Io(std::io::Error),
}

/// Maps a read error: a timeout is silence, anything else is itself.
fn read_error(error: std::io::Error) -> StreamError {
    match error.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => StreamError::Silent,
        std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::ConnectionAborted
        | std::io::ErrorKind::BrokenPipe => StreamError::Closed,
        std::io::ErrorKind::InvalidData => StreamError::Garbage(error.to_string()),
        _ => StreamError::Io(error),
    }
}

/// `HOST:PORT`, also as serve prints it (`http://127.0.0.1:8080/`).
pub(crate) fn parse_addr(text: &str) -> Result<(String, SocketAddr), StreamError> {
    let bare = text
        .trim()
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let addr = bare
        .to_socket_addrs()
        .ok()
        .and_then(|mut all| all.next())
        .ok_or_else(|| StreamError::Address(text.to_owned()))?;
    Ok((bare.to_owned(), addr))
}

/// An open event stream.
pub(crate) struct EventStream<R: Read> {
    lines: BufReader<Body<BufReader<R>>>,
}

impl EventStream<TcpStream> {
    /// Connects to `addr` (as typed, for messages and the `Host` header) and asks for the
    /// events.
    pub(crate) fn open(text: &str) -> Result<Self, StreamError> {
        let (host, addr) = parse_addr(text)?;
        let connect_error = |source| StreamError::Connect {
            addr: host.clone(),
            source,
        };
        let mut stream = TcpStream::connect_timeout(&addr, CONNECT).map_err(connect_error)?;
        stream
            .set_read_timeout(Some(SILENCE))
            .map_err(connect_error)?;
        write!(
            stream,
            "GET {ROUTE} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\nUser-Agent: tickstep-top\r\n\r\n"
        )
        .map_err(connect_error)?;
        EventStream::over(stream, &host)
    }
}

impl<R: Read> EventStream<R> {
    /// Reads the answer's head from `raw` and readies its body (`host` names the server in
    /// messages).
    pub(crate) fn over(raw: R, host: &str) -> Result<Self, StreamError> {
        let mut raw = BufReader::new(raw);
        let head = read_head(&mut raw)?;
        let mut lines = head.lines();
        let status_line = lines.next().unwrap_or_default();
        let mut parts = status_line.splitn(3, ' ');
        let (version, status) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if !version.starts_with("HTTP/1.") || status.len() != 3 {
            return Err(StreamError::Garbage(format!(
                "its first line is {:?}",
                shown(status_line, 80)
            )));
        }
        let header = |name: &str| {
            head.lines().skip(1).find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| value.trim().to_ascii_lowercase())
            })
        };
        let chunked = header("transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let mut body = Body::new(raw, chunked);
        if status != "200" {
            // The server's sentence says why (a full house of viewers is `503`); read to its
            // length, as the connection may stay open after it.
            let length = header("content-length").and_then(|v| v.parse::<u64>().ok());
            let mut said = Vec::new();
            let _ = (&mut body)
                .take(length.unwrap_or(512).min(512))
                .read_to_end(&mut said);
            let said = String::from_utf8_lossy(&said);
            let said = said.trim();
            return Err(StreamError::Refused {
                addr: host.to_owned(),
                status: shown(status_line, 80),
                detail: if said.is_empty() {
                    String::new()
                } else {
                    format!(": {}", shown(said, 200))
                },
            });
        }
        let content_type = header("content-type").unwrap_or_default();
        if !content_type.starts_with("text/event-stream") {
            return Err(StreamError::NotEventStream {
                addr: host.to_owned(),
                content_type: shown(&content_type, 80),
            });
        }
        Ok(EventStream {
            lines: BufReader::new(body),
        })
    }

    /// The next event's data (its `data:` lines joined by newlines), skipping comments and
    /// events with no data.
    pub(crate) fn next_event(&mut self) -> Result<String, StreamError> {
        let mut data = String::new();
        let mut has_data = false;
        let mut line = Vec::new();
        loop {
            line.clear();
            // What the event may still hold, and room for the field's name and the newline.
            let left = MAX_EVENT.saturating_sub(data.len()) + FIELD_ROOM;
            let read = (&mut self.lines)
                .take(left as u64 + 1)
                .read_until(b'\n', &mut line)
                .map_err(read_error)?;
            if read == 0 {
                return Err(StreamError::Closed);
            }
            if line.last() != Some(&b'\n') {
                if line.len() as u64 > left as u64 {
                    return Err(StreamError::Oversized {
                        what: "an event",
                        limit: MAX_EVENT,
                    });
                }
                return Err(StreamError::Closed);
            }
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                if has_data {
                    return Ok(data);
                }
                continue;
            }
            let text = std::str::from_utf8(&line)
                .map_err(|_| StreamError::Garbage("an event line is not UTF-8".into()))?;
            let (field, value) = text.split_once(':').unwrap_or((text, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => {
                    if has_data {
                        data.push('\n');
                    }
                    data.push_str(value);
                    has_data = true;
                    if data.len() > MAX_EVENT {
                        return Err(StreamError::Oversized {
                            what: "an event",
                            limit: MAX_EVENT,
                        });
                    }
                }
                // A comment (keep-alive), or the fields the live view does not use.
                "" | "event" | "id" | "retry" => {}
                other => {
                    return Err(StreamError::Garbage(format!(
                        "unknown field {:?}",
                        shown(other, 40)
                    )));
                }
            }
        }
    }
}

/// The answer's head, up to its blank line, within [`MAX_HEAD`].
fn read_head(raw: &mut impl BufRead) -> Result<String, StreamError> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let read = raw
            .take((MAX_HEAD - head.len()) as u64 + 1)
            .read_until(b'\n', &mut head)
            .map_err(read_error)?;
        if read == 0 {
            return Err(if head.is_empty() {
                StreamError::Closed
            } else {
                StreamError::Garbage("the answer ended inside its head".into())
            });
        }
        if head.len() > MAX_HEAD {
            return Err(StreamError::Oversized {
                what: "an answer head",
                limit: MAX_HEAD,
            });
        }
        if matches!(&head[before..], b"\r\n" | b"\n") {
            return String::from_utf8(head)
                .map_err(|_| StreamError::Garbage("the answer's head is not UTF-8".into()));
        }
    }
}

/// What the server sent, shortened and with control characters made visible, for a message.
pub(crate) fn shown(text: &str, at_most: usize) -> String {
    let mut out: String = super::visible(text).chars().take(at_most).collect();
    if text.chars().count() > at_most {
        out.push('…');
    }
    out
}

/// An answer's body: as sent, or with its chunked transfer encoding undone.
struct Body<R> {
    inner: R,
    chunked: bool,
    /// Bytes left in the current chunk.
    left: u64,
    done: bool,
}

impl<R: BufRead> Body<R> {
    fn new(inner: R, chunked: bool) -> Self {
        Body {
            inner,
            chunked,
            left: 0,
            done: false,
        }
    }

    /// Reads the next chunk's size line (`1a3f` with any `;extension`).
    fn next_chunk(&mut self) -> std::io::Result<u64> {
        let mut line = Vec::new();
        (&mut self.inner).take(64).read_until(b'\n', &mut line)?;
        if line.is_empty() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let text = std::str::from_utf8(&line).ok().map(str::trim_end);
        let size = text
            .filter(|_| line.ends_with(b"\n"))
            .and_then(|t| t.split(';').next())
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok());
        size.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "a bad chunk-size line {:?}",
                    shown(&String::from_utf8_lossy(&line), 40)
                ),
            )
        })
    }

    /// Reads the CRLF that ends a chunk's data.
    fn end_of_chunk(&mut self) -> std::io::Result<()> {
        let mut crlf = Vec::new();
        (&mut self.inner).take(2).read_until(b'\n', &mut crlf)?;
        if crlf == b"\r\n" || crlf == b"\n" {
            Ok(())
        } else if crlf.is_empty() {
            Err(std::io::ErrorKind::UnexpectedEof.into())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a chunk longer than its size",
            ))
        }
    }
}

impl<R: BufRead> Read for Body<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.chunked {
            return self.inner.read(buf);
        }
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            self.left = self.next_chunk()?;
            if self.left == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n as u64;
        if self.left == 0 {
            self.end_of_chunk()?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn stream(raw: &str) -> Result<EventStream<std::io::Cursor<Vec<u8>>>, StreamError> {
        EventStream::over(std::io::Cursor::new(raw.as_bytes().to_vec()), "test")
    }

    const OK: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n";

    fn chunked(body: &str, pieces: usize) -> String {
        let mut out = format!("{OK}transfer-encoding: chunked\r\n\r\n");
        let bytes = body.as_bytes();
        for piece in bytes.chunks(bytes.len().div_ceil(pieces).max(1)) {
            let _ = write!(out, "{:x}\r\n", piece.len());
            out.push_str(std::str::from_utf8(piece).unwrap());
            out.push_str("\r\n");
        }
        out.push_str("0\r\n\r\n");
        out
    }

    #[test]
    fn events_come_whole_across_chunks_with_comments_skipped() {
        // docs/serve.md §14.2
        let body = ": keep-alive\n\ndata: {\"a\":1}\n\ndata: one\ndata: two\r\n\r\n";
        for pieces in [1, 3, 7, body.len()] {
            let mut events = stream(&chunked(body, pieces)).unwrap();
            assert_eq!(events.next_event().unwrap(), "{\"a\":1}");
            assert_eq!(events.next_event().unwrap(), "one\ntwo");
            assert!(matches!(events.next_event(), Err(StreamError::Closed)));
        }
    }

    #[test]
    fn a_plain_body_is_read_as_sent() {
        let mut events = stream(&format!("{OK}\r\ndata: x\n\n")).unwrap();
        assert_eq!(events.next_event().unwrap(), "x");
        assert!(matches!(events.next_event(), Err(StreamError::Closed)));
    }

    #[test]
    fn an_event_over_the_bound_is_refused_having_held_no_more_than_it() {
        // docs/serve.md §14.2
        let huge = "x".repeat(MAX_EVENT + 100);
        for body in [
            format!("data: {huge}\n\n"),
            format!("data: {huge}"),
            format!(
                "data: {}\ndata: {}\n\n",
                &huge[..MAX_EVENT / 2],
                &huge[..MAX_EVENT / 2]
            ),
        ] {
            let mut events = stream(&chunked(&body, 5)).unwrap();
            let error = events.next_event().unwrap_err();
            assert!(matches!(error, StreamError::Oversized { .. }), "{error}");
            assert!(error.to_string().contains("1048576-byte bound"), "{error}");
        }
        // An event just at the bound passes.
        let fits = "y".repeat(MAX_EVENT);
        let mut events = stream(&format!("{OK}\r\ndata: {fits}\n\n")).unwrap();
        assert_eq!(events.next_event().unwrap().len(), MAX_EVENT);
    }

    #[test]
    fn refusals_and_garbage_are_named() {
        // docs/serve.md §14.2
        let cases = [
            (
                "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 20\r\n\r\n64 viewers watch\n",
                "503 Service Unavailable\" for /dashboard/events: 64 viewers watch",
            ),
            ("HTTP/1.1 404 Not Found\r\n\r\n", "404 Not Found"),
            (
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n<html>",
                "not text/event-stream",
            ),
            (
                "SSH-2.0-OpenSSH\r\n\r\n",
                "its first line is \"SSH-2.0-OpenSSH\"",
            ),
            ("\u{1b}[2J junk\n\n", "\\\\x1b[2J junk"),
            ("", "closed the stream"),
        ];
        for (raw, expected) in cases {
            let error = stream(raw).err().expect("refused").to_string();
            assert!(error.contains(expected), "{raw:?}: {error}");
        }
        let head = format!("HTTP/1.1 200 OK\r\nx: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert!(matches!(stream(&head), Err(StreamError::Oversized { .. })));
        let bad_chunk = format!("{OK}transfer-encoding: chunked\r\n\r\nzz\r\n");
        let error = stream(&bad_chunk).unwrap().next_event().unwrap_err();
        assert!(error.to_string().contains("bad chunk-size"), "{error}");
        let unknown = format!("{OK}\r\nwhat: ever\n\n");
        let error = stream(&unknown).unwrap().next_event().unwrap_err();
        assert!(
            error.to_string().contains("unknown field \"what\""),
            "{error}"
        );
    }

    #[test]
    fn addresses_are_read_as_serve_prints_them() {
        assert_eq!(
            parse_addr("http://127.0.0.1:8080/").unwrap().0,
            "127.0.0.1:8080"
        );
        let error = parse_addr("nowhere").unwrap_err().to_string();
        assert!(error.contains("\"nowhere\" is not an address"), "{error}");
    }
}
