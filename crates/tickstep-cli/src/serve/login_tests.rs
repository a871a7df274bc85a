//! The login as a state machine, run against a model of docs/serve.md §10 over the real
//! session and the real framing of each transport, with the property that no password typed
//! ever comes back (docs/serve.md §10.11).
//!
//! A case is a client's acts on up to two connections from one address: names new, old (from
//! before accounts), taken or the wizard's; right, wrong, weak, empty and not-UTF-8 passwords;
//! lockouts; help, quit, a line over the cap; hanging up before, in the middle of or right after
//! a line; a login that times out. The model says what the server answers to each act, line by
//! line, and the case fails on the first line it did not predict. Every password line (and every
//! line that is not UTF-8) contains `Zq`, which no other line the client types and no server text
//! has, so the property is that no byte the server sent (lines, GMCP, frames) contains `Zq`.
//!
//! The server is the real one (`start`: store, registry, limits), each transport's session over
//! an in-memory pipe: raw lines and telnet as bytes, WebSocket as tungstenite frames (BINARY
//! lines with `gmcp.mudstandards.org`, TEXT lines without). Hashes are made at argon2's minimum
//! cost on the test's thread (`accounts::cheap_hashes_here`), so a login costs microseconds and
//! production's hashing is untouched. Each case has an address of its own, so its limits start
//! fresh. A client that hangs up right after a password cannot see what the server made of it:
//! the test waits for that session to end and reads the outcome (the account, the limits' tokens)
//! from the server, asserting it is one of the two the rules allow.
//!
//! Cases per transport: `TICKSTEP_LOGIN_CASES` (default 300). The 100,000 of issue 31:
//! `TICKSTEP_LOGIN_CASES=100000 cargo test -p tickstep-cli --bin tickstep login_tests` (about half
//! an hour for the four on two cores, in the debug build).

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use axum::extract::ws::Message as AxumMessage;
use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{self, Message, protocol::Role};

use super::session::{GREETING, LOGIN_HELP, Limits, NAME_PROMPT, serve_wire};
use crate::serve::limits::address_key;
use crate::serve::registry::Registry;
use crate::serve::server::Server;
use crate::serve::wire::Input;
use crate::serve::ws::{self, Framing};
use crate::serve::{ServeArgs, accounts, start};

/// The wizard's password; it has the mark, as every password here does.
const WIZARD_PASSWORD: &str = "merlin-Zq-wizard";
/// The longest line a connection takes (docs/serve.md §2.4).
const MAX_LINE: usize = 256;
/// New names an address may make at once (`--names-per-address`, docs/serve.md §11.4).
const NAMES_BURST: u32 = 2;
/// Failed logins an address may have at once (docs/serve.md §10.6).
const FAILED_BURST: u32 = 5;
/// The longest the test waits for one line, or for a session to end: the server runs on the
/// test's own thread, and hashes at the minimum cost, so a line that has not come by then will
/// not.
const PATIENCE: Duration = Duration::from_secs(10);
/// A case runs in milliseconds; the model of the limits assumes it stays far under the 12 s in
/// which an address regains a failed login (docs/serve.md §10.6).
const CASE_BOUND: Duration = Duration::from_secs(10);
/// The login timeout of a connection that stalls (docs/serve.md §2.3).
const STALL_TIMEOUT: Duration = Duration::from_millis(5);
/// One case in this many has a name from before accounts in its pool.
const OLD_NAME_EVERY: u32 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Raw,
    Telnet,
    Ws(Framing),
}

impl Transport {
    fn speaks_gmcp(self) -> bool {
        matches!(self, Transport::Telnet | Transport::Ws(Framing::Gmcp))
    }

    /// TEXT frames carry only UTF-8.
    fn carries_bytes(self) -> bool {
        self != Transport::Ws(Framing::Plain)
    }

    fn is_ws(self) -> bool {
        matches!(self, Transport::Ws(_))
    }
}

// ---------------------------------------------------------------------------------------------
// What a case is made of.

/// What ends a line the client types.
#[derive(Clone, Copy, Debug)]
enum End {
    /// None: a frame's end ends it (a WebSocket); a stream gets LF.
    Frame,
    Lf,
    CrLf,
    Cr,
    CrNul,
}

impl End {
    fn bytes(self, transport: Transport) -> &'static [u8] {
        match self {
            End::Frame if transport.is_ws() => b"",
            End::Frame | End::Lf => b"\n",
            End::CrLf => b"\r\n",
            End::Cr => b"\r",
            End::CrNul => b"\r\0",
        }
    }
}

/// One act of the client, read by the stage its connection is at.
#[derive(Clone, Debug)]
enum Act {
    /// A name of the case's pool; the right (or a chosen, good) password; `who` once in.
    Good(u8),
    /// A line that is not a name; a wrong (or, choosing, a weak) password.
    Bad,
    /// Bytes that are not UTF-8 (a TEXT frame cannot carry them: then `Bad`).
    NotUtf8,
    Empty,
    Help,
    Quit,
    /// Hangs up, with part of a line typed first when `partial`.
    HangUp {
        partial: bool,
    },
    /// Types `Good` (or `Bad`), then hangs up without reading.
    TypeAndHangUp {
        good: bool,
    },
    TooLong,
    /// On a closed connection: connects with a short login timeout, types a name and part of a
    /// password, and waits.
    Stall,
}

/// The texts an act may type, drawn for every step.
#[derive(Clone, Debug)]
struct Texts {
    good: String,
    wrong: String,
    weak: String,
    bad_name: (String, bool),
    not_utf8: Vec<u8>,
    partial: String,
}

#[derive(Clone, Debug)]
struct Step {
    conn: usize,
    act: Act,
    texts: Texts,
    end: End,
    /// Where a stream's write is cut (each taken modulo the length).
    cuts: (u8, u8),
    /// A WebSocket frame after one that ended in a bare CR starts with that CR's LF.
    lf_first: bool,
    /// Typed in one write (one frame) with the next step's line.
    batch: bool,
}

/// A password: the mark `Zq` among name characters (so some are names too: the old bug read
/// one as a name), or among any printable text.
fn password() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[a-z0-9_-]{0,6}", "[a-z0-9_-]{4,10}").prop_map(|(a, b)| format!("{a}Zq{b}")),
        ("[ -~]{0,6}", "[ -~é中😀]{4,10}").prop_map(|(a, b)| format!("{a}Zq{b}")),
    ]
}

fn texts() -> impl Strategy<Value = Texts> {
    let weak = prop_oneof![
        "Zq[a-z0-9é]{0,3}",
        "Zq[a-z]{4,8}[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]",
        "Zq[a-z]{2,4}\\x1b\\[2J[a-z]{0,3}",
    ];
    let bad_name = prop_oneof![
        ("[a-y0-9]{1,8} [a-y0-9!?.]{1,8}").prop_map(|s| (s, false)),
        "[a-y0-9_-]{25,30}".prop_map(|s| (s, false)),
        "[a-y]{1,4}[!?.@][a-y]{0,4}".prop_map(|s| (s, false)),
        prop::sample::select(vec!["who", "say", "schedules", "stop", "ring", "Remind"])
            .prop_map(|s| (s.to_owned(), true)),
    ];
    let not_utf8 = (
        "[a-z ]{0,4}",
        prop::collection::vec(0x80u8..=0xfe, 0..3),
        "[a-z]{0,4}",
    )
        .prop_map(|(a, mut bad, b)| {
            bad.push(0xfe); // never UTF-8
            [a.as_bytes(), b"Zq", &bad, b.as_bytes()].concat()
        });
    (
        password(),
        password(),
        weak,
        bad_name,
        not_utf8,
        "Zq[a-z]{0,5}",
    )
        .prop_map(|(good, wrong, weak, bad_name, not_utf8, partial)| Texts {
            good,
            wrong,
            weak,
            bad_name,
            not_utf8,
            partial,
        })
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        40 => any::<u8>().prop_map(Act::Good),
        12 => Just(Act::Bad),
        4 => Just(Act::NotUtf8),
        4 => Just(Act::Empty),
        2 => Just(Act::Help),
        3 => Just(Act::Quit),
        4 => any::<bool>().prop_map(|partial| Act::HangUp { partial }),
        4 => any::<bool>().prop_map(|good| Act::TypeAndHangUp { good }),
        1 => Just(Act::TooLong),
        2 => Just(Act::Stall),
    ]
}

/// Some wrong passwords come in runs, as a guesser's do, so the cases reach the lockout: a `Bad`
/// step whose cut says so is typed up to six times, each time a different password.
fn with_guesses(steps: Vec<Step>) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let runs = match step.act {
            Act::Bad if step.cuts.1 % 4 == 0 => 1 + usize::from(step.cuts.0 % 6),
            _ => 1,
        };
        for n in 1..runs {
            let mut guess = step.clone();
            guess.texts.wrong = format!("{}{n}", step.texts.wrong);
            out.push(guess);
        }
        out.push(step);
    }
    out
}

fn step() -> impl Strategy<Value = Step> {
    let end = prop_oneof![
        Just(End::Frame),
        Just(End::Lf),
        Just(End::CrLf),
        Just(End::Cr),
        Just(End::CrNul)
    ];
    (
        prop::bool::weighted(0.15),
        act(),
        texts(),
        end,
        any::<(u8, u8)>(),
        any::<bool>(),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(second, act, texts, end, cuts, lf_first, batch)| Step {
            conn: usize::from(second),
            act,
            texts,
            end,
            cuts,
            lf_first,
            batch,
        })
}

// ---------------------------------------------------------------------------------------------
// The model.

/// What the model knows of a name of the case's pool.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Known {
    /// Nobody has it.
    New,
    /// Registered before accounts: no password yet (docs/serve.md §10.3).
    Old,
    /// An account with this password.
    Has(String),
}

/// What a password typed at a stage does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Checked against the account's.
    Check,
    /// Chosen for a new name.
    Choose,
    /// Chosen for a name from before accounts.
    Claim,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Stage {
    Closed,
    Name,
    Password(String, Kind),
    In(String),
}

/// One line the server must send next.
#[derive(Clone, Debug)]
enum Expect {
    Line(String),
    Prefix(String),
    /// `ok: welcome, NAME (#ID)`, and the wizard's role when it is one.
    Welcome(String),
    /// The server closes the connection.
    Eof,
}

impl Expect {
    fn line(text: impl Into<String>) -> Expect {
        Expect::Line(text.into())
    }

    /// Whether `got` (a line, or `None` for the end) is this.
    fn matches(&self, got: Option<&str>) -> bool {
        match (self, got) {
            (Expect::Eof, None) => true,
            (Expect::Line(line), Some(got)) => got == line.as_str(),
            (Expect::Prefix(prefix), Some(got)) => got.starts_with(prefix.as_str()),
            (Expect::Welcome(name), Some(got)) => welcomes(got, name),
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
struct Model {
    pool: Vec<String>,
    known: HashMap<String, Known>,
    /// Failed logins taken from the address's bucket.
    failed: u32,
    /// New names taken from the address's bucket.
    made: u32,
    stages: [Stage; 2],
}

/// What a client does for one act, and what the server must answer.
#[derive(Debug, Default)]
struct Plan {
    /// A line's text, without its end.
    line: Option<Vec<u8>>,
    /// The line is typed at a password prompt.
    secret: bool,
    /// Part of a line typed before hanging up.
    partial: Option<Vec<u8>>,
    /// Hangs up (after the line, if any) without reading.
    hang_up: bool,
    expect: Vec<Expect>,
}

fn lines(texts: &[&str]) -> Vec<Expect> {
    texts.iter().map(|t| Expect::line(*t)).collect()
}

fn lockout() -> Expect {
    Expect::Prefix(format!(
        "error: too many failed logins from your address: {FAILED_BURST} at once, then one every \
         12 s; try again in "
    ))
}

impl Model {
    fn new(pool: Vec<String>, old: Option<&str>) -> Model {
        let mut known: HashMap<String, Known> =
            pool.iter().map(|n| (n.clone(), Known::New)).collect();
        known.insert("merlin".into(), Known::Has(WIZARD_PASSWORD.into()));
        if let Some(old) = old {
            known.insert(old.into(), Known::Old);
        }
        let mut pool = pool;
        pool.push("merlin".into());
        pool.extend(old.map(str::to_owned));
        Model {
            pool,
            known,
            failed: 0,
            made: 0,
            stages: [Stage::Closed, Stage::Closed],
        }
    }

    fn password_prompt(name: &str, kind: Kind) -> String {
        match kind {
            Kind::Check => format!("password: type {name}'s password"),
            Kind::Claim => format!("password: {name} has no password yet; choose one"),
            Kind::Choose => format!(
                "password: {name} is a new name; choose a password (at least {} characters)",
                accounts::MIN_PASSWORD_CHARS
            ),
        }
    }

    /// The plan for `step` on a connection that is open, and the model after it.
    fn plan(&mut self, step: &Step, transport: Transport) -> Plan {
        let conn = step.conn;
        let act = match step.act {
            Act::NotUtf8 if !transport.carries_bytes() => Act::Bad,
            Act::Stall => Act::Good(0),
            ref act => act.clone(),
        };
        match self.stages[conn].clone() {
            Stage::Closed => unreachable!("a closed connection is opened, not planned"),
            Stage::Name => self.at_name(conn, &act, &step.texts),
            Stage::Password(name, kind) => self.at_password(conn, &act, &step.texts, &name, kind),
            Stage::In(_) => self.logged_in(conn, &act),
        }
    }

    fn at_name(&mut self, conn: usize, act: &Act, texts: &Texts) -> Plan {
        let refused = |why: &str| lines(&[why, NAME_PROMPT]);
        let mut plan = Plan::default();
        match act {
            Act::Good(k) => {
                let name = self.pool[usize::from(*k) % self.pool.len()].clone();
                plan.line = Some(name.clone().into_bytes());
                plan.expect = self.name_typed(conn, &name);
            }
            Act::TypeAndHangUp { good: true } => {
                // Nothing is taken before a password: a name alone changes nothing.
                plan.line = Some(self.pool[0].clone().into_bytes());
                plan.hang_up = true;
                self.stages[conn] = Stage::Closed;
            }
            Act::Bad | Act::TypeAndHangUp { good: false } => {
                let (text, command) = &texts.bad_name;
                plan.line = Some(text.clone().into_bytes());
                plan.expect = refused(if *command {
                    "error: that is a command, so it cannot be a name"
                } else {
                    "error: a name is 1-24 letters, digits, '_' or '-'"
                });
                if matches!(act, Act::TypeAndHangUp { .. }) {
                    plan.hang_up = true;
                    plan.expect.clear();
                    self.stages[conn] = Stage::Closed;
                }
            }
            Act::NotUtf8 => {
                plan.line = Some(texts.not_utf8.clone());
                plan.expect = refused("error: that line is not UTF-8 text, so it is not a name");
            }
            Act::Empty => {
                plan.line = Some(Vec::new());
                plan.expect = refused("error: a name is 1-24 letters, digits, '_' or '-'");
            }
            Act::Help => {
                plan.line = Some(b"help".to_vec());
                plan.expect = LOGIN_HELP.lines().map(Expect::line).collect();
                plan.expect.push(Expect::line(NAME_PROMPT));
            }
            Act::Quit => {
                plan.line = Some(b"quit".to_vec());
                plan.expect = vec![Expect::line("ok: bye"), Expect::Eof];
                self.stages[conn] = Stage::Closed;
            }
            Act::HangUp { partial } => {
                plan.partial = partial.then(|| b"p".to_vec());
                plan.hang_up = true;
                self.stages[conn] = Stage::Closed;
            }
            Act::TooLong => {
                plan.line = Some(vec![b'a'; MAX_LINE + 1]);
                plan.expect = vec![
                    Expect::Line(format!(
                        "error: line longer than {MAX_LINE} bytes; closing the connection"
                    )),
                    Expect::Eof,
                ];
                self.stages[conn] = Stage::Closed;
            }
            Act::Stall => unreachable!("planned as a name"),
        }
        plan
    }

    /// What the server answers a name of the pool, and the stage it leads to.
    fn name_typed(&mut self, conn: usize, name: &str) -> Vec<Expect> {
        let refused = |why: Expect| vec![why, Expect::line(NAME_PROMPT)];
        let kind = match self.known[name] {
            Known::Has(_) => Kind::Check,
            Known::Old => Kind::Claim,
            Known::New => Kind::Choose,
        };
        if kind == Kind::Choose && self.made >= NAMES_BURST {
            return refused(Expect::Prefix(format!(
                "error: too many new names from your address: {NAMES_BURST} at once, then one \
                 every 10 min; try again in "
            )));
        }
        if kind != Kind::Choose && self.failed >= FAILED_BURST {
            return refused(lockout());
        }
        self.stages[conn] = Stage::Password(name.to_owned(), kind);
        vec![Expect::Line(Self::password_prompt(name, kind))]
    }

    fn at_password(
        &mut self,
        conn: usize,
        act: &Act,
        texts: &Texts,
        name: &str,
        kind: Kind,
    ) -> Plan {
        let prompt = Self::password_prompt(name, kind);
        let again = |why: &str| vec![Expect::line(why), Expect::Line(prompt.clone())];
        let mut plan = Plan {
            secret: true,
            ..Plan::default()
        };
        let good = match act {
            Act::Good(_) | Act::Help | Act::Quit | Act::Stall => true,
            Act::TypeAndHangUp { good } => *good,
            Act::Bad => false,
            Act::NotUtf8 => {
                plan.line = Some(texts.not_utf8.clone());
                plan.expect = again("error: a password is UTF-8 text, and that line is not");
                return plan;
            }
            Act::Empty => {
                plan.line = Some(Vec::new());
                let why = match kind {
                    Kind::Check | Kind::Claim => {
                        format!("ok: no password typed, so you are not {name}")
                    }
                    Kind::Choose => format!("ok: no password typed, so {name} was not made"),
                };
                plan.expect = vec![Expect::Line(why), Expect::line(NAME_PROMPT)];
                self.stages[conn] = Stage::Name;
                return plan;
            }
            Act::HangUp { partial } => {
                plan.partial = partial.then(|| texts.partial.clone().into_bytes());
                plan.hang_up = true;
                self.stages[conn] = Stage::Closed;
                return plan;
            }
            Act::TooLong => {
                plan.line = Some(b"Zq".repeat(MAX_LINE / 2 + 1));
                plan.expect = vec![
                    Expect::Line(format!(
                        "error: line longer than {MAX_LINE} bytes; closing the connection"
                    )),
                    Expect::Eof,
                ];
                self.stages[conn] = Stage::Closed;
                return plan;
            }
        };
        let password = match (kind, good) {
            (Kind::Check, true) => match &self.known[name] {
                Known::Has(password) => password.clone(),
                other => unreachable!("a checked name has a password, not {other:?}"),
            },
            (Kind::Check, false) => texts.wrong.clone(),
            (Kind::Choose | Kind::Claim, true) => texts.good.clone(),
            (Kind::Choose | Kind::Claim, false) => texts.weak.clone(),
        };
        plan.line = Some(password.clone().into_bytes());
        if let Act::TypeAndHangUp { .. } = act {
            // What the server made of it is read from the server afterwards (`settle`).
            plan.hang_up = true;
            self.stages[conn] = Stage::Closed;
            return plan;
        }
        plan.expect = self.password_typed(conn, name, kind, &password, &again);
        plan
    }

    /// What the server answers a password line at `name`'s prompt, and the stage it leads to.
    fn password_typed(
        &mut self,
        conn: usize,
        name: &str,
        kind: Kind,
        password: &str,
        again: &dyn Fn(&str) -> Vec<Expect>,
    ) -> Vec<Expect> {
        let refused = |why: Expect| vec![why, Expect::line(NAME_PROMPT)];
        if kind == Kind::Check {
            if self.known[name] != Known::Has(password.to_owned()) {
                self.failed = (self.failed + 1).min(FAILED_BURST);
                if self.failed >= FAILED_BURST {
                    self.stages[conn] = Stage::Name;
                    return refused(lockout());
                }
                return again(&format!("error: wrong password for {name}"));
            }
            if self.stages[1 - conn] == Stage::In(name.to_owned()) {
                self.stages[conn] = Stage::Name;
                return refused(Expect::Line(format!("error: {name} is already connected")));
            }
            self.stages[conn] = Stage::In(name.to_owned());
            return vec![Expect::Welcome(name.to_owned())];
        }
        if password.chars().count() < accounts::MIN_PASSWORD_CHARS {
            return again("error: a password has at least 6 characters");
        }
        if password.chars().any(char::is_control) {
            return again("error: a password has no control characters");
        }
        if let Known::Has(_) = self.known[name] {
            self.stages[conn] = Stage::Name;
            return refused(Expect::Line(format!(
                "error: {name} was taken meanwhile; choose another name"
            )));
        }
        if kind == Kind::Choose {
            self.made = (self.made + 1).min(NAMES_BURST);
        }
        self.known
            .insert(name.to_owned(), Known::Has(password.to_owned()));
        self.stages[conn] = Stage::In(name.to_owned());
        vec![Expect::Welcome(name.to_owned())]
    }

    fn logged_in(&mut self, conn: usize, act: &Act) -> Plan {
        let mut plan = Plan::default();
        match act {
            Act::Quit => {
                plan.line = Some(b"quit".to_vec());
                plan.expect = vec![Expect::line("ok: bye"), Expect::Eof];
                self.stages[conn] = Stage::Closed;
            }
            Act::HangUp { partial } => {
                plan.partial = partial.then(|| b"remind 1 half".to_vec());
                plan.hang_up = true;
                self.stages[conn] = Stage::Closed;
            }
            Act::TypeAndHangUp { .. } => {
                plan.line = Some(b"who".to_vec());
                plan.hang_up = true;
                self.stages[conn] = Stage::Closed;
            }
            _ => {
                plan.line = Some(b"who".to_vec());
                plan.expect = vec![Expect::Line(self.who())];
            }
        }
        plan
    }

    /// The `who` reply: the case's connections are the only ones online.
    fn who(&self) -> String {
        let mut names: Vec<String> = self
            .stages
            .iter()
            .filter_map(|s| match s {
                Stage::In(name) if name == "merlin" => Some("merlin (wizard)".to_owned()),
                Stage::In(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        names.sort();
        format!("ok: {} online: {}", names.len(), names.join(", "))
    }
}

// ---------------------------------------------------------------------------------------------
// The world and the clients.

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

/// The real server on a temporary store, its names from before accounts, and the runtime it
/// needs kept alive.
struct World {
    server: Rc<Server>,
    old: Vec<String>,
    _driver: tickstep::TokioDriver,
    _dir: tempfile::TempDir,
}

impl World {
    async fn start(old: u32) -> World {
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
    fn taken(&self, from: IpAddr) -> (u32, u32) {
        let mut limits = self.server.fair_use.borrow_mut();
        let now = Instant::now();
        let key = address_key(from);
        let failed = f64::from(FAILED_BURST) - limits.failed_logins.tokens(key, now);
        let made = f64::from(NAMES_BURST) - limits.names_per_address.tokens(key, now);
        (failed.round() as u32, made.round() as u32)
    }
}

enum Io {
    /// The client writes `up` and reads `down`.
    Bytes {
        up: DuplexStream,
        down: DuplexStream,
    },
    Ws(Box<WebSocketStream<DuplexStream>>),
}

/// One connection's client side.
struct Client {
    transport: Transport,
    io: Io,
    /// The session serving it, to wait for its end.
    session: JoinHandle<()>,
    /// Bytes received and not yet cut into lines (raw, telnet).
    pending: Vec<u8>,
    telnet: TelnetState,
    /// Lines received and not yet taken (`None`: the end), each with whether the client's echo
    /// was off when it came.
    lines: VecDeque<(Option<String>, bool)>,
    /// Whether the client's echo was off when the last line taken came.
    echo_hidden_at_line: bool,
    /// Everything the server sent: the property is checked on it.
    received: Vec<u8>,
    /// GMCP messages not yet looked at.
    gmcp: Vec<String>,
    /// The server asked this client not to echo (telnet's ECHO).
    echo_hidden: bool,
    /// The last thing written ended in a bare CR.
    after_cr: bool,
}

/// Where the client's telnet parser is.
#[derive(Clone, Copy, Default)]
enum TelnetState {
    #[default]
    Data,
    Iac,
    Verb(u8),
    Sb,
    SbIac,
}

fn address(case: u32) -> IpAddr {
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

fn to_axum(message: Message) -> Option<AxumMessage> {
    Some(match message {
        Message::Text(text) => AxumMessage::text(text.as_str()),
        Message::Binary(data) => AxumMessage::binary(data),
        Message::Ping(data) => AxumMessage::Ping(data),
        Message::Pong(data) => AxumMessage::Pong(data),
        Message::Close(_) => AxumMessage::Close(None),
        Message::Frame(_) => return None,
    })
}

fn to_tungstenite(message: AxumMessage) -> Message {
    match message {
        AxumMessage::Text(text) => Message::text(text.as_str()),
        AxumMessage::Binary(data) => Message::binary(data),
        AxumMessage::Ping(data) => Message::Ping(data),
        AxumMessage::Pong(data) => Message::Pong(data),
        AxumMessage::Close(_) => Message::Close(None),
    }
}

impl Client {
    async fn connect(world: &World, transport: Transport, from: IpAddr, limits: Limits) -> Client {
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
                let session = tokio::task::spawn_local(ws::serve_frames(
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
    async fn type_line(&mut self, text: &[u8], end: End, step: &Step, more: Option<(&[u8], End)>) {
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
                super::telnet::escape_iac(text, &mut bytes);
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
    async fn write(&mut self, bytes: &[u8], (a, b): (u8, u8)) {
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
    async fn next(&mut self) -> Result<Option<String>, String> {
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
    async fn receive(&mut self) -> Result<(), String> {
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
    fn telnet_byte(&mut self, byte: u8, answers: &mut Vec<u8>) -> Result<(), String> {
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
    fn negotiated(&mut self, verb: u8, option: u8, answers: &mut Vec<u8>) {
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
    async fn expect(&mut self, expect: &[Expect], typed_ahead: bool) -> Result<(), String> {
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
    async fn close(mut self, secrets: &[Vec<u8>]) -> Result<(), String> {
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
fn welcomes(line: &str, name: &str) -> bool {
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
struct Tally(std::cell::RefCell<std::collections::BTreeMap<&'static str, u64>>);

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

    fn add(&self, what: &'static str) {
        *self.0.borrow_mut().entry(what).or_default() += 1;
    }

    fn lines(&self, expect: &[Expect]) {
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
fn no_secret_in(received: &[u8], secrets: &[Vec<u8>]) -> Result<(), String> {
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

// ---------------------------------------------------------------------------------------------
// Running a case.

/// The pool of names a case types: three new ones of its own, the wizard, and sometimes a name
/// from before accounts.
fn pool(n: u32) -> Vec<String> {
    (0..3).map(|k| format!("p{n}x{k}")).collect()
}

/// One case being run: the model, the clients of its two connections, the passwords typed.
struct Case<'a> {
    world: &'a World,
    transport: Transport,
    from: IpAddr,
    model: Model,
    clients: [Option<Client>; 2],
    secrets: Vec<Vec<u8>>,
    tally: &'a Tally,
}

impl Case<'_> {
    async fn run(mut self, steps: &[Step]) -> Result<(), String> {
        let started = Instant::now();
        // The sessions of a case that failed end once their clients are dropped.
        while self.world.server.presence.online_count() != 0 {
            if started.elapsed() > PATIENCE {
                return Err("a session of an earlier case is still online".into());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let started = Instant::now();
        let mut i = 0;
        while let Some(step) = steps.get(i) {
            i += 1;
            if started.elapsed() > CASE_BOUND {
                return Err(format!(
                    "the case ran over {CASE_BOUND:?}; the model of the limits assumes it does not"
                ));
            }
            if self.clients[step.conn].is_none() {
                self.open(step).await?;
                continue;
            }
            let with_next = self
                .act(step, steps.get(i))
                .await
                .map_err(|e| format!("step {}: {e}", i - 1))?;
            if with_next {
                i += 1;
            }
        }
        for client in self.clients.into_iter().flatten() {
            client.close(&self.secrets).await?;
        }
        Ok(())
    }

    /// A step on a closed connection opens it (or stalls a login on a connection of its own).
    async fn open(&mut self, step: &Step) -> Result<(), String> {
        if let Act::Stall = step.act {
            let (world, transport, from) = (self.world, self.transport, self.from);
            stall(world, transport, from, &self.model, step, &mut self.secrets).await?;
            self.tally.add("login timed out");
            return Ok(());
        }
        let limits = Limits {
            max_line: MAX_LINE,
            login_timeout: Duration::from_secs(600),
        };
        let mut client = Client::connect(self.world, self.transport, self.from, limits).await;
        client.expect(&[Expect::line(GREETING)], false).await?;
        self.model.stages[step.conn] = Stage::Name;
        self.clients[step.conn] = Some(client);
        Ok(())
    }

    /// Acts `step` on its open connection and reads the answer; true when `next` was typed in
    /// the same write.
    async fn act(&mut self, step: &Step, next: Option<&Step>) -> Result<bool, String> {
        let conn = step.conn;
        let before = self.model.clone();
        let mut plan = self.model.plan(step, self.transport);
        let batched = self.batch(step, &plan, next);
        let client = self.clients[conn].as_mut().expect("an open connection");
        if let Some(line) = &plan.line {
            for typed in [Some(&plan), batched.as_ref().map(|(_, p)| p)]
                .into_iter()
                .flatten()
            {
                if typed.secret {
                    self.secrets.push(typed.line.clone().unwrap_or_default());
                }
            }
            let more = batched
                .as_ref()
                .map(|(next, p)| (p.line.as_deref().unwrap_or_default(), next.end));
            client.type_line(line, step.end, step, more).await;
        }
        // Part of a line is a stream's alone: a frame is a whole line.
        if let Some(partial) = plan.partial.as_ref().filter(|_| !self.transport.is_ws()) {
            if plan.secret {
                self.secrets.push(partial.clone());
            }
            client.write(partial, step.cuts).await;
        }
        if plan.hang_up {
            let client = self.clients[conn].take().expect("an open connection");
            client.close(&self.secrets).await?;
            let settled = settle(self.world, self.from, &before, &mut self.model, step).await?;
            self.tally.add(match settled {
                Some(true) => "hung up after a password: acted on",
                Some(false) => "hung up after a password: not acted on",
                None => "hung up",
            });
            return Ok(false);
        }
        if let Some((_, next_plan)) = batched.as_ref() {
            plan.expect.extend(next_plan.expect.iter().cloned());
            self.tally.add("two lines in one write");
        }
        client.expect(&plan.expect, batched.is_some()).await?;
        self.tally.lines(&plan.expect);
        if self.model.stages[conn] == Stage::Closed {
            let client = self.clients[conn].take().expect("an open connection");
            client.close(&self.secrets).await?;
        }
        Ok(batched.is_some())
    }

    /// The next step's plan, when its line is typed in the same write as this one's: when
    /// nothing in between is left to chance. Not over telnet: a client that types ahead answers
    /// the server's ECHO requests after lines it already sent, so its echo at a prompt depends on
    /// timing (docs/serve.md §7.38), and the echo is checked at every prompt; telnet cases type
    /// as a person does.
    fn batch<'s>(
        &mut self,
        step: &Step,
        plan: &Plan,
        next: Option<&'s Step>,
    ) -> Option<(&'s Step, Plan)> {
        let next = next?;
        let plain_line = next.conn == step.conn
            && matches!(next.act, Act::Good(_) | Act::Bad | Act::Empty | Act::Help);
        let then_open = !plan.hang_up
            && plan.partial.is_none()
            && !plan.expect.iter().any(|e| matches!(e, Expect::Eof));
        (step.batch && self.transport != Transport::Telnet && then_open && plain_line)
            .then(|| (next, self.model.plan(next, self.transport)))
    }
}

/// After a client hung up right after a password line, reads what the server made of it (the
/// account, the address's limits) and checks it is one of the two outcomes the rules allow: the
/// line was never acted on, or it was, fully. Which it was, when the client hung up at a
/// password prompt.
async fn settle(
    world: &World,
    from: IpAddr,
    before: &Model,
    model: &mut Model,
    step: &Step,
) -> Result<Option<bool>, String> {
    let (Stage::Password(name, kind), Act::TypeAndHangUp { good }) =
        (&before.stages[step.conn], &step.act)
    else {
        return Ok(None);
    };
    let password = match (kind, good) {
        (Kind::Check, true) => match &before.known[name] {
            Known::Has(password) => password.clone(),
            other => unreachable!("a checked name has a password, not {other:?}"),
        },
        (Kind::Check, false) => step.texts.wrong.clone(),
        (_, true) => step.texts.good.clone(),
        (_, false) => step.texts.weak.clone(),
    };
    let mut acted = before.clone();
    acted.password_typed(step.conn, name, *kind, &password, &|_| Vec::new());
    let taken = world.taken(from);
    let account = world.server.presence.account(name).await?;
    let hash = account.and_then(|a| a.hash);
    for (was_acted, outcome) in [(false, before), (true, &acted)] {
        if (outcome.failed, outcome.made) != taken {
            continue;
        }
        let same = match (&outcome.known[name], &hash) {
            (Known::Has(password), Some(hash)) => {
                accounts::verify(password.clone(), hash.clone()).await
            }
            (Known::New | Known::Old, None) => true,
            _ => false,
        };
        if same {
            model.known.clone_from(&outcome.known);
            (model.failed, model.made) = taken;
            let differs = outcome.known != before.known || taken != (before.failed, before.made);
            return Ok(Some(was_acted && differs));
        }
    }
    Err(format!(
        "after a hang-up at {name}'s password the server has taken {taken:?} and holds \
         {hash:?}: neither untouched ({before:?}) nor acted on ({acted:?})"
    ))
}

/// A connection that never logs in: with a short login timeout it types a name and part of a
/// password (a stream only: a frame is a whole line), and must be told the timeout, a prefix of
/// what the name is answered before it, and then closed (docs/serve.md §2.3).
async fn stall(
    world: &World,
    transport: Transport,
    from: IpAddr,
    model: &Model,
    step: &Step,
    secrets: &mut Vec<Vec<u8>>,
) -> Result<(), String> {
    let limits = Limits {
        max_line: MAX_LINE,
        login_timeout: STALL_TIMEOUT,
    };
    let mut client = Client::connect(world, transport, from, limits).await;
    let name = model.pool[usize::from(step.cuts.0) % model.pool.len()].clone();
    let mut scratch = model.clone();
    scratch.stages[step.conn] = Stage::Name;
    let mut predicted = vec![Expect::line(GREETING)];
    predicted.extend(scratch.name_typed(step.conn, &name));
    client
        .type_line(name.as_bytes(), step.end, step, None)
        .await;
    if !transport.is_ws() {
        let partial = step.texts.partial.as_bytes();
        secrets.push(partial.to_vec());
        client.write(partial, step.cuts).await;
    }
    let mut got = Vec::new();
    while let Some(line) = client.next().await? {
        got.push(Some(line));
    }
    let timeout = format!(
        "error: not logged in within {} s; goodbye",
        STALL_TIMEOUT.as_secs_f64()
    );
    let told = got.pop().flatten();
    let in_step = got.len() <= predicted.len()
        && got
            .iter()
            .zip(&predicted)
            .all(|(got, want)| want.matches(got.as_deref()));
    if told.as_deref() != Some(timeout.as_str()) || !in_step {
        return Err(format!(
            "a stalled login got {got:?} then {told:?}; expected a prefix of {predicted:?} then \
             {timeout:?}"
        ));
    }
    client.close(secrets).await
}

/// Runs `cases` cases over `transport`, each against a fresh model, on one world.
fn run(transport: Transport) {
    let cases: u32 = std::env::var("TICKSTEP_LOGIN_CASES").ok().map_or(300, |n| {
        n.parse().expect("TICKSTEP_LOGIN_CASES is a number")
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let world = local.block_on(&runtime, World::start(cases / OLD_NAME_EVERY + 1));
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let n = Cell::new(0u32);
    let tally = Tally::default();
    let steps = prop::collection::vec(step(), 1..24).prop_map(with_guesses);
    let result = runner.run(&steps, |steps| {
        let n_case = n.get();
        n.set(n_case + 1);
        let old = n_case
            .is_multiple_of(OLD_NAME_EVERY)
            .then(|| world.old.get((n_case / OLD_NAME_EVERY) as usize))
            .flatten();
        let case = Case {
            world: &world,
            transport,
            from: address(n_case),
            model: Model::new(pool(n_case), old.map(String::as_str)),
            clients: [None, None],
            secrets: Vec::new(),
            tally: &tally,
        };
        local
            .block_on(&runtime, case.run(&steps))
            .map_err(TestCaseError::fail)
    });
    local.block_on(&runtime, async move { drop(world) });
    if let Err(failure) = result {
        panic!("{transport:?}: {failure}");
    }
    eprintln!("{transport:?}: {} cases; {:?}", n.get(), tally.0.borrow());
}

#[test]
fn no_password_is_shown_back_over_raw_lines() {
    run(Transport::Raw);
}

#[test]
fn no_password_is_shown_back_over_telnet() {
    run(Transport::Telnet);
}

#[test]
fn no_password_is_shown_back_over_websocket_binary_frames() {
    run(Transport::Ws(Framing::Gmcp));
}

#[test]
fn no_password_is_shown_back_over_websocket_text_frames() {
    run(Transport::Ws(Framing::Plain));
}
