//! The world a server hosts, and the one dispatcher of its commands (docs/serve.md §4.10): the
//! [`Server`] composes its owned parts — the schedule commands ([`ScheduleCommands`]), who is
//! known and online and their mail ([`Presence`]), fair use ([`FairUseBuckets`]), the bell, and
//! the wizard's stats ([`ServerStats`]) — and [`Server::execute`] answers every [`Request`].
//! What a firing does is in [`firing`](super::firing).
//!
//! Everything here runs on the server's one thread — connection tasks between frames, verbs and
//! the bell inside frames — so it is plain `Rc`/`RefCell` state, never borrowed across an await.

use std::cell::RefCell;
use std::net::IpAddr;
use std::rc::Rc;
use std::time::Instant;

use tickstep::schedules::{ObjId, ScheduleId};
use tickstep::{Runtime, RuntimeHandle};
use tickstep_host::shown;

use super::bell::{Bell, Hall};
use super::fair_use::{FairUse, FairUseBuckets};
use super::limits::{self, wait_text};
use super::line_protocol::{Action, HELP, PolicyWord, Request, WorldVerb};
use super::metrics::{Refusal, ServeMetrics};
use super::presence::Presence;
use super::principals::Principals;
use super::registry::Registry;
use super::schedule_commands::{Kind, ScheduleCommands};
use super::server_stats::ServerStats;

/// The room a connection's queue must have before the next command of that connection is read,
/// so its own replies never fill the queue the world's lines need (docs/serve.md §11.7).
pub(crate) const REPLY_HEADROOM: usize = super::presence::OUTBOX_LINES / 2;

/// What a command asks of the connection after its reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum After {
    Continue,
    /// Continue, but the command was refused by the creation rate (docs/serve.md §11.3): the
    /// connection's next command waits [`limits::REFUSED_CREATION_HOLD`] (docs/serve.md §11.12).
    Refused,
    Quit,
    Shutdown,
}

/// The server's state: its owned parts, and the runtime they share.
pub(crate) struct Server {
    pub(crate) rt: Rc<Runtime>,
    pub(crate) handle: RuntimeHandle,
    /// The schedule commands and the quota (docs/serve.md §4).
    pub(crate) schedules: ScheduleCommands,
    /// Who is known and who is online, and their mail (docs/serve.md §6).
    pub(crate) presence: Presence,
    principals: Rc<Principals>,
    /// The fair-use buckets (docs/serve.md §11).
    pub(crate) fair_use: RefCell<FairUseBuckets>,
    pub(crate) bell: Bell,
    /// What the wizard's `stats` reports (docs/serve.md §3.4).
    pub(crate) stats: ServerStats,
    /// What the server counts about itself for `/metrics` (docs/observability.md §8).
    pub(crate) metrics: Rc<ServeMetrics>,
}

impl Server {
    /// Wires the world into a runtime whose engine already holds the stored schedules.
    pub(crate) fn new(
        rt: Rc<Runtime>,
        handle: RuntimeHandle,
        registry: Registry,
        players: Vec<(ObjId, String)>,
        principals: Rc<Principals>,
        (quota, fair): (usize, FairUse),
    ) -> Rc<Server> {
        let bell = Bell::new(&rt);
        let metrics = Rc::new(ServeMetrics::register());
        let schedules = ScheduleCommands::new(
            Rc::clone(&rt),
            handle.clone(),
            quota,
            principals.root,
            Rc::clone(&metrics),
        );
        let server = Rc::new(Server {
            rt,
            handle,
            schedules,
            presence: Presence::new(
                registry,
                players,
                Rc::clone(&principals),
                Rc::clone(&metrics),
            ),
            principals,
            fair_use: RefCell::new(FairUseBuckets::new(fair)),
            bell,
            stats: ServerStats::default(),
            metrics,
        });
        server.register_verbs();
        server
    }

    /// The wizard `--wizard` names: its account's password comes from the configuration,
    /// never from a login (docs/serve.md §10.4); the dashboard shows the schedules as it sees
    /// them, all of them (docs/serve.md §13.2).
    pub(crate) fn principals_root(&self) -> ObjId {
        self.principals.root
    }

    /// The watch found the store gone or unwritable: refuse new schedules from now on, and say
    /// so at once (docs/serve.md §12.1).
    pub(crate) fn store_lost(&self, why: &str) {
        if !self.schedules.lose_store(why) {
            return;
        }
        eprintln!("tickstep serve: {why}; new schedules are refused");
        self.presence.tell_wizards(&format!(
            "[system] {why}; new schedules are refused until the server restarts"
        ));
    }

    /// Runs one command of `who`, connected from `from`, returning the reply lines: the one
    /// dispatcher of every [`Request`] (docs/serve.md §4.10). Only `wizard` waits (for the
    /// registry); every other command answers at its first poll.
    pub(crate) async fn execute(
        self: &Rc<Self>,
        who: ObjId,
        from: IpAddr,
        request: Request,
    ) -> (Vec<String>, After) {
        self.stats.command();
        let one = |line: String| (vec![line], After::Continue);
        let (schedules, presence) = (&self.schedules, &self.presence);
        match request {
            // Each reply quotes the number as typed, never as the float prints: `1e-300` is not
            // expanded into 300 digits (docs/serve.md §4.9).
            Request::Remind { seconds, text } => {
                let when = self.rt.schedules().now_unix_seconds() + seconds.value;
                let action = Action {
                    verb: WorldVerb::Tell,
                    arg: text,
                };
                self.create(
                    (who, from),
                    Kind::At(when),
                    (&action, None, &[]),
                    &format!("reminds you in {} s", seconds.typed),
                )
            }
            Request::Every {
                seconds,
                action,
                key,
                policies,
            } => self.create(
                (who, from),
                Kind::Every(seconds.value),
                (&action, key, &policies),
                &format!("runs {} every {} s", action.verb.name(), seconds.typed),
            ),
            Request::At {
                unix_seconds,
                action,
                key,
                policies,
            } => self.create(
                (who, from),
                Kind::At(unix_seconds.value),
                (&action, key, &policies),
                &format!("runs {} at {}", action.verb.name(), unix_seconds.typed),
            ),
            Request::Cron {
                expr,
                zone,
                action,
                key,
                policies,
            } => self.create(
                (who, from),
                Kind::Cron(&expr, &zone),
                (&action, key, &policies),
                &format!(
                    "runs {} at \"{}\" in {}",
                    action.verb.name(),
                    shown(&expr),
                    shown(&zone)
                ),
            ),
            Request::Stop(id) => one(schedules.stop(who, ScheduleId::from_raw(id), presence)),
            Request::Info(id) => (
                schedules.info(who, ScheduleId::from_raw(id), presence),
                After::Continue,
            ),
            Request::Pause { id, note } => {
                one(schedules.pause(who, ScheduleId::from_raw(id), &note, presence))
            }
            Request::Resume(id) => one(schedules.resume(who, ScheduleId::from_raw(id), presence)),
            Request::Trigger(id) => one(schedules.trigger(who, ScheduleId::from_raw(id), presence)),
            Request::Schedules => (schedules.listing(who, presence), After::Continue),
            Request::Who => one(presence.who()),
            Request::Ping(word) => one(pong(&word)),
            Request::Say(text) => self.say(who, &text),
            Request::Nothing => one("ok: nothing to do (type help)".to_owned()),
            Request::Wizard(name) => one(presence.make_wizard(who, &name).await),
            Request::Ring(priority) => one(self.bell.ring(self, who, priority, None)),
            Request::Stats if presence.is_wizard(who) => {
                let says_dropped = self.fair_use.borrow_mut().take_dropped();
                one(self
                    .stats
                    .report(&self.rt, presence.online_count(), says_dropped))
            }
            Request::Stats => one("error: only the wizard may read the server's stats".to_owned()),
            Request::Help => (HELP.lines().map(str::to_owned).collect(), After::Continue),
            Request::Quit => (vec!["ok: bye".to_owned()], After::Quit),
            Request::Shutdown if presence.is_wizard(who) => {
                (vec!["ok: shutting down".to_owned()], After::Shutdown)
            }
            Request::Shutdown => one("error: only the wizard may shut the server down".to_owned()),
        }
    }

    /// [`execute`](Self::execute) for a caller outside a task (the dashboard's actions, a GMCP
    /// request): `None` for a command that would wait, which only `wizard` does.
    pub(crate) fn execute_now(
        self: &Rc<Self>,
        who: ObjId,
        from: IpAddr,
        request: Request,
    ) -> Option<(Vec<String>, After)> {
        use futures_util::FutureExt as _;
        self.execute(who, from, request).now_or_never()
    }

    /// A player's `say`: to everyone else, and echoed back as the reply (which waits for room
    /// like any reply, so a client pasting a burst is slowed, not dropped: docs/serve.md §11.7).
    fn say(&self, who: ObjId, text: &str) -> (Vec<String>, After) {
        let now = Instant::now();
        if let Err(wait) = self.fair_use.borrow_mut().take_say(who, now) {
            self.metrics.refused(Refusal::Says);
            let rate = limits::SAYS_PER_PLAYER;
            return (
                vec![format!(
                    "error: you are talking too fast: {} says at once, then {} a second; \
                     try again in {}",
                    rate.burst,
                    rate.per_second,
                    wait_text(wait)
                )],
                After::Continue,
            );
        }
        let line = format!("[say] {} says: {}", self.presence.name(who), shown(text));
        self.presence.broadcast_except(&line, Some(who));
        (vec![line, "ok: said".to_owned()], After::Continue)
    }

    /// A new schedule: the schedule commands' checks, then the creation rates (a refusal there
    /// holds the connection: docs/serve.md §11.12), then the schedule.
    fn create(
        &self,
        (who, from): (ObjId, IpAddr),
        kind: Kind<'_>,
        (action, key, policies): (&Action, Option<String>, &[PolicyWord]),
        what: &str,
    ) -> (Vec<String>, After) {
        let options = match self.schedules.admit(who, policies, &self.presence) {
            Ok(options) => options,
            Err(refusal) => return (vec![refusal], After::Continue),
        };
        if let Err(refusal) = self
            .fair_use
            .borrow_mut()
            .take_creation(who, from, Instant::now())
        {
            self.metrics.refused(Refusal::Creations);
            return (vec![refusal], After::Refused);
        }
        let reply = self
            .schedules
            .create(who, kind, (action, key, &options), what);
        (vec![reply], After::Continue)
    }
}

/// The bell rings in the server: names, messages and the runtime it needs.
impl Hall for Server {
    fn name(&self, who: ObjId) -> String {
        self.presence.name(who)
    }
    fn tell(&self, who: ObjId, line: String) {
        self.presence.tell(who, line);
    }
    fn broadcast(&self, line: &str) {
        self.presence.broadcast(line);
    }
    fn runtime(&self) -> &Rc<Runtime> {
        &self.rt
    }
}

/// `ok: pong [word] <ns>`: the server's wall clock, Unix nanoseconds, as it answers
/// (docs/serve.md §3.10). A client on the same machine splits its round trip at it: the time to
/// the server and the time back.
fn pong(word: &str) -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    if word.is_empty() {
        format!("ok: pong {ns}")
    } else {
        format!("ok: pong {} {ns}", shown(word))
    }
}
