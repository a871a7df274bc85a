//! The world (the real server on a temporary store) and the clients of a case, over each
//! transport's framing.

use super::*;

#[derive(Parser)]
pub(super) struct Cli {
    #[command(flatten)]
    pub(super) serve: ServeArgs,
}

/// The real server on a temporary store, its names from before accounts, and the runtime it
/// needs kept alive.
pub(super) struct World {
    pub(super) server: Rc<Server>,
    pub(super) old: Vec<String>,
    pub(super) _driver: tickstep::TokioDriver,
    pub(super) _dir: tempfile::TempDir,
}

impl World {
    pub(super) async fn start(old: u32) -> World {
        accounts::cheap_hashes_here();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("world.db");
        // Names from before accounts: registered with no password (docs/serve.md §10.3).
        let old: Vec<String> = (0..old).map(|n| format!("old{n}")).collect();
        {
            let (registry, _) = Registry::open(&db).await.unwrap();
            for name in &old {
                registry.id_for(name).await.unwrap();
            }
            registry.close().await.unwrap();
        }
        let db = db.to_str().unwrap().to_owned();
        let cli = Cli::try_parse_from([
            "serve",
            "--db",
            &db,
            "--wizard",
            "merlin",
            "--names-per-address",
            &NAMES_BURST.to_string(),
        ])
        .unwrap();
        let (driver, server, _) = start(&cli.serve, "merlin", Some(WIZARD_PASSWORD.into()))
            .await
            .unwrap();
        World {
            server,
            old,
            _driver: driver,
            _dir: dir,
        }
    }

    /// The (failed logins, new names) the address has taken, read from the server's limits.
    pub(super) fn taken(&self, from: IpAddr) -> (u32, u32) {
        let mut limits = self.server.fair_use.borrow_mut();
        let now = Instant::now();
        let key = address_key(from);
        let failed = f64::from(FAILED_BURST) - limits.failed_logins.tokens(key, now);
        let made = f64::from(NAMES_BURST) - limits.names_per_address.tokens(key, now);
        (failed.round() as u32, made.round() as u32)
    }
}

pub(super) enum Io {
    /// The client writes `up` and reads `down`.
    Bytes {
        up: DuplexStream,
        down: DuplexStream,
    },
    Ws(Box<WebSocketStream<DuplexStream>>),
}

/// One connection's client side.
pub(super) struct Client {
    pub(super) transport: Transport,
    pub(super) io: Io,
    /// The session serving it, to wait for its end.
    pub(super) session: JoinHandle<()>,
    /// Bytes received and not yet cut into lines (raw, telnet).
    pub(super) pending: Vec<u8>,
    pub(super) telnet: TelnetState,
    /// Lines received and not yet taken (`None`: the end), each with whether the client's echo
    /// was off when it came.
    pub(super) lines: VecDeque<(Option<String>, bool)>,
    /// Whether the client's echo was off when the last line taken came.
    pub(super) echo_hidden_at_line: bool,
    /// Everything the server sent: the property is checked on it.
    pub(super) received: Vec<u8>,
    /// GMCP messages not yet looked at.
    pub(super) gmcp: Vec<String>,
    /// The server asked this client not to echo (telnet's ECHO).
    pub(super) echo_hidden: bool,
    /// The last thing written ended in a bare CR.
    pub(super) after_cr: bool,
}

/// Where the client's telnet parser is.
#[derive(Clone, Copy, Default)]
pub(super) enum TelnetState {
    #[default]
    Data,
    Iac,
    Verb(u8),
    Sb,
    SbIac,
}

pub(super) fn address(case: u32) -> IpAddr {
    let [a, b, c, d] = case.to_be_bytes();
    if case.is_multiple_of(2) {
        IpAddr::V4(Ipv4Addr::new(10, b, c, d))
    } else {
        // Keyed by its /64 (docs/serve.md §7.23): a /64 of its own.
        IpAddr::V6(Ipv6Addr::new(
            0xfd00,
            u16::from_be_bytes([a, b]),
            u16::from_be_bytes([c, d]),
            7,
            0,
            0,
            0,
            1,
        ))
    }
}

pub(super) fn to_axum(message: Message) -> Option<AxumMessage> {
    Some(match message {
        Message::Text(text) => AxumMessage::text(text.as_str()),
        Message::Binary(data) => AxumMessage::binary(data),
        Message::Ping(data) => AxumMessage::Ping(data),
        Message::Pong(data) => AxumMessage::Pong(data),
        Message::Close(_) => AxumMessage::Close(None),
        Message::Frame(_) => return None,
    })
}

pub(super) fn to_tungstenite(message: AxumMessage) -> Message {
    match message {
        AxumMessage::Text(text) => Message::text(text.as_str()),
        AxumMessage::Binary(data) => Message::binary(data),
        AxumMessage::Ping(data) => Message::Ping(data),
        AxumMessage::Pong(data) => Message::Pong(data),
        AxumMessage::Close(_) => Message::Close(None),
    }
}

impl Client {
    pub(super) async fn connect(
        world: &World,
        transport: Transport,
        from: IpAddr,
        limits: Limits,
    ) -> Client {
        let server = Rc::clone(&world.server);
        let (io, session) = match transport {
            Transport::Raw | Transport::Telnet => {
                // A pipe each way, as a socket's two directions: the server's output ending is
                // the end of the client's input, whatever the server still reads.
                let (up, up_theirs) = tokio::io::duplex(64 * 1024);
                let (down, down_theirs) = tokio::io::duplex(64 * 1024);
                let input = Input::Bytes(Box::new(up_theirs));
                let session =
                    tokio::task::spawn_local(serve_wire(server, from, input, down_theirs, limits));
                (Io::Bytes { up, down }, session)
            }
            Transport::Ws(framing) => {
                let (ours, theirs) = tokio::io::duplex(64 * 1024);
                let theirs = WebSocketStream::from_raw_socket(theirs, Role::Server, None).await;
                let ours = WebSocketStream::from_raw_socket(ours, Role::Client, None).await;
                let (sink, stream) = theirs.split();
                let stream = stream.filter_map(|m| std::future::ready(m.map(to_axum).transpose()));
                let sink = sink
                    .with(|m| std::future::ready(Ok::<_, tungstenite::Error>(to_tungstenite(m))));
                let session = tokio::task::spawn_local(http::serve_frames(
                    server,
                    (stream, sink),
                    framing,
                    from,
                    limits,
                ));
                (Io::Ws(Box::new(ours)), session)
            }
        };
        Client {
            transport,
            io,
            session,
            pending: Vec::new(),
            telnet: TelnetState::Data,
            lines: VecDeque::new(),
            echo_hidden_at_line: false,
            received: Vec::new(),
            gmcp: Vec::new(),
            echo_hidden: false,
            after_cr: false,
        }
    }

    /// Types `text` ended by `end`, cut as the step says; then `more` (a batched line) in the
    /// same write or frame.
    pub(super) async fn type_line(
        &mut self,
        text: &[u8],
        end: End,
        step: &Step,
        more: Option<(&[u8], End)>,
    ) {
        let ws = self.transport.is_ws();
        let mut bytes = Vec::new();
        if ws && self.after_cr && step.lf_first {
            bytes.push(b'\n'); // the LF of the CR that ended the last frame
        }
        let lines = [Some((text, end)), more];
        let count = lines.iter().flatten().count();
        for (n, (text, end)) in lines.into_iter().flatten().enumerate() {
            let last = n + 1 == count;
            let end = match end {
                // A frame's end ends only its last line, and only a line with something in the
                // frame: `name\r` then an empty frame end would be no line at all.
                End::Frame if ws && last && (!text.is_empty() || bytes.is_empty()) => End::Frame,
                End::Frame if ws => End::CrLf,
                End::Frame => End::Lf,
                end => end,
            };
            // An empty line right after a bare CR must not be an LF: that LF would be the CR's
            // own (docs/serve.md §8.2).
            let end = match end {
                End::Lf if text.is_empty() && self.after_cr => End::CrLf,
                end => end,
            };
            if self.transport == Transport::Telnet {
                crate::serve::telnet::escape_iac(text, &mut bytes);
            } else {
                bytes.extend_from_slice(text);
            }
            bytes.extend_from_slice(end.bytes(self.transport));
            self.after_cr = bytes.last() == Some(&b'\r');
        }
        self.write(&bytes, step.cuts).await;
    }

    /// Writes bytes: a stream's in up to three pieces (the server may read any of them alone),
    /// a WebSocket's as one frame.
    pub(super) async fn write(&mut self, bytes: &[u8], (a, b): (u8, u8)) {
        match &mut self.io {
            Io::Bytes { up: stream, .. } => {
                let len = bytes.len();
                let mut cuts = [usize::from(a) % (len + 1), usize::from(b) % (len + 1)];
                cuts.sort_unstable();
                for piece in [
                    &bytes[..cuts[0]],
                    &bytes[cuts[0]..cuts[1]],
                    &bytes[cuts[1]..],
                ] {
                    if !piece.is_empty() {
                        let _ = stream.write_all(piece).await;
                        tokio::task::yield_now().await;
                    }
                }
            }
            Io::Ws(ws) => {
                let frame = match self.transport {
                    Transport::Ws(Framing::Plain) => Message::text(
                        String::from_utf8(bytes.to_vec()).expect("TEXT frames are UTF-8"),
                    ),
                    _ => Message::binary(bytes.to_vec()),
                };
                let _ = ws.send(frame).await;
            }
        }
    }

    /// The next line the server sent, or `None` once it closed the connection.
    pub(super) async fn next(&mut self) -> Result<Option<String>, String> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            if let Some((line, echo_hidden)) = self.lines.pop_front() {
                self.echo_hidden_at_line = echo_hidden;
                return Ok(line);
            }
            let got = tokio::time::timeout_at(deadline, self.receive()).await;
            got.map_err(|_| format!("no line from the server within {PATIENCE:?}"))??;
        }
    }

    /// Reads what the server sends next into lines and GMCP messages.
    pub(super) async fn receive(&mut self) -> Result<(), String> {
        match &mut self.io {
            Io::Bytes { down: stream, .. } => {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    self.lines.push_back((None, self.echo_hidden));
                    return Ok(());
                }
                self.received.extend_from_slice(&chunk[..n]);
                let mut answers = Vec::new();
                for &byte in &chunk[..n] {
                    self.telnet_byte(byte, &mut answers)?;
                }
                if self.transport == Transport::Telnet && !answers.is_empty() {
                    let Io::Bytes { up: stream, .. } = &mut self.io else {
                        unreachable!()
                    };
                    let _ = stream.write_all(&answers).await;
                }
            }
            Io::Ws(ws) => match ws.next().await {
                None | Some(Err(_) | Ok(Message::Close(_))) => {
                    self.lines.push_back((None, self.echo_hidden));
                }
                Some(Ok(Message::Binary(data))) => {
                    self.received.extend_from_slice(&data);
                    let text = String::from_utf8(data.to_vec())
                        .map_err(|_| "a BINARY frame that is not UTF-8".to_owned())?;
                    let line = text
                        .strip_suffix("\r\n")
                        .ok_or_else(|| format!("a line frame without its CRLF: {text:?}"))?;
                    if line.contains(['\r', '\n']) {
                        return Err(format!("a frame of more than one line: {text:?}"));
                    }
                    self.lines
                        .push_back((Some(line.to_owned()), self.echo_hidden));
                }
                Some(Ok(Message::Text(text))) => {
                    self.received.extend_from_slice(text.as_bytes());
                    if self.transport == Transport::Ws(Framing::Gmcp) {
                        self.gmcp.push(text.as_str().to_owned());
                    } else if text.contains(['\r', '\n']) {
                        return Err(format!("a TEXT frame of more than a line: {text:?}"));
                    } else {
                        self.lines
                            .push_back((Some(text.as_str().to_owned()), self.echo_hidden));
                    }
                }
                Some(Ok(_)) => {}
            },
        }
        Ok(())
    }

    /// One byte of a stream: telnet taken out (and answered, for a telnet client), lines cut at
    /// the server's CRLF.
    pub(super) fn telnet_byte(&mut self, byte: u8, answers: &mut Vec<u8>) -> Result<(), String> {
        const IAC: u8 = 255;
        self.telnet = match (self.telnet, byte) {
            (TelnetState::Data, IAC) => TelnetState::Iac,
            (TelnetState::Data, b'\n') => {
                let line = std::mem::take(&mut self.pending);
                let line = line
                    .strip_suffix(b"\r")
                    .ok_or_else(|| format!("a line not ended by CRLF: {line:?}"))?;
                if line.contains(&b'\r') {
                    return Err(format!("a bare CR inside a line: {line:?}"));
                }
                let line = String::from_utf8(line.to_vec())
                    .map_err(|_| format!("a line that is not UTF-8: {line:?}"))?;
                self.lines.push_back((Some(line), self.echo_hidden));
                TelnetState::Data
            }
            (TelnetState::Data, byte) => {
                self.pending.push(byte);
                TelnetState::Data
            }
            (TelnetState::Iac, IAC) => {
                self.pending.push(IAC);
                TelnetState::Data
            }
            (TelnetState::Iac, 251..=254) => TelnetState::Verb(byte),
            (TelnetState::Iac, 250) => {
                self.gmcp.push(String::new());
                TelnetState::Sb
            }
            (TelnetState::Iac, _) => TelnetState::Data, // GA, EOR
            (TelnetState::Verb(verb), option) => {
                self.negotiated(verb, option, answers);
                TelnetState::Data
            }
            (TelnetState::Sb, IAC) => TelnetState::SbIac,
            (TelnetState::Sb, byte) => {
                if let Some(message) = self.gmcp.last_mut() {
                    message.push(char::from(byte));
                }
                TelnetState::Sb
            }
            (TelnetState::SbIac, 240) => {
                // Only GMCP (201) is kept; its text is read as Latin-1, enough to find a name.
                match self.gmcp.last().and_then(|m| m.strip_prefix('\u{c9}')) {
                    Some(message) => {
                        let message = message.to_owned();
                        *self.gmcp.last_mut().unwrap() = message;
                    }
                    None => {
                        self.gmcp.pop();
                    }
                }
                TelnetState::Data
            }
            (TelnetState::SbIac, _) => TelnetState::Sb,
        };
        Ok(())
    }

    /// A telnet client's answers: GMCP and EOR on, ECHO as the server says, nothing else.
    pub(super) fn negotiated(&mut self, verb: u8, option: u8, answers: &mut Vec<u8>) {
        const WILL: u8 = 251;
        const WONT: u8 = 252;
        const DO: u8 = 253;
        const DONT: u8 = 254;
        const ECHO: u8 = 1;
        match (verb, option) {
            (WILL, ECHO) => {
                self.echo_hidden = true;
                answers.extend_from_slice(&[255, DO, ECHO]);
            }
            (WONT, ECHO) => {
                self.echo_hidden = false;
                answers.extend_from_slice(&[255, DONT, ECHO]);
            }
            (WILL, 201 | 25) => answers.extend_from_slice(&[255, DO, option]),
            (WILL, _) => answers.extend_from_slice(&[255, DONT, option]),
            (DO, _) => answers.extend_from_slice(&[255, WONT, option]),
            _ => {}
        }
    }

    /// Reads the server's next lines against `expect`, checking on the way what each transport
    /// promises besides the words: a telnet client's echo is off exactly while a password is
    /// asked for (docs/serve.md §8.5) — unless the client `typed_ahead`, when the answers to
    /// the server's ECHO requests come after lines it already sent (docs/serve.md §7.38) — and a
    /// GMCP client learns its name at the welcome (docs/serve.md §8.6).
    pub(super) async fn expect(
        &mut self,
        expect: &[Expect],
        typed_ahead: bool,
    ) -> Result<(), String> {
        let mut seen = Vec::new();
        for wanted in expect {
            let got = self.next().await?;
            if !wanted.matches(got.as_deref()) {
                return Err(format!("expected {wanted:?}, got {got:?} (after {seen:?})"));
            }
            if let (Expect::Welcome(name), true) = (wanted, self.transport.speaks_gmcp()) {
                let told = self.gmcp.iter().any(|m| {
                    m.starts_with("Char.Name ") && m.contains(&format!("\"name\":\"{name}\""))
                });
                if !told {
                    return Err(format!("no Char.Name for {name}: {:?}", self.gmcp));
                }
            }
            if let Expect::Welcome(_) = wanted {
                self.gmcp.clear();
            }
            if self.transport == Transport::Telnet
                && !typed_ahead
                && let Some(line) = &got
            {
                let hidden = line.starts_with("password: ");
                let shown = ["name: ", "hello: ", "ok: "]
                    .iter()
                    .any(|p| line.starts_with(p));
                let echo_hidden = self.echo_hidden_at_line;
                if (hidden && !echo_hidden) || (shown && echo_hidden) {
                    return Err(format!(
                        "the client's echo is {} at {line:?}",
                        if echo_hidden { "off" } else { "on" }
                    ));
                }
            }
            seen.push(got);
        }
        Ok(())
    }

    /// Hangs up, waits for the session to end, and checks everything the server sent.
    pub(super) async fn close(mut self, secrets: &[Vec<u8>]) -> Result<(), String> {
        match self.io {
            Io::Bytes { up, down } => drop((up, down)),
            Io::Ws(ws) => drop(ws),
        }
        tokio::time::timeout(PATIENCE, &mut self.session)
            .await
            .map_err(|_| format!("the session did not end within {PATIENCE:?}"))?
            .map_err(|e| format!("the session failed: {e}"))?;
        no_secret_in(&self.received, secrets)
    }
}

/// Whether `line` is the welcome of `name` (docs/serve.md §10.1).
pub(super) fn welcomes(line: &str, name: &str) -> bool {
    let Some(rest) = line.strip_prefix(&format!("ok: welcome, {name} (#")) else {
        return false;
    };
    let role = if name == "merlin" {
        "; you are a wizard"
    } else {
        ""
    };
    rest.strip_suffix(&format!("){role}"))
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// How often the cases met each outcome of the rules, to show they reach them all.
#[derive(Default)]
pub(super) struct Tally(
    pub(super) std::cell::RefCell<std::collections::BTreeMap<&'static str, u64>>,
);

impl Tally {
    /// The outcomes a line shows, by its words.
    const OUTCOMES: [(&'static str, &'static str); 16] = [
        ("ok: welcome", "logged in"),
        ("error: wrong password", "wrong password, asked again"),
        ("error: too many failed logins", "locked out"),
        ("error: too many new names", "new names used up"),
        ("taken meanwhile", "taken meanwhile"),
        ("is already connected", "already connected"),
        ("ok: no password typed", "no password: back to the name"),
        ("error: a password is UTF-8", "password not UTF-8"),
        ("error: that line is not UTF-8", "name not UTF-8"),
        ("error: a password has at least", "password too short"),
        (
            "error: a password has no control",
            "password with a control character",
        ),
        ("has no password yet", "old name claimed"),
        ("error: line longer", "line over the cap"),
        ("error: that is a command", "command word as a name"),
        ("error: a name is", "not a name"),
        ("ok: bye", "quit"),
    ];

    pub(super) fn add(&self, what: &'static str) {
        *self.0.borrow_mut().entry(what).or_default() += 1;
    }

    pub(super) fn lines(&self, expect: &[Expect]) {
        for e in expect {
            let (Expect::Line(text) | Expect::Prefix(text)) = e else {
                if let Expect::Welcome(_) = e {
                    self.add("logged in");
                }
                continue;
            };
            if let Some((_, what)) = Self::OUTCOMES.iter().find(|(w, _)| text.contains(w)) {
                self.add(what);
            }
        }
    }
}

/// The property: nothing the server sent holds a password, or even the mark every password has.
pub(super) fn no_secret_in(received: &[u8], secrets: &[Vec<u8>]) -> Result<(), String> {
    let holds = |needle: &[u8]| received.windows(needle.len()).any(|w| w == needle);
    if holds(b"Zq") {
        return Err(format!(
            "the server sent a password's mark back: {}",
            String::from_utf8_lossy(received)
        ));
    }
    match secrets.iter().find(|s| !s.is_empty() && holds(s)) {
        Some(secret) => Err(format!("the server sent back the password {secret:?}")),
        None => Ok(()),
    }
}
