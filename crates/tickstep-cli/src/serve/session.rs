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

use std::cell::RefCell;
use std::collections::VecDeque;

use tokio::io::BufWriter;
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};

use super::either;
use super::gmcp;
use super::protocol;
use super::telnet::{Event, Telnet};
use super::wire::{Input, Output};
use super::world::{After, OUTBOX_LINES, Server};
use tickstep::schedules::ObjId;

/// The limits a connection lives under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_line: usize,
    pub(crate) login_timeout: Duration,
}

/// How many telnet messages (negotiation replies, GMCP answers) may wait for a connection.
const CONTROL_MESSAGES: usize = 64;
/// How long a closing connection may take to flush its last lines.
const FLUSH_GRACE: Duration = Duration::from_secs(1);

/// What one capped read produced.
#[derive(Debug, PartialEq)]
enum Read {
    Line(Vec<u8>),
    TooLong,
    Closed,
}

/// Serves one TCP connection until it quits, misbehaves or the server stops.
pub(crate) async fn serve(server: Rc<Server>, socket: TcpStream, limits: Limits) {
    let _ = socket.set_nodelay(true);
    let (read, write) = socket.into_split();
    serve_wire(
        server,
        Input::Bytes(Box::new(read)),
        BufWriter::new(write),
        limits,
    )
    .await;
}

/// Serves one connection of any transport (a TCP socket, or a WebSocket: docs/serve.md §9.3).
pub(crate) async fn serve_wire(
    server: Rc<Server>,
    input: Input,
    output: impl Output + 'static,
    limits: Limits,
) {
    let (outbox, lines) = mpsc::channel(OUTBOX_LINES);
    // Telnet's own messages: negotiation replies and GMCP answers (docs/serve.md §8.9).
    let (control, raw) = mpsc::channel(CONTROL_MESSAGES);
    let telnet = Rc::new(RefCell::new(Telnet::new(limits.max_line)));
    let kicked = Rc::new(Notify::new());
    let mut writer = tokio::task::spawn_local(write_lines(output, lines, raw, Rc::clone(&telnet)));
    let mut session = Session {
        server,
        outbox,
        control,
        telnet,
        events: VecDeque::new(),
        kicked: Rc::clone(&kicked),
        who: None,
        input,
        limits,
    };
    session.negotiate(Telnet::greeting).await;
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
    /// Telnet's own bytes (negotiation, GMCP), written before the next queued line.
    control: mpsc::Sender<Vec<u8>>,
    telnet: Rc<RefCell<Telnet>>,
    /// What the codec found and the session has not yet acted on.
    events: VecDeque<Event>,
    kicked: Rc<Notify>,
    who: Option<ObjId>,
    input: Input,
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
                let wizard = self.server.is_wizard(who);
                let (package, data) = gmcp::char_name(name, who, wizard);
                self.negotiate(|t, out| t.gmcp(package, &data, out)).await;
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
        let (who, server) = (self.who, &self.server);
        self.negotiate(|t, out| {
            if let Some((package, data)) = gmcp::answer(t, server, who, package) {
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
    /// §8.5); nothing on a raw-line connection. The login's password prompt calls it. It does
    /// not wait: a client with [`CONTROL_MESSAGES`] telnet messages unread is dropped (docs/serve.md §8.9).
    #[allow(
        dead_code,
        reason = "the password prompt of issue 24's accounts (another branch) calls it"
    )]
    pub(crate) fn hide_input(&self, on: bool) {
        let mut out = Vec::new();
        self.telnet.borrow_mut().hide_input(on, &mut out);
        if !out.is_empty() && self.control.try_send(out).is_err() {
            self.kicked.notify_one();
        }
    }

    /// Queues a reply, waiting while the queue is full: a client that floods commands faster
    /// than it reads the replies slows itself down, and only itself. False once the writer has
    /// gone (the connection is closing).
    async fn send(&self, line: &str) -> bool {
        self.outbox.send(line.to_owned()).await.is_ok()
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
    telnet.borrow_mut().receive(&chunk, &mut found, &mut out);
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
/// telnet client) and flushes.
async fn write_lines(
    mut out: impl Output,
    mut lines: mpsc::Receiver<String>,
    mut raw: mpsc::Receiver<Vec<u8>>,
    telnet: Rc<RefCell<Telnet>>,
) {
    let mut raw_open = true;
    let mut bytes = Vec::new();
    loop {
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
            write_lines(&mut written, lines, raw, telnet).await;
            assert_eq!(written, b"\xff\xfb\xc9hello\r\n");
        });
    }
}
