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

use super::connection::{GREETING, LOGIN_HELP, Limits, NAME_PROMPT, serve_wire};
use crate::serve::http::{self, Framing};
use crate::serve::limits::address_key;
use crate::serve::registry::Registry;
use crate::serve::server::Server;
use crate::serve::wire::Input;
use crate::serve::{ServeArgs, accounts, start};

mod acts;
mod clients;
mod model;

use acts::*;
use clients::*;
use model::*;

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
