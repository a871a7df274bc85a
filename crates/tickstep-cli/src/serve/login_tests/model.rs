//! The model of docs/serve.md §10: what the server must answer to each act, line by line.

use super::*;

/// What the model knows of a name of the case's pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Known {
    /// Nobody has it.
    New,
    /// Registered before accounts: no password yet (docs/serve.md §10.3).
    Old,
    /// An account with this password.
    Has(String),
}

/// What a password typed at a stage does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Checked against the account's.
    Check,
    /// Chosen for a new name.
    Choose,
    /// Chosen for a name from before accounts.
    Claim,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    Closed,
    Name,
    Password(String, Kind),
    In(String),
}

/// One line the server must send next.
#[derive(Clone, Debug)]
pub(super) enum Expect {
    Line(String),
    Prefix(String),
    /// `ok: welcome, NAME (#ID)`, and the wizard's role when it is one.
    Welcome(String),
    /// The server closes the connection.
    Eof,
}

impl Expect {
    pub(super) fn line(text: impl Into<String>) -> Expect {
        Expect::Line(text.into())
    }

    /// Whether `got` (a line, or `None` for the end) is this.
    pub(super) fn matches(&self, got: Option<&str>) -> bool {
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
pub(super) struct Model {
    pub(super) pool: Vec<String>,
    pub(super) known: HashMap<String, Known>,
    /// Failed logins taken from the address's bucket.
    pub(super) failed: u32,
    /// New names taken from the address's bucket.
    pub(super) made: u32,
    pub(super) stages: [Stage; 2],
}

/// What a client does for one act, and what the server must answer.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// A line's text, without its end.
    pub(super) line: Option<Vec<u8>>,
    /// The line is typed at a password prompt.
    pub(super) secret: bool,
    /// Part of a line typed before hanging up.
    pub(super) partial: Option<Vec<u8>>,
    /// Hangs up (after the line, if any) without reading.
    pub(super) hang_up: bool,
    pub(super) expect: Vec<Expect>,
}

pub(super) fn lines(texts: &[&str]) -> Vec<Expect> {
    texts.iter().map(|t| Expect::line(*t)).collect()
}

pub(super) fn lockout() -> Expect {
    Expect::Prefix(format!(
        "error: too many failed logins from your address: {FAILED_BURST} at once, then one every \
         12 s; try again in "
    ))
}

impl Model {
    pub(super) fn new(pool: Vec<String>, old: Option<&str>) -> Model {
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

    pub(super) fn password_prompt(name: &str, kind: Kind) -> String {
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
    pub(super) fn plan(&mut self, step: &Step, transport: Transport) -> Plan {
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

    pub(super) fn at_name(&mut self, conn: usize, act: &Act, texts: &Texts) -> Plan {
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
    pub(super) fn name_typed(&mut self, conn: usize, name: &str) -> Vec<Expect> {
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

    pub(super) fn at_password(
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
    pub(super) fn password_typed(
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

    pub(super) fn logged_in(&mut self, conn: usize, act: &Act) -> Plan {
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
    pub(super) fn who(&self) -> String {
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
