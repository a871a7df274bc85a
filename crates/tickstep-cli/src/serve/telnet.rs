//! Telnet (RFC 854/855) as a sans-IO codec: bytes in → lines and events, lines and events →
//! bytes out (docs/serve.md §8).
//!
//! The model: every byte of a connection goes through [`Telnet::receive`], which strips every
//! command and negotiation, ends lines at CR, LF, CRLF or CR NUL, caps them, and answers
//! negotiations by appending to an output buffer the caller writes to the socket. Each option
//! keeps one RFC 1143 state per side ("Q method" without the queue bit), so a reply is sent only
//! when a state changes and two agents never loop; an option the server does not support is
//! refused once and then ignored, and an option that changes state more than
//! [`MAX_CHANGES`] times is refused for good, so a DO/DONT flood costs at most a few replies.
//! A sub-negotiation keeps at most [`MAX_SUBNEGOTIATION`] bytes; the rest of a longer (or
//! endless) one is read and dropped. A client that never sends IAC stays a raw-line (`nc`)
//! client: it sees the server's offers at connect once, and nothing else of telnet.
//!
//! Costs: one branch per byte received, a 256-entry option table (512 bytes) per connection,
//! and at most one line and one sub-negotiation buffered at a time.

use std::fmt::Write as _;

use super::colour;

/// Interpret As Command.
const IAC: u8 = 255;
const DONT: u8 = 254;
const DO: u8 = 253;
const WONT: u8 = 252;
const WILL: u8 = 251;
const SB: u8 = 250;
const GA: u8 = 249;
const SE: u8 = 240;
/// End of record (RFC 885), sent after a prompt once the client agreed to option EOR.
const EOR_CMD: u8 = 239;

/// Echo (RFC 857): the server's WILL turns the client's local echo off.
pub(crate) const OPT_ECHO: u8 = 1;
/// Terminal type (RFC 1091), with MTTS's third answer.
pub(crate) const OPT_TTYPE: u8 = 24;
/// End of record (RFC 885).
pub(crate) const OPT_EOR: u8 = 25;
/// Negotiate about window size (RFC 1073).
pub(crate) const OPT_NAWS: u8 = 31;
/// Character set (RFC 2066).
pub(crate) const OPT_CHARSET: u8 = 42;
/// Generic MUD communication protocol.
pub(crate) const OPT_GMCP: u8 = 201;

const TTYPE_IS: u8 = 0;
const TTYPE_SEND: u8 = 1;
const CHARSET_REQUEST: u8 = 1;
const CHARSET_ACCEPTED: u8 = 2;
const CHARSET_REJECTED: u8 = 3;

/// The most bytes of one sub-negotiation kept; the rest of a longer one is dropped.
pub(crate) const MAX_SUBNEGOTIATION: usize = 8 * 1024;
/// How many times one option may change state before it is refused for good.
pub(crate) const MAX_CHANGES: u8 = 8;
/// How many terminal types are asked for (the third answer is MTTS's bit field).
const MAX_TTYPES: usize = 4;
/// How many of the client's CHARSET requests are answered; later ones are ignored.
const MAX_CHARSET_ANSWERS: usize = 4;
/// The most bytes of replies any input can draw from the codec (docs/serve.md §8.3): on each
/// side of each option one refusal and [`MAX_CHANGES`] + 1 changes of state (3 bytes each), a
/// CHARSET request (12 bytes) on each agreement to CHARSET, the terminal-type questions and the
/// CHARSET answers.
#[allow(
    dead_code,
    reason = "the bound the codec's tests and its fuzz target check"
)]
pub(crate) const MAX_REPLY_BYTES: usize = 256 * 2 * (MAX_CHANGES as usize + 2) * 3
    + 2 * (MAX_CHANGES as usize + 1) * 12
    + MAX_TTYPES * 6
    + MAX_CHARSET_ANSWERS * 12;

/// Narrower windows than this are not wrapped for (a client that reports 0 or nonsense).
const MIN_WRAP: usize = 20;

/// What the last data byte was to the line being read (docs/serve.md §8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Text of the line.
    Text,
    /// A CR, which ended the line: an LF or NUL next is part of that line end.
    Cr,
    /// The end of a line (an LF, or the LF or NUL of a CR).
    End,
}

/// One side of one option (RFC 1143 without the queue bit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Q {
    #[default]
    No,
    Yes,
    WantNo,
    WantYes,
}

/// Both sides of one option: `us` is the server's (WILL/WONT), `him` the client's (DO/DONT).
#[derive(Clone, Copy, Debug, Default)]
struct Option2 {
    us: Q,
    him: Q,
    changes: u8,
    refused: bool,
}

/// Where the parser is inside a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Data,
    Iac,
    /// After IAC WILL/WONT/DO/DONT: the option byte comes next.
    Verb(u8),
    /// Inside IAC SB: the option byte comes next.
    SbOption,
    Sb,
    SbIac,
}

/// What the codec found in the bytes received.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// One line, without its line end; not yet checked as UTF-8.
    Line(Vec<u8>),
    /// A line grew over the cap: the connection should close (docs/serve.md §2.4).
    TooLong,
    /// A GMCP message from the client: the package (e.g. `Core.Hello`) and its JSON text.
    Gmcp(String, String),
}

/// What the client said about itself, recorded per connection (docs/serve.md §8.4).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Peer {
    /// The window width from NAWS, if the client sent one.
    pub(crate) width: Option<u16>,
    /// The window height from NAWS.
    pub(crate) height: Option<u16>,
    /// The terminal types the client named, in order (TTYPE; MTTS's `MTTS n` is among them).
    pub(crate) terminal_types: Vec<String>,
    /// The client agreed to UTF-8 over CHARSET.
    pub(crate) utf8: bool,
    /// The client's GMCP `Core.Hello`: its name and version, as it sent them.
    pub(crate) client: Option<String>,
}

impl Peer {
    /// MTTS's bit field, from a terminal type of the form `MTTS 137`.
    pub(crate) fn mtts(&self) -> Option<u32> {
        self.terminal_types
            .iter()
            .find_map(|t| t.strip_prefix("MTTS ")?.trim().parse().ok())
    }
}

/// The telnet state of one connection.
pub(crate) struct Telnet {
    state: State,
    options: [Option2; 256],
    line: Vec<u8>,
    /// The line grew over the cap; the rest of it is dropped.
    overflowed: bool,
    max_line: usize,
    /// What the last data byte was to the line: text, a CR, or the end of a line.
    at: At,
    sb: Vec<u8>,
    /// The option of the sub-negotiation being read; `None` once it outgrew its cap and the
    /// rest of it is dropped.
    sb_option: Option<u8>,
    /// The client has sent at least one IAC: it is a telnet client.
    heard_iac: bool,
    /// The session changed its mind about ECHO while a request was unanswered: what it asked
    /// for last (input hidden or not), asked once the client answers (RFC 1143's queue bit, for
    /// this one option: docs/serve.md §7.38).
    hide_queued: Option<bool>,
    ttype_asks: usize,
    charset_answers: usize,
    peer: Peer,
}

impl Telnet {
    /// A codec for a connection whose lines are capped at `max_line` bytes.
    pub(crate) fn new(max_line: usize) -> Telnet {
        Telnet {
            state: State::Data,
            options: [Option2::default(); 256],
            line: Vec::new(),
            overflowed: false,
            max_line,
            at: At::End,
            sb: Vec::new(),
            sb_option: None,
            heard_iac: false,
            hide_queued: None,
            ttype_asks: 0,
            charset_answers: 0,
            peer: Peer::default(),
        }
    }

    /// The offers a server makes at connect (docs/serve.md §8.1): it will speak GMCP and EOR,
    /// and asks for the window size, the terminal type and the character set.
    pub(crate) fn greeting(&mut self, out: &mut Vec<u8>) {
        for option in [OPT_GMCP, OPT_EOR] {
            self.options[usize::from(option)].us = Q::WantYes;
            out.extend_from_slice(&[IAC, WILL, option]);
        }
        for option in [OPT_NAWS, OPT_TTYPE, OPT_CHARSET] {
            self.options[usize::from(option)].him = Q::WantYes;
            out.extend_from_slice(&[IAC, DO, option]);
        }
    }

    /// Whether the client has spoken telnet (sent any IAC).
    pub(crate) fn is_telnet(&self) -> bool {
        self.heard_iac
    }

    /// What the client told about itself.
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The width to wrap output at, if the client reported a usable one.
    pub(crate) fn wrap_width(&self) -> Option<usize> {
        self.peer.width.map(usize::from).filter(|&w| w >= MIN_WRAP)
    }

    /// Whether the client agreed to GMCP.
    pub(crate) fn gmcp_on(&self) -> bool {
        self.options[usize::from(OPT_GMCP)].us == Q::Yes
    }

    /// Whether the client agreed to EOR after prompts (else GA is sent).
    pub(crate) fn eor(&self) -> bool {
        self.options[usize::from(OPT_EOR)].us == Q::Yes
    }

    /// Reads `bytes`, appending what they held to `events` and any replies to `out`.
    pub(crate) fn receive(&mut self, bytes: &[u8], events: &mut Vec<Event>, out: &mut Vec<u8>) {
        for &byte in bytes {
            self.step(byte, events, out);
        }
    }

    /// Reads one message of a transport that carries lines in messages (a WebSocket frame's
    /// text, docs/serve.md §9.2) as the bytes of a stream ([`Telnet::receive`]), then ends the
    /// line the message leaves open: so `name`, `name\n` and `name\r\n` are one line each, a
    /// message of several lines is those lines, an empty message is one empty line, and a CR that
    /// ends one message with an LF starting the next is one line end, as in a stream.
    pub(crate) fn receive_message(
        &mut self,
        bytes: &[u8],
        events: &mut Vec<Event>,
        out: &mut Vec<u8>,
    ) {
        self.receive(bytes, events, out);
        if bytes.is_empty() || self.at == At::Text {
            // Not after a CR either: an LF starting the next message ends a line of its own.
            self.at = At::End;
            self.end_line(events);
        }
    }

    fn step(&mut self, byte: u8, events: &mut Vec<Event>, out: &mut Vec<u8>) {
        match self.state {
            State::Data if byte == IAC => {
                self.heard_iac = true;
                self.state = State::Iac;
            }
            State::Data => self.data(byte, events),
            State::Iac => {
                self.state = State::Data;
                match byte {
                    IAC => self.data(IAC, events),
                    WILL | WONT | DO | DONT => self.state = State::Verb(byte),
                    SB => self.state = State::SbOption,
                    // A stray SE, GA, NOP and the rest: nothing to do.
                    _ => {}
                }
            }
            State::Verb(verb) => {
                self.state = State::Data;
                self.negotiate(verb, byte, out);
            }
            State::SbOption => {
                self.sb.clear();
                self.sb_option = Some(byte);
                self.state = State::Sb;
            }
            State::Sb if byte == IAC => self.state = State::SbIac,
            State::Sb => self.sb_byte(byte),
            State::SbIac => match byte {
                IAC => {
                    self.sb_byte(IAC);
                    self.state = State::Sb;
                }
                SE => {
                    self.state = State::Data;
                    if let Some(option) = self.sb_option {
                        let body = std::mem::take(&mut self.sb);
                        self.subnegotiation(option, &body, events, out);
                        self.sb = body;
                    }
                    self.sb.clear();
                }
                // IAC and a command inside SB: the sub-negotiation was malformed; drop it and
                // read the command as one (RFC 855 leaves this open).
                _ => {
                    self.sb.clear();
                    self.state = State::Iac;
                    self.step(byte, events, out);
                }
            },
        }
    }

    fn sb_byte(&mut self, byte: u8) {
        if self.sb.len() < MAX_SUBNEGOTIATION {
            self.sb.push(byte);
        } else {
            self.sb_option = None;
        }
    }

    /// One byte of a line: CR, LF, CRLF and CR NUL each end one line (docs/serve.md §8.2).
    fn data(&mut self, byte: u8, events: &mut Vec<Event>) {
        match (byte, self.at) {
            // The rest of the CR's line end.
            (b'\n' | 0, At::Cr) => self.at = At::End,
            (b'\r' | b'\n', _) => {
                self.at = if byte == b'\r' { At::Cr } else { At::End };
                self.end_line(events);
            }
            _ => {
                self.at = At::Text;
                self.line_byte(byte, events);
            }
        }
    }

    /// Ends the line being read: it is an event, unless it outgrew the cap (already told).
    fn end_line(&mut self, events: &mut Vec<Event>) {
        if std::mem::replace(&mut self.overflowed, false) {
            self.line.clear();
        } else {
            events.push(Event::Line(std::mem::take(&mut self.line)));
        }
    }

    /// A byte of the line's text, under the cap.
    fn line_byte(&mut self, byte: u8, events: &mut Vec<Event>) {
        if self.overflowed {
            return;
        }
        if self.line.len() >= self.max_line {
            self.overflowed = true;
            self.line.clear();
            events.push(Event::TooLong);
            return;
        }
        self.line.push(byte);
    }

    fn supported_by_us(option: u8) -> bool {
        matches!(option, OPT_GMCP | OPT_EOR | OPT_ECHO | OPT_CHARSET)
    }

    fn supported_by_him(option: u8) -> bool {
        matches!(option, OPT_NAWS | OPT_TTYPE | OPT_CHARSET)
    }

    /// RFC 1143's rules for WILL/WONT/DO/DONT, with one refusal per unsupported option and a
    /// cap on state changes.
    fn negotiate(&mut self, verb: u8, option: u8, out: &mut Vec<u8>) {
        let entry = &mut self.options[usize::from(option)];
        let ours = matches!(verb, DO | DONT);
        let (side, supported) = if ours {
            (
                entry.us,
                Self::supported_by_us(option) && option != OPT_ECHO,
            )
        } else {
            (entry.him, Self::supported_by_him(option))
        };
        let positive = matches!(verb, WILL | DO);
        let (accept, refuse) = if ours { (WILL, WONT) } else { (DO, DONT) };
        let (next, reply) = match (side, positive) {
            (Q::No, true) if supported && !entry.refused => (Q::Yes, Some(accept)),
            (Q::No, true) if entry.refused => (Q::No, None),
            (Q::No, true) => {
                entry.refused = true;
                (Q::No, Some(refuse))
            }
            (Q::Yes, true) | (Q::No, false) => (side, None),
            (Q::Yes, false) => (Q::No, Some(refuse)),
            (Q::WantYes, true) => (Q::Yes, None),
            (Q::WantYes | Q::WantNo, false) | (Q::WantNo, true) => (Q::No, None),
        };
        if next != side {
            entry.changes = entry.changes.saturating_add(1);
            if entry.changes > MAX_CHANGES {
                // A flood: settle on No for good, answering the refusal this once.
                entry.refused = true;
                if side == Q::Yes || next == Q::Yes {
                    out.extend_from_slice(&[IAC, refuse, option]);
                }
                if ours {
                    entry.us = Q::No;
                } else {
                    entry.him = Q::No;
                }
                return;
            }
        }
        if ours {
            entry.us = next;
        } else {
            entry.him = next;
        }
        if let Some(reply) = reply {
            out.extend_from_slice(&[IAC, reply, option]);
        }
        if next == Q::Yes && side != Q::Yes {
            self.enabled(option, ours, out);
        }
        if ours
            && option == OPT_ECHO
            && matches!(next, Q::Yes | Q::No)
            && let Some(hide) = self.hide_queued.take()
        {
            self.hide_input(hide, out);
        }
    }

    /// What follows an option's agreement: asking for the terminal type, offering UTF-8.
    fn enabled(&mut self, option: u8, ours: bool, out: &mut Vec<u8>) {
        match (option, ours) {
            (OPT_TTYPE, false) => self.ask_ttype(out),
            (OPT_CHARSET, _) => {
                out.extend_from_slice(&[IAC, SB, OPT_CHARSET, CHARSET_REQUEST]);
                out.extend_from_slice(b";UTF-8");
                out.extend_from_slice(&[IAC, SE]);
            }
            _ => {}
        }
    }

    fn ask_ttype(&mut self, out: &mut Vec<u8>) {
        if self.ttype_asks < MAX_TTYPES {
            self.ttype_asks += 1;
            out.extend_from_slice(&[IAC, SB, OPT_TTYPE, TTYPE_SEND, IAC, SE]);
        }
    }

    fn subnegotiation(
        &mut self,
        option: u8,
        body: &[u8],
        events: &mut Vec<Event>,
        out: &mut Vec<u8>,
    ) {
        match (option, body) {
            (OPT_NAWS, [w1, w0, h1, h0]) => {
                self.peer.width = Some(u16::from_be_bytes([*w1, *w0]));
                self.peer.height = Some(u16::from_be_bytes([*h1, *h0]));
            }
            (OPT_TTYPE, [TTYPE_IS, name @ ..]) => {
                let name = String::from_utf8_lossy(name).into_owned();
                // A client cycles through its names and repeats the last one at the end.
                if self.peer.terminal_types.last() != Some(&name) {
                    self.peer.terminal_types.push(name);
                    self.ask_ttype(out);
                }
            }
            (OPT_CHARSET, [CHARSET_ACCEPTED, name @ ..]) => {
                self.peer.utf8 = name.eq_ignore_ascii_case(b"UTF-8");
            }
            (OPT_CHARSET, [CHARSET_REJECTED, ..]) => self.peer.utf8 = false,
            (OPT_CHARSET, [CHARSET_REQUEST, list @ ..])
                if self.charset_answers < MAX_CHARSET_ANSWERS =>
            {
                self.charset_answers += 1;
                let offered = list
                    .get(1..)
                    .unwrap_or_default()
                    .split(|&b| Some(&b) == list.first())
                    .any(|name| name.eq_ignore_ascii_case(b"UTF-8"));
                self.peer.utf8 = offered;
                out.extend_from_slice(&[IAC, SB, OPT_CHARSET]);
                if offered {
                    out.push(CHARSET_ACCEPTED);
                    out.extend_from_slice(b"UTF-8");
                } else {
                    out.push(CHARSET_REJECTED);
                }
                out.extend_from_slice(&[IAC, SE]);
            }
            (OPT_GMCP, message) if self.gmcp_on() => {
                let text = String::from_utf8_lossy(message);
                let (package, data) = text.split_once(' ').unwrap_or((&text, ""));
                if package == "Core.Hello" {
                    self.peer.client = Some(data.trim().to_owned());
                }
                events.push(Event::Gmcp(package.to_owned(), data.trim().to_owned()));
            }
            _ => {}
        }
    }

    /// Turns the client's local echo off (`on`) or back on, for a password (docs/serve.md
    /// §8.5). Does nothing for a raw-line client.
    pub(crate) fn hide_input(&mut self, on: bool, out: &mut Vec<u8>) {
        if !self.heard_iac {
            return;
        }
        let entry = &mut self.options[usize::from(OPT_ECHO)];
        match (on, entry.us) {
            (true, Q::No) => {
                entry.us = Q::WantYes;
                out.extend_from_slice(&[IAC, WILL, OPT_ECHO]);
            }
            (false, Q::Yes) => {
                entry.us = Q::WantNo;
                out.extend_from_slice(&[IAC, WONT, OPT_ECHO]);
            }
            // The other way is asked and not yet answered (a client that typed ahead): asking
            // again now would make the two sides loop, so it is asked once the answer comes.
            (true, Q::WantNo) | (false, Q::WantYes) => self.hide_queued = Some(on),
            _ => self.hide_queued = None,
        }
    }

    /// Appends one line of output: wrapped at the client's width, its marker painted for a client
    /// that shows colour (docs/serve.md §8.10), IAC doubled, ended by CRLF.
    pub(crate) fn encode_line(&self, line: &str, out: &mut Vec<u8>) {
        let (width, ansi) = if self.heard_iac {
            (
                self.wrap_width(),
                colour::shows_ansi(self.peer.mtts(), &self.peer.terminal_types),
            )
        } else {
            (None, false)
        };
        let mut painted = String::new();
        for (n, piece) in wrap(line, width).into_iter().enumerate() {
            let piece = if ansi && n == 0 {
                painted.clear();
                colour::paint(piece, &mut painted);
                painted.as_str()
            } else {
                piece
            };
            escape_iac(piece.as_bytes(), out);
            out.extend_from_slice(b"\r\n");
        }
    }

    /// Appends the end-of-prompt mark (EOR if agreed, else GA) for a telnet client.
    pub(crate) fn end_prompt(&self, out: &mut Vec<u8>) {
        if self.heard_iac {
            out.extend_from_slice(&[IAC, if self.eor() { EOR_CMD } else { GA }]);
        }
    }

    /// Appends a GMCP message, if the client agreed to GMCP (docs/serve.md §8.6).
    pub(crate) fn gmcp(&self, package: &str, data: &str, out: &mut Vec<u8>) {
        if !self.gmcp_on() {
            return;
        }
        out.extend_from_slice(&[IAC, SB, OPT_GMCP]);
        let mut text = String::with_capacity(package.len() + data.len() + 1);
        let _ = write!(text, "{package} {data}");
        escape_iac(text.as_bytes(), out);
        out.extend_from_slice(&[IAC, SE]);
    }
}

/// Appends `bytes` with every IAC (255) doubled, as telnet data.
pub(crate) fn escape_iac(bytes: &[u8], out: &mut Vec<u8>) {
    // A run of bytes at a time (almost every line is one run): every reply and firing line
    // passes here, and a push per byte was a twentieth of the serving thread's time.
    out.reserve(bytes.len());
    for run in bytes.split_inclusive(|&b| b == IAC) {
        out.extend_from_slice(run);
        if run.last() == Some(&IAC) {
            out.push(IAC);
        }
    }
}

/// Splits `line` into pieces of at most `width` characters, at spaces where it can.
fn wrap(line: &str, width: Option<usize>) -> Vec<&str> {
    let Some(width) = width else {
        return vec![line];
    };
    let mut pieces = Vec::new();
    let mut rest = line;
    while rest.chars().count() > width {
        let cut = rest
            .char_indices()
            .nth(width)
            .map_or(rest.len(), |(i, _)| i);
        let split = rest[..cut].rfind(' ').filter(|&i| i > 0).unwrap_or(cut);
        pieces.push(&rest[..split]);
        rest = rest[split..].strip_prefix(' ').unwrap_or(&rest[split..]);
    }
    pieces.push(rest);
    pieces
}

#[cfg(test)]
mod tests;
