//! One connection: read capped lines, log in, run commands, write replies and the world's lines
//! (docs/serve.md §2).
//!
//! Hostile input never reaches the world: a line over the cap closes the connection with a
//! reason; bytes that are not UTF-8 get an error naming the first bad byte and the line is
//! ignored; a client that never names itself is dropped after the login timeout; a client that
//! hangs up mid-line loses only that partial line. Replies wait for room in the connection's
//! queue, so a client flooding commands is slowed to its own reading speed; a line the world
//! sends by itself (a firing, chat, the bell) that finds [`OUTBOX_LINES`] lines already waiting
//! drops the connection instead, since it stopped reading. None of it touches another connection.

use std::rc::Rc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};

use super::either;
use super::protocol;
use super::world::{After, OUTBOX_LINES, Server};
use tickstep::schedules::ObjId;

/// The limits a connection lives under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_line: usize,
    pub(crate) login_timeout: Duration,
}

/// How long a closing connection may take to flush its last lines.
const FLUSH_GRACE: Duration = Duration::from_secs(1);

/// What one capped read produced.
#[derive(Debug, PartialEq)]
enum Read {
    Line(Vec<u8>),
    TooLong,
    Closed,
}

/// Serves one connection until it quits, misbehaves or the server stops.
pub(crate) async fn serve(server: Rc<Server>, socket: TcpStream, limits: Limits) {
    let _ = socket.set_nodelay(true);
    let (read, write) = socket.into_split();
    let (outbox, lines) = mpsc::channel(OUTBOX_LINES);
    let kicked = Rc::new(Notify::new());
    let mut writer = tokio::task::spawn_local(write_lines(BufWriter::new(write), lines));
    let mut session = Session {
        server,
        outbox,
        kicked: Rc::clone(&kicked),
        who: None,
        reader: BufReader::new(read),
        buf: Vec::new(),
        limits,
    };
    let kicked_out = async {
        kicked.notified().await;
    };
    let writer_gone = async {
        let _ = (&mut writer).await;
    };
    either(session.run(), either(kicked_out, writer_gone)).await;
    if let Some(who) = session.who {
        session.server.logout(who);
    }
    drop(session); // the last sender: the writer flushes what is queued and ends
    if tokio::time::timeout(FLUSH_GRACE, &mut writer)
        .await
        .is_err()
    {
        writer.abort(); // a client that does not read does not hold the task
    }
}

struct Session {
    server: Rc<Server>,
    outbox: mpsc::Sender<String>,
    kicked: Rc<Notify>,
    who: Option<ObjId>,
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    buf: Vec<u8>,
    limits: Limits,
}

impl Session {
    async fn run(&mut self) {
        if !self
            .send("hello: this is a tickstep world; type your name (then help)")
            .await
        {
            return;
        }
        let deadline = tokio::time::Instant::now() + self.limits.login_timeout;
        loop {
            let Ok(read) = tokio::time::timeout_at(deadline, self.read_line()).await else {
                let secs = self.limits.login_timeout.as_secs_f64();
                self.send(&format!("error: no name within {secs} s; goodbye"))
                    .await;
                return;
            };
            let Some(line) = self.accept(read).await else {
                return;
            };
            let Some(line) = line else { continue };
            match protocol::parse_name(&line) {
                Ok(name) => {
                    if self.login(&name).await {
                        break;
                    }
                }
                Err(error) => {
                    if !self.send(&format!("error: {error}")).await {
                        return;
                    }
                }
            }
        }
        let who = self.who.expect("logged in");
        loop {
            let read = self.read_line().await;
            let Some(line) = self.accept(read).await else {
                return;
            };
            let Some(line) = line else { continue };
            let replies = match protocol::parse(&line) {
                Ok(None) => continue,
                Ok(Some(request)) => self.server.execute(who, request),
                Err(error) => (vec![format!("error: {error}")], After::Continue),
            };
            for reply in &replies.0 {
                if !self.send(reply).await {
                    return;
                }
            }
            match replies.1 {
                After::Continue => {}
                After::Quit => return,
                After::Shutdown => {
                    self.server.handle.shutdown();
                    return;
                }
            }
        }
    }

    async fn login(&mut self, name: &str) -> bool {
        match self
            .server
            .login(name, self.outbox.clone(), Rc::clone(&self.kicked))
            .await
        {
            Ok((who, mail)) => {
                self.who = Some(who);
                let role = if self.server.is_wizard(who) {
                    "; you are the wizard"
                } else {
                    ""
                };
                let mut ok = self
                    .send(&format!("ok: welcome, {name} (#{}){role}", who.0))
                    .await;
                for line in mail {
                    ok &= self.send(&format!("[mail] {line}")).await;
                }
                ok
            }
            Err(error) => {
                // Not logged in: the client may try another name.
                self.send(&format!("error: {error}")).await;
                false
            }
        }
    }

    /// A line as text, `Some(None)` for a line that was refused with a reply, `None` to close.
    async fn accept(&mut self, read: std::io::Result<Read>) -> Option<Option<String>> {
        match read {
            Ok(Read::Line(bytes)) => match String::from_utf8(bytes) {
                Ok(line) => Some(Some(line)),
                Err(error) => {
                    let at = error.utf8_error().valid_up_to();
                    let byte = error.as_bytes()[at];
                    let reply = format!(
                        "error: the line is not UTF-8 text (byte 0x{byte:02x} at offset {at}); ignored"
                    );
                    self.send(&reply).await.then_some(None)
                }
            },
            Ok(Read::TooLong) => {
                let max = self.limits.max_line;
                self.send(&format!(
                    "error: line longer than {max} bytes; closing the connection"
                ))
                .await;
                None
            }
            Ok(Read::Closed) | Err(_) => None,
        }
    }

    async fn read_line(&mut self) -> std::io::Result<Read> {
        read_capped(&mut self.reader, &mut self.buf, self.limits.max_line).await
    }

    /// Queues a reply, waiting while the queue is full: a client that floods commands faster
    /// than it reads the replies slows itself down, and only itself. False once the writer has
    /// gone (the connection is closing).
    async fn send(&self, line: &str) -> bool {
        self.outbox.send(line.to_owned()).await.is_ok()
    }
}

/// Reads one line of at most `cap` bytes (without its `\n` and a `\r` before it). A longer line
/// is [`Read::TooLong`]; a connection closed mid-line loses the partial line ([`Read::Closed`]).
async fn read_capped(
    reader: &mut (impl AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Read> {
    buf.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Read::Closed);
        }
        let (chunk, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        if buf.len() + chunk.len() > cap {
            return Ok(Read::TooLong);
        }
        buf.extend_from_slice(chunk);
        let used = chunk.len() + usize::from(ends);
        reader.consume(used);
        if ends {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Read::Line(std::mem::take(buf)));
        }
    }
}

/// Writes queued lines, flushing whenever the queue runs dry.
async fn write_lines(mut out: impl AsyncWrite + Unpin, mut lines: mpsc::Receiver<String>) {
    while let Some(line) = lines.recv().await {
        if out.write_all(line.as_bytes()).await.is_err() || out.write_all(b"\n").await.is_err() {
            return;
        }
        if lines.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn reads(input: &[u8], cap: usize) -> Vec<Read> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let read = read_capped(&mut reader, &mut buf, cap).await.unwrap();
            let done = read != Read::Closed && !matches!(read, Read::Line(_));
            let closed = read == Read::Closed;
            out.push(read);
            if closed || done {
                return out;
            }
        }
    }

    #[test]
    fn lines_are_split_capped_and_a_partial_line_is_dropped() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(lines_are_split_capped());
    }

    async fn lines_are_split_capped() {
        assert_eq!(
            reads(b"who\r\nsay hi\npartial", 16).await,
            [
                Read::Line(b"who".to_vec()),
                Read::Line(b"say hi".to_vec()),
                Read::Closed
            ]
        );
        assert_eq!(reads(b"0123456789abcdefXYZ\n", 16).await, [Read::TooLong]);
        assert_eq!(
            reads(b"0123456789abcdef\n", 16).await,
            [Read::Line(b"0123456789abcdef".to_vec()), Read::Closed]
        );
    }
}
