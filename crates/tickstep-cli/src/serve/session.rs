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
//! instead, since it stopped reading, after one last line that says so. None of it touches
//! another connection.
//!
//! Login asks for a name, then a password: an existing name's is checked, a new name chooses
//! one (docs/serve.md §8). Failed logins are limited per address, new names too.

use std::net::IpAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};

use super::accounts;
use super::either;
use super::limits::{self, address_key, wait_text};
use super::protocol::{self, Request};
use super::registry::Account;
use super::world::{After, OUTBOX_LINES, REPLY_HEADROOM, Server};
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
    let Ok(peer) = socket.peer_addr() else {
        return; // gone before it was served
    };
    let (read, write) = socket.into_split();
    // One slot more than the world may fill: the line that says why a connection is closed.
    let (outbox, lines) = mpsc::channel(OUTBOX_LINES + 1);
    let kicked = Rc::new(Notify::new());
    let mut writer = tokio::task::spawn_local(write_lines(BufWriter::new(write), lines));
    let mut session = Session {
        server,
        outbox,
        kicked: Rc::clone(&kicked),
        who: None,
        from: peer.ip(),
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
    /// The client's address: the key of its per-address limits (docs/serve.md §9).
    from: IpAddr,
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    buf: Vec<u8>,
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
            // A connection over its command rate waits for its next token (docs/serve.md §9.11).
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
                After::Quit => return,
                After::Shutdown => {
                    self.server.handle.shutdown();
                    return;
                }
            }
        }
    }

    /// Logs `name` in with its password, or makes the account when the name is new
    /// (docs/serve.md §8.1–§8.4).
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

    /// Sets the password of a name that had none (docs/serve.md §8.3).
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

    /// Asks the client not to show what is typed (a telnet client's echo), or to show it
    /// again. A plain TCP client has no such switch, so this does nothing here; the telnet
    /// layer negotiates ECHO (docs/serve.md §8.1).
    #[allow(
        clippy::unused_self,
        reason = "the telnet layer's version negotiates on this connection"
    )]
    fn hide_input(&self, on: bool) {
        let _ = on;
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
    /// client's own replies never crowd out the world's lines (docs/serve.md §9.7). tokio's
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
