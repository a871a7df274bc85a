//! One connection: read capped lines, log in, run commands, write replies and the world's lines
//! (docs/serve.md §2).
//!
//! Hostile input never reaches the world: a line over the cap closes the connection with a
//! reason; bytes that are not UTF-8 get an error naming the first bad byte and the line is
//! ignored; a client that never names itself is dropped after the login timeout; a client that
//! hangs up mid-line loses only that partial line. The next command is read only once the
//! connection's queue has [`REPLY_HEADROOM`] free, so a client flooding commands is slowed to its
//! own reading speed and the world's lines always find room; a line the world sends by itself (a
//! firing, chat, the bell) that finds [`OUTBOX_LINES`] lines already waiting drops the connection
//! instead, since it stopped reading, with one last line that says so written in place of the
//! lines that waited. None of it touches another connection.
//!
//! Login asks for a name, then a password: an existing name's is checked, a new name chooses
//! one (docs/serve.md §10). Failed logins are limited per address, new names too. Every refusal
//! is followed by the prompt the client answers next, so client and server never disagree on
//! whether a line is a name or a password, and no line typed at the login is shown back
//! (docs/serve.md §10.7–§10.12).

use std::net::IpAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use std::cell::RefCell;
use std::collections::VecDeque;

use tokio::io::BufWriter;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::either;
use super::gmcp;
use super::limits;
use super::line_protocol;
use super::metrics::Refusal;
use super::presence::{Kick, OUTBOX_LINES};
use super::server::{After, REPLY_HEADROOM, Server};
use super::telnet::{Event, Telnet};
use super::wire::{Chunk, Input, Output};
use tickstep::schedules::ObjId;

mod login;

// The login's words, for its state-machine test.
#[cfg(test)]
pub(super) use login::{GREETING, LOGIN_HELP, NAME_PROMPT};

/// The limits a connection lives under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_line: usize,
    pub(crate) login_timeout: Duration,
}

/// How many telnet messages (negotiation replies, GMCP answers) may wait for a connection.
const CONTROL_MESSAGES: usize = 64;
/// How long a closing connection is kept for its client to read its last lines (docs/serve.md
/// §11.8): a client that stopped reading and comes back within it finds why it was closed.
const CLOSE_GRACE: Duration = Duration::from_secs(10);
/// The most a closing connection reads (and drops) of what its client still sends, so that it
/// closes with nothing unread: a socket closed with unread input is reset, and a reset throws
/// away the last lines still on their way (docs/serve.md §11.8).
const CLOSE_DRAIN_BYTES: usize = 64 * 1024;

/// What one capped read produced.
#[derive(Debug, PartialEq)]
enum Read {
    Line(Vec<u8>),
    TooLong,
    Closed,
}

/// The client's next line, as the session reads it.
enum Line {
    Text(String),
    /// Not UTF-8: the first bad byte and its offset (shown only after login, docs/serve.md §2.4).
    NotUtf8 {
        byte: u8,
        at: usize,
    },
    /// Over the cap: the connection closes (docs/serve.md §2.4).
    TooLong,
    Closed,
}

/// Serves one TCP connection until it quits, misbehaves or the server stops.
pub(crate) async fn serve(server: Rc<Server>, socket: TcpStream, limits: Limits) {
    let _ = socket.set_nodelay(true);
    let Ok(peer) = socket.peer_addr() else {
        return; // gone before it was served
    };
    let (read, write) = socket.into_split();
    serve_wire(
        server,
        peer.ip(),
        Input::Bytes(Box::new(read)),
        BufWriter::new(write),
        limits,
    )
    .await;
}

/// Serves one connection of any transport (a TCP socket, or a WebSocket: docs/serve.md §9.3)
/// from the address `from`, the key of its per-address limits (docs/serve.md §11).
pub(crate) async fn serve_wire(
    server: Rc<Server>,
    from: IpAddr,
    input: Input,
    output: impl Output + 'static,
    limits: Limits,
) {
    let (outbox, lines) = mpsc::channel(OUTBOX_LINES);
    // Telnet's own messages: negotiation replies and GMCP answers (docs/serve.md §8.9).
    let (control, raw) = mpsc::channel(CONTROL_MESSAGES);
    let telnet = Rc::new(RefCell::new(Telnet::new(limits.max_line)));
    let kicked = Rc::new(Kick::default());
    let mut writer = tokio::task::spawn_local(write_lines(
        output,
        lines,
        raw,
        Rc::clone(&telnet),
        Rc::clone(&kicked),
    ));
    let mut session = Session {
        server,
        outbox,
        control,
        telnet,
        events: VecDeque::new(),
        kicked: Rc::clone(&kicked),
        who: None,
        entering: None,
        from,
        input,
        limits,
    };
    session.negotiate(Telnet::greeting).await;
    let kicked_out = async {
        kicked.session.notified().await;
    };
    let writer_gone = async {
        let _ = (&mut writer).await;
    };
    either(session.run(), either(kicked_out, writer_gone)).await;
    if let Some(who) = session.who.or(session.entering) {
        session.server.presence.logout(who);
    }
    // Dropping the session's senders drops the last ones: the writer writes what is queued (or
    // only the last word, for a client dropped for not reading) and ends. They are dropped by
    // name: a field a pattern leaves behind lives until the end of the scope, and the writer
    // would wait for it the whole of CLOSE_GRACE.
    let Session {
        mut input,
        outbox,
        control,
        ..
    } = session;
    drop((outbox, control));
    let closing = async {
        let _ = (&mut writer).await;
        let mut drained = 0;
        while drained < CLOSE_DRAIN_BYTES {
            match input.next().await {
                Ok(Some(chunk)) => drained += chunk.len(),
                _ => break,
            }
        }
    };
    if tokio::time::timeout(CLOSE_GRACE, closing).await.is_err() {
        writer.abort(); // a client that does not read does not hold the task
    }
}

struct Session {
    server: Rc<Server>,
    outbox: mpsc::Sender<String>,
    /// Telnet's own bytes (negotiation, GMCP), written before the next queued line.
    control: mpsc::Sender<Vec<u8>>,
    telnet: Rc<RefCell<Telnet>>,
    /// What the codec found and the session has not yet acted on.
    events: VecDeque<Event>,
    kicked: Rc<Kick>,
    who: Option<ObjId>,
    /// The player the world is letting in while its mailbox is read ([`Session::enter`]).
    entering: Option<ObjId>,
    /// The client's address: the key of its per-address limits (docs/serve.md §11).
    from: IpAddr,
    input: Input,
    limits: Limits,
}

impl Session {
    async fn run(&mut self) {
        let deadline = tokio::time::Instant::now() + self.limits.login_timeout;
        match tokio::time::timeout_at(deadline, self.log_in()).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(_) => {
                self.server.metrics.refused(Refusal::LoginTimeout);
                // A timeout in the password stage leaves the client's echo as it found it.
                self.hide_input(false);
                let secs = self.limits.login_timeout.as_secs_f64();
                self.send(format!("error: not logged in within {secs} s; goodbye"))
                    .await;
                return;
            }
        }
        let who = self.who.expect("logged in");
        let mut pace = limits::Limiter::new(limits::COMMANDS_PER_CONNECTION);
        loop {
            if !self.wait_for_room().await {
                return;
            }
            // A connection over its command rate waits for its next token (docs/serve.md §11.11).
            if let Err(wait) = pace.take((), Instant::now()) {
                tokio::time::sleep(wait).await;
                let _ = pace.take((), Instant::now());
            }
            let line = match self.next_line().await {
                Line::Text(line) => line,
                Line::NotUtf8 { byte, at } => {
                    let reply = format!(
                        "error: the line is not UTF-8 text (byte 0x{byte:02x} at offset {at}); ignored"
                    );
                    if !self.send(reply).await {
                        return;
                    }
                    continue;
                }
                Line::TooLong => return self.too_long().await,
                Line::Closed => return,
            };
            let replies = match line_protocol::parse(&line) {
                Ok(request) => self.server.execute(who, self.from, request).await,
                Err(error) => (vec![format!("error: {error}")], After::Continue),
            };
            for reply in replies.0 {
                if !self.send(reply).await {
                    return;
                }
            }
            match replies.1 {
                After::Continue => {}
                // A loop of refused creations is answered at a walk, not as fast as the server
                // can refuse (docs/serve.md §11.12).
                After::Refused => tokio::time::sleep(limits::REFUSED_CREATION_HOLD).await,
                After::Quit => return,
                After::Shutdown => {
                    self.server.handle.shutdown();
                    return;
                }
            }
        }
    }

    /// Says why a line over the cap closes the connection (docs/serve.md §2.4).
    async fn too_long(&self) {
        self.server.metrics.refused(Refusal::LineTooLong);
        let max = self.limits.max_line;
        self.send(format!(
            "error: line longer than {max} bytes; closing the connection"
        ))
        .await;
    }

    /// Waits until the queue has [`REPLY_HEADROOM`] free before the next command is read, so a
    /// client's own replies never crowd out the world's lines (docs/serve.md §11.7). tokio's
    /// queue can wait for one free slot, not for many (`reserve_many` would hold the slots it
    /// gathers, which the world's lines need meanwhile), so a client this far behind is looked
    /// at again every 2 ms until it has read enough. False once the writer has gone.
    async fn wait_for_room(&self) -> bool {
        while self.outbox.capacity() < REPLY_HEADROOM {
            if self.outbox.is_closed() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        true
    }

    async fn send_all(&self, lines: impl Iterator<Item = &str>) -> bool {
        for line in lines {
            if !self.send(line).await {
                return false;
            }
        }
        true
    }

    /// The client's next line, as text if it is UTF-8.
    async fn next_line(&mut self) -> Line {
        match self.read_line().await {
            Ok(Read::Line(bytes)) => match String::from_utf8(bytes) {
                Ok(line) => Line::Text(line),
                Err(error) => {
                    let at = error.utf8_error().valid_up_to();
                    Line::NotUtf8 {
                        byte: error.as_bytes()[at],
                        at,
                    }
                }
            },
            Ok(Read::TooLong) => Line::TooLong,
            Ok(Read::Closed) | Err(_) => Line::Closed,
        }
    }

    /// The next line from the client, with telnet stripped (docs/serve.md §8.2); acts on the
    /// GMCP messages met on the way.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            match self.events.pop_front() {
                Some(Event::Line(line)) => return Ok(Read::Line(line)),
                Some(Event::TooLong) => return Ok(Read::TooLong),
                Some(Event::Gmcp(package, _)) => self.gmcp(&package).await,
                None => {
                    if read_events(
                        &mut self.input,
                        &self.telnet,
                        &mut self.events,
                        &self.control,
                    )
                    .await?
                    {
                        return Ok(Read::Closed);
                    }
                }
            }
        }
    }

    /// Answers a GMCP message (docs/serve.md §8.6), waiting like a reply (docs/serve.md §8.9).
    async fn gmcp(&self, package: &str) {
        let (who, from, server) = (self.who, self.from, &self.server);
        self.negotiate(|t, out| {
            if let Some((package, data)) = gmcp::answer(t, server, who, from, package) {
                t.gmcp(package, &data, out);
            }
        })
        .await;
    }

    /// Runs `f` on the codec and queues what it wrote, if anything, waiting while the queue is
    /// full (docs/serve.md §8.9).
    async fn negotiate(&self, f: impl FnOnce(&mut Telnet, &mut Vec<u8>)) {
        let mut out = Vec::new();
        f(&mut self.telnet.borrow_mut(), &mut out);
        if !out.is_empty() {
            let _ = self.control.send(out).await;
        }
    }

    /// Turns the client's local echo off while a password is typed, and back on (docs/serve.md
    /// §8.5); nothing on a raw-line connection. The login's password stage calls it. It does
    /// not wait: a client with [`CONTROL_MESSAGES`] telnet messages unread is dropped (docs/serve.md §8.9).
    fn hide_input(&self, on: bool) {
        let mut out = Vec::new();
        self.telnet.borrow_mut().hide_input(on, &mut out);
        if !out.is_empty() && self.control.try_send(out).is_err() {
            self.kicked.session.notify_one();
        }
    }

    /// Queues a reply, waiting while the queue is full: a client that floods commands faster
    /// than it reads the replies slows itself down, and only itself. False once the writer has
    /// gone (the connection is closing). An owned line is moved onto the queue, not copied:
    /// `info`'s line of fields is a kilobyte or two.
    async fn send(&self, line: impl Into<String>) -> bool {
        self.outbox.send(line.into()).await.is_ok()
    }
}

/// Reads what the client sent and runs it through the codec, queueing its events and sending
/// its replies. True once the client has closed the connection (a partial line is lost).
async fn read_events(
    input: &mut Input,
    telnet: &RefCell<Telnet>,
    events: &mut VecDeque<Event>,
    control: &mpsc::Sender<Vec<u8>>,
) -> std::io::Result<bool> {
    let Some(chunk) = input.next().await? else {
        return Ok(true);
    };
    let (mut found, mut out) = (Vec::new(), Vec::new());
    match chunk {
        Chunk::Bytes(bytes) => telnet.borrow_mut().receive(&bytes, &mut found, &mut out),
        Chunk::Message(bytes) => telnet
            .borrow_mut()
            .receive_message(&bytes, &mut found, &mut out),
    }
    events.extend(found);
    if !out.is_empty() {
        let _ = control.send(out).await;
    }
    Ok(false)
}

/// What the writer takes next: telnet's own bytes first, then a line.
enum Next {
    Raw(Vec<u8>),
    Line(String),
    Done,
}

/// Writes queued lines through the codec (CRLF, IAC doubled, wrapped at the client's width) and
/// telnet's own bytes; whenever the queue runs dry it marks the end of a prompt (GA or EOR, for a
/// telnet client) and flushes. Given a last word by `kick`, it writes that next, drops what is
/// still queued, and ends (docs/serve.md §11.8).
async fn write_lines(
    mut out: impl Output,
    mut lines: mpsc::Receiver<String>,
    mut raw: mpsc::Receiver<Vec<u8>>,
    telnet: Rc<RefCell<Telnet>>,
    kick: Rc<Kick>,
) {
    let mut raw_open = true;
    let mut bytes = Vec::new();
    loop {
        let last_word = kick.last_word.borrow_mut().take();
        if let Some(line) = last_word {
            bytes.clear();
            telnet.borrow().encode_line(&line, &mut bytes);
            if out.write(&bytes).await.is_err() {
                return;
            }
            break;
        }
        let next = std::future::poll_fn(|cx| {
            if raw_open {
                match raw.poll_recv(cx) {
                    std::task::Poll::Ready(Some(b)) => return std::task::Poll::Ready(Next::Raw(b)),
                    std::task::Poll::Ready(None) => raw_open = false,
                    std::task::Poll::Pending => {}
                }
            }
            match lines.poll_recv(cx) {
                std::task::Poll::Ready(Some(line)) => std::task::Poll::Ready(Next::Line(line)),
                std::task::Poll::Ready(None) => std::task::Poll::Ready(Next::Done),
                std::task::Poll::Pending => std::task::Poll::Pending,
            }
        })
        .await;
        bytes.clear();
        match next {
            Next::Raw(raw_bytes) => bytes = raw_bytes,
            Next::Line(line) => {
                let telnet = telnet.borrow();
                telnet.encode_line(&line, &mut bytes);
                if lines.is_empty() {
                    telnet.end_prompt(&mut bytes);
                }
            }
            Next::Done => break,
        }
        if out.write(&bytes).await.is_err() {
            return;
        }
        if lines.is_empty() && raw.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
    out.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on(f: impl Future<Output = ()>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&runtime, f);
    }

    #[test]
    fn a_partial_line_is_lost_when_the_client_hangs_up() {
        block_on(async {
            let telnet = RefCell::new(Telnet::new(16));
            let (control, _raw) = mpsc::channel(4);
            let mut events = VecDeque::new();
            let mut input = Input::Bytes(Box::new(&b"who\r\nsay hi\npartial"[..]));
            assert!(
                !read_events(&mut input, &telnet, &mut events, &control)
                    .await
                    .unwrap()
            );
            assert!(
                read_events(&mut input, &telnet, &mut events, &control)
                    .await
                    .unwrap()
            );
            assert_eq!(
                events,
                [
                    Event::Line(b"who".to_vec()),
                    Event::Line(b"say hi".to_vec())
                ]
            );
        });
    }

    #[test]
    fn the_writer_sends_negotiation_first_and_lines_in_crlf() {
        block_on(async {
            let telnet = Rc::new(RefCell::new(Telnet::new(16)));
            let (lines_tx, lines) = mpsc::channel(4);
            let (raw_tx, raw) = mpsc::channel(4);
            lines_tx.send("hello".to_owned()).await.unwrap();
            raw_tx.send(vec![255, 251, 201]).await.unwrap();
            drop((lines_tx, raw_tx));
            let mut written = Vec::new();
            write_lines(&mut written, lines, raw, telnet, Rc::default()).await;
            assert_eq!(written, b"\xff\xfb\xc9hello\r\n");
        });
    }

    #[test]
    fn a_last_word_is_written_in_place_of_the_lines_that_waited() {
        // docs/serve.md §11.8
        block_on(async {
            let telnet = Rc::new(RefCell::new(Telnet::new(64)));
            let (lines_tx, lines) = mpsc::channel(4);
            let (raw_tx, raw) = mpsc::channel(4);
            for stale in ["[#1] one", "[#1] two", "[#1] three"] {
                lines_tx.send(stale.to_owned()).await.unwrap();
            }
            let kick = Rc::new(Kick::default());
            *kick.last_word.borrow_mut() = Some("error: you stopped reading".to_owned());
            let mut written = Vec::new();
            write_lines(&mut written, lines, raw, telnet, kick).await;
            assert_eq!(written, b"error: you stopped reading\r\n");
            drop((lines_tx, raw_tx));
        });
    }
}
