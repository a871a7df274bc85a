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
//! one (docs/serve.md §10). Failed logins are limited per address, new names too.

use std::net::IpAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use std::cell::RefCell;
use std::collections::VecDeque;

use tokio::io::BufWriter;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::accounts;
use super::either;
use super::gmcp;
use super::limits::{self, address_key, wait_text};
use super::protocol::{self, Request};
use super::registry::Account;
use super::telnet::{Event, Telnet};
use super::wire::{Input, Output};
use super::world::{After, Kick, OUTBOX_LINES, REPLY_HEADROOM, Server};
use tickstep::schedules::ObjId;

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
    if let Some(who) = session.who {
        session.server.logout(who);
    }
    // Dropping the session drops the last sender: the writer writes what is queued (or only
    // the last word, for a client dropped for not reading) and ends.
    let Session { mut input, .. } = session;
    let closing = async {
        let _ = (&mut writer).await;
        let mut drained = 0;
        while drained < CLOSE_DRAIN_BYTES {
            match input.next().await {
                Ok(Some(bytes)) => drained += bytes.len(),
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
    /// The client's address: the key of its per-address limits (docs/serve.md §11).
    from: IpAddr,
    input: Input,
    limits: Limits,
}

impl Session {
    async fn run(&mut self) {
        if !self
            .send("hello: this is a tickstep world; type your name (a new name makes an account), or help")
            .await
        {
            return;
        }
        let deadline = tokio::time::Instant::now() + self.limits.login_timeout;
        let login = async {
            loop {
                let Some(line) = self.read_text().await else {
                    return false;
                };
                let word = line.trim();
                if word.eq_ignore_ascii_case("help") {
                    if !self.send_all(LOGIN_HELP.lines()).await {
                        return false;
                    }
                    continue;
                }
                if word.eq_ignore_ascii_case("quit") {
                    self.send("ok: bye").await;
                    return false;
                }
                let reply = match protocol::parse_name(&line) {
                    Ok(name) => match self.login(&name).await {
                        Login::In => return true,
                        Login::Closed => return false,
                        Login::Refused(reply) => reply,
                    },
                    Err(error) => format!("error: {error}"),
                };
                if !self.send(&reply).await {
                    return false;
                }
            }
        };
        match tokio::time::timeout_at(deadline, login).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(_) => {
                let secs = self.limits.login_timeout.as_secs_f64();
                self.send(&format!("error: not logged in within {secs} s; goodbye"))
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
            let read = self.read_line().await;
            let Some(line) = self.accept(read).await else {
                return;
            };
            let Some(line) = line else { continue };
            let replies = match protocol::parse(&line) {
                Ok(Request::Wizard(name)) => (
                    vec![self.server.make_wizard(who, &name).await],
                    After::Continue,
                ),
                Ok(request) => self.server.execute(who, self.from, request),
                Err(error) => (vec![format!("error: {error}")], After::Continue),
            };
            for reply in &replies.0 {
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

    /// Logs `name` in with its password, or makes the account when the name is new
    /// (docs/serve.md §10.1–§10.4).
    async fn login(&mut self, name: &str) -> Login {
        let account = match self.server.account(name).await {
            Ok(account) => account,
            Err(error) => return Login::Refused(format!("error: {error}")),
        };
        let checked = match account {
            Some(account) => self.existing(name, account).await,
            None => self.create(name).await,
        };
        let who = match checked {
            Ok(who) => who,
            Err(login) => return login,
        };
        self.enter(who, name).await
    }

    /// Checks the password of an existing name (or has it chosen, for a name from before
    /// accounts): its id, or how the login ended.
    async fn existing(&mut self, name: &str, account: Account) -> Result<ObjId, Login> {
        let address = address_key(self.from);
        if account.id == self.server.principals_root() && account.hash.is_none() {
            return Err(Login::Refused(format!(
                "error: {name} is the wizard's account; its password is given to the server at \
                 its start (TICKSTEP_WIZARD_PASSWORD), not chosen here"
            )));
        }
        let failed = self
            .server
            .limits
            .borrow_mut()
            .failed_logins
            .check(address, Instant::now());
        if let Err(wait) = failed {
            return Err(Login::Refused(too_many_failures(wait)));
        }
        let prompt = match account.hash {
            Some(_) => format!("password: type {name}'s password"),
            None => format!("password: {name} has no password yet; choose one"),
        };
        let Some(password) = self.read_password(&prompt).await else {
            return Err(Login::Closed);
        };
        match account.hash {
            Some(hash) => {
                if !accounts::verify(password, hash).await {
                    let now = Instant::now();
                    let mut limits = self.server.limits.borrow_mut();
                    let _ = limits.failed_logins.take(address, now);
                    let left = limits.failed_logins.check(address, now);
                    drop(limits);
                    return Err(Login::Refused(match left {
                        Ok(()) => format!("error: wrong password for {name}"),
                        Err(wait) => too_many_failures(wait),
                    }));
                }
            }
            None => {
                if let Err(refusal) = self.choose(account.id, &password).await {
                    return Err(Login::Refused(refusal));
                }
            }
        }
        Ok(account.id)
    }

    /// Makes an account for a new name, its password chosen now: its id, or how the login
    /// ended.
    async fn create(&mut self, name: &str) -> Result<ObjId, Login> {
        let address = address_key(self.from);
        let names = self
            .server
            .limits
            .borrow_mut()
            .names_per_address
            .check(address, Instant::now());
        if let Err(wait) = names {
            let rate = self.server.limits.borrow().names_per_address.rate();
            let rate = rate.expect("only a limiter with a rate refuses");
            return Err(Login::Refused(format!(
                "error: too many new names from your address: {} at once, then one \
                     every {} min; try again in {}",
                rate.burst,
                (1.0 / rate.per_second / 60.0).round(),
                wait_text(wait)
            )));
        }
        let prompt = format!(
            "password: {name} is a new name; choose a password (at least {} characters)",
            accounts::MIN_PASSWORD_CHARS
        );
        let Some(password) = self.read_password(&prompt).await else {
            return Err(Login::Closed);
        };
        if let Err(rule) = accounts::acceptable(&password) {
            return Err(Login::Refused(format!(
                "error: {rule}; {name} was not created"
            )));
        }
        let hash = accounts::hash(password)
            .await
            .map_err(|error| Login::Refused(format!("error: {error}")))?;
        match self.server.register(name, &hash).await {
            Ok(Some(id)) => {
                let now = Instant::now();
                let _ = self
                    .server
                    .limits
                    .borrow_mut()
                    .names_per_address
                    .take(address, now);
                Ok(id)
            }
            Ok(None) => Err(Login::Refused(format!(
                "error: {name} was taken meanwhile; choose another name"
            ))),
            Err(error) => Err(Login::Refused(format!("error: {error}"))),
        }
    }

    /// Lets a player whose password was checked in: the welcome, then their mail.
    async fn enter(&mut self, who: ObjId, name: &str) -> Login {
        match self
            .server
            .enter(who, name, self.outbox.clone(), Rc::clone(&self.kicked))
            .await
        {
            Ok(mail) => {
                self.who = Some(who);
                let role = if self.server.is_wizard(who) {
                    "; you are a wizard"
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
                if ok { Login::In } else { Login::Closed }
            }
            // Not logged in: the client may try another name.
            Err(error) => Login::Refused(format!("error: {error}")),
        }
    }

    /// Sets the password of a name that had none (docs/serve.md §10.3).
    async fn choose(&self, who: ObjId, password: &str) -> Result<(), String> {
        accounts::acceptable(password).map_err(|rule| format!("error: {rule}"))?;
        let hash = accounts::hash(password.to_owned())
            .await
            .map_err(|e| format!("error: {e}"))?;
        self.server
            .set_hash(who, &hash)
            .await
            .map_err(|e| format!("error: {e}"))
    }

    /// Asks for a password with the client's echo off meanwhile; `None` once closed.
    async fn read_password(&mut self, prompt: &str) -> Option<String> {
        if !self.send(prompt).await {
            return None;
        }
        self.hide_input(true);
        let password = self.read_text().await;
        self.hide_input(false);
        password
    }

    /// The next line as text, refused lines answered and skipped; `None` once closed.
    async fn read_text(&mut self) -> Option<String> {
        loop {
            let read = self.read_line().await;
            if let Some(line) = self.accept(read).await? {
                return Some(line);
            }
        }
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
    /// §8.5); nothing on a raw-line connection. The login's password prompt calls it. It does
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

/// What a login attempt came to.
enum Login {
    In,
    /// Not logged in; the reply says why, and the client may try again.
    Refused(String),
    Closed,
}

/// What `help` shows before login.
const LOGIN_HELP: &str = "\
help: type your name (1-24 letters, digits, '_' or '-'), then its password.
help: a name nobody has yet becomes yours: choose its password (at least 6 characters).
help: after login, 'help' lists the commands; 'quit' leaves.";

fn too_many_failures(wait: Duration) -> String {
    let rate = limits::FAILED_LOGINS_PER_ADDRESS;
    format!(
        "error: too many failed logins from your address: {} at once, then one every {} s; \
         try again in {}",
        rate.burst,
        (1.0 / rate.per_second).round(),
        wait_text(wait)
    )
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
