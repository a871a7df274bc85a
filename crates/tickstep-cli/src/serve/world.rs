//! The world a server hosts: the schedule verbs, and what each command does (docs/serve.md
//! §4). Who is known and online, and their mail, is its [`Presence`].
//!
//! Everything here runs on the server's one thread — connection tasks between frames, verbs and
//! the bell inside frames — so it is plain `Rc`/`RefCell` state, never borrowed across an await.

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::net::IpAddr;
use std::rc::Rc;
use std::time::Instant;

use tickstep::kernel::ErrorChain;
use tickstep::schedules::{self, ObjId, Options, ScheduleId, ScheduleInfo, ScheduleKind, Value};
use tickstep::{Runtime, RuntimeHandle};

use crate::named::create_named;

use super::bell::{Bell, Hall};
use super::fair_use::{FairUse, FairUseBuckets};
use super::frame_times::FrameTimes;
use super::limits::{self, wait_text};
use super::metrics::{Refusal, ServeMetrics};
use super::presence::Presence;
use super::principals::Principals;
use super::protocol::{Action, HELP, PolicyWord, Request, WorldVerb};
use super::quota::Quota;
use super::registry::Registry;
use tickstep_host::shown;

/// The room a connection's queue must have before the next command of that connection is read,
/// so its own replies never fill the queue the world's lines need (docs/serve.md §11.7).
pub(crate) const REPLY_HEADROOM: usize = super::presence::OUTBOX_LINES / 2;
/// The most schedules `schedules` lists in one reply.
const LISTING_CAP: usize = 50;

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

/// The server's state.
pub(crate) struct Server {
    pub(crate) rt: Rc<Runtime>,
    pub(crate) handle: RuntimeHandle,
    /// Who is known and who is online, and their mail (docs/serve.md §6).
    pub(crate) presence: Presence,
    principals: Rc<Principals>,
    /// Live schedules per player, against the quota (docs/serve.md §4.3).
    pub(super) quota: Quota,
    pub(crate) bell: Bell,
    pub(crate) commands_handled: Cell<u64>,
    pub(crate) frames: FrameTimes,
    /// Firings started as of the last `stats`.
    firings_reported: Cell<u64>,
    /// The fair-use buckets (docs/serve.md §11).
    pub(crate) fair_use: RefCell<FairUseBuckets>,
    /// Why the store can no longer be trusted, once the watch has seen it go (docs/serve.md §12).
    store_lost: RefCell<Option<String>>,
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
        let server = Rc::new(Server {
            rt,
            handle,
            presence: Presence::new(
                registry,
                players,
                Rc::clone(&principals),
                Rc::clone(&metrics),
            ),
            principals,
            quota: Quota::new(quota),
            bell,
            commands_handled: Cell::new(0),
            frames: FrameTimes::default(),
            firings_reported: Cell::new(0),
            fair_use: RefCell::new(FairUseBuckets::new(fair)),
            store_lost: RefCell::new(None),
            metrics,
        });
        server.count_stored_schedules();
        server.register_verbs();
        server
    }

    /// The quota's counts, from the schedules the store brought back.
    fn count_stored_schedules(&self) {
        let txn = self.rt.schedules().begin(self.principals.root);
        let ids = txn.schedules(None).unwrap_or_default();
        for id in ids {
            if let Ok(info) = txn.schedule_info(id) {
                self.quota
                    .count(id, info.owner, info.kind == ScheduleKind::At);
            }
        }
    }

    /// The wizard `--wizard` names: its account's password comes from the configuration,
    /// never from a login (docs/serve.md §10.4); the dashboard shows the schedules as it sees
    /// them, all of them (docs/serve.md §13.2).
    pub(crate) fn principals_root(&self) -> ObjId {
        self.principals.root
    }

    /// The watch found the store gone or unwritable: refuse new schedules from now on, and say
    /// so at once (docs/serve.md §12.1).
    pub(crate) fn store_lost(&self, why: String) {
        if self.store_lost.borrow().is_some() {
            return;
        }
        eprintln!("tickstep serve: {why}; new schedules are refused");
        self.presence.tell_wizards(&format!(
            "[system] {why}; new schedules are refused until the server restarts"
        ));
        *self.store_lost.borrow_mut() = Some(why);
    }

    /// Why the store cannot be trusted, if the watch found it so.
    pub(crate) fn store_trouble(&self) -> Option<String> {
        self.store_lost.borrow().clone()
    }

    /// Runs one command of `who`, connected from `from`, returning the reply lines.
    pub(crate) fn execute(
        self: &Rc<Self>,
        who: ObjId,
        from: IpAddr,
        request: Request,
    ) -> (Vec<String>, After) {
        self.commands_handled.set(self.commands_handled.get() + 1);
        let one = |line: String| (vec![line], After::Continue);
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
            Request::Stop(id) => one(self.stop(who, ScheduleId::from_raw(id))),
            Request::Info(id) => (self.info(who, ScheduleId::from_raw(id)), After::Continue),
            Request::Pause { id, note } => one(self.pause(who, ScheduleId::from_raw(id), &note)),
            Request::Resume(id) => one(self.resume(who, ScheduleId::from_raw(id))),
            Request::Trigger(id) => one(self.trigger(who, ScheduleId::from_raw(id))),
            Request::Schedules => (self.listing(who), After::Continue),
            Request::Who => one(self.presence.who()),
            Request::Ping(word) => one(pong(&word)),
            Request::Say(text) => self.say(who, &text),
            Request::Nothing => one("ok: nothing to do (type help)".to_owned()),
            // Awaits the registry: the session runs it (`Presence::make_wizard`).
            Request::Wizard(_) => one("error: wizard is run by the session".to_owned()),
            Request::Ring(priority) => one(self.bell.ring(self, who, priority, None)),
            Request::Stats if self.presence.is_wizard(who) => one(self.stats()),
            Request::Stats => one("error: only the wizard may read the server's stats".to_owned()),
            Request::Help => (HELP.lines().map(str::to_owned).collect(), After::Continue),
            Request::Quit => (vec!["ok: bye".to_owned()], After::Quit),
            Request::Shutdown if self.presence.is_wizard(who) => {
                (vec!["ok: shutting down".to_owned()], After::Shutdown)
            }
            Request::Shutdown => one("error: only the wizard may shut the server down".to_owned()),
        }
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

    fn create(
        &self,
        (who, from): (ObjId, IpAddr),
        kind: Kind<'_>,
        (action, key, policies): (&Action, Option<String>, &[PolicyWord]),
        what: &str,
    ) -> (Vec<String>, After) {
        let one = |line: String| (vec![line], After::Continue);
        // Checked before any limit is taken: a misspelt policy costs the player nothing.
        let options = match policy_options(policies) {
            Ok(options) => options,
            Err(error) => return one(format!("error: {}", ErrorChain(&error))),
        };
        if let Some(why) = self.store_trouble() {
            return one(format!("error: no new schedules: {why}"));
        }
        if let Err(live) = self.quota.room(who) {
            self.metrics.refused(Refusal::Quota);
            return one(format!(
                "error: quota reached: {} has {} and the limit is {} per player; stop one first",
                self.presence.name(who),
                plural(live, "live schedule"),
                self.quota.per_player()
            ));
        }
        if let Err(refusal) = self
            .fair_use
            .borrow_mut()
            .take_creation(who, from, Instant::now())
        {
            self.metrics.refused(Refusal::Creations);
            return (vec![refusal], After::Refused);
        }
        let made = create_named(
            self.rt.schedules(),
            who,
            (key.as_deref(), &options),
            |txn, options| {
                let args = vec![Value::Str(action.arg.clone())];
                match kind {
                    Kind::At(when) => txn.schedule_at(who, action.verb.name(), when, args, options),
                    Kind::Every(seconds) => {
                        txn.schedule_every(who, action.verb.name(), seconds, args, options)
                    }
                    Kind::Cron(expr, zone) => {
                        txn.schedule_cron(who, action.verb.name(), expr, zone, args, options)
                    }
                }
            },
        );
        let (id, new) = match made {
            Ok(made) => made,
            Err(error) => return one(format!("error: {}", ErrorChain(&error))),
        };
        if !new {
            let name = key.unwrap_or_default();
            return one(format!(
                "ok: schedule #{} is already {name}: nothing created",
                id.get()
            ));
        }
        self.quota.count(id, who, matches!(kind, Kind::At(_)));
        let _ = self.handle.wake(); // an idle runtime re-arms its schedules wake now
        one(match key {
            Some(name) => format!("ok: schedule #{} {what} as {name}", id.get()),
            None => format!("ok: schedule #{} {what}", id.get()),
        })
    }

    /// `stop`: one wording for a schedule that is not there and one that is not the player's,
    /// so ids cannot be probed; a wizard is told which (docs/serve.md §4.7).
    fn stop(&self, who: ObjId, id: ScheduleId) -> String {
        let mut txn = self.rt.schedules().begin(who);
        let info = txn.schedule_info(id);
        let mine = info
            .as_ref()
            .is_ok_and(|info| info.owner == who || self.presence.is_wizard(who));
        if !mine {
            return self.not_found(who, id, info.err());
        }
        let info = info.expect("checked above");
        match txn
            .schedule_stop(id)
            .and_then(|stopped| txn.commit().map(|()| stopped))
        {
            Ok(true) => {
                self.quota.forget(info.owner, id);
                format!("ok: stopped #{}", id.get())
            }
            // A one-shot that has fired, or a retired schedule: its record is discarded.
            Ok(false) => format!(
                "ok: #{} had already {}; its record is removed",
                id.get(),
                if info.kind == ScheduleKind::At && info.run_count > 0 {
                    "fired"
                } else {
                    "ended"
                }
            ),
            Err(error) => format!("error: {}", ErrorChain(&error)),
        }
    }

    /// The reply for a schedule `who` may not see: the same words whether it is missing or
    /// another's, unless `who` is a wizard (who may see every schedule, so only a missing one
    /// comes here).
    fn not_found(&self, who: ObjId, id: ScheduleId, error: Option<schedules::Error>) -> String {
        match error {
            Some(error) if self.presence.is_wizard(who) && error.code() != "E_PERM" => {
                format!("error: there is no schedule #{} ({error})", id.get())
            }
            _ if self.presence.is_wizard(who) => {
                format!("error: there is no schedule #{}", id.get())
            }
            _ => format!("error: you have no schedule #{}", id.get()),
        }
    }

    /// Whether `who` may see schedule `id` (theirs, or any for a wizard); if not, the reply
    /// that does not tell a missing schedule from another's (docs/serve.md §4.7).
    fn visible(&self, who: ObjId, id: ScheduleId) -> Result<(), String> {
        match self.rt.schedules().begin(who).schedule_info(id) {
            Ok(info) if info.owner == who || self.presence.is_wizard(who) => Ok(()),
            Ok(_) => Err(self.not_found(who, id, None)),
            Err(error) => Err(self.not_found(who, id, Some(error))),
        }
    }

    /// `pause <id> [note]` (docs/serve.md §3.7): the engine's pause, with the player's
    /// permissions (docs/schedules.md §9.4).
    fn pause(&self, who: ObjId, id: ScheduleId, note: &str) -> String {
        if let Err(reply) = self.visible(who, id) {
            return reply;
        }
        match self.rt.schedules().pause(who, id, note) {
            Ok(true) => format!("ok: paused #{}", id.get()),
            Ok(false) => format!("ok: #{} was paused already", id.get()),
            Err(error) => format!("error: {}", ErrorChain(&error)),
        }
    }

    fn resume(&self, who: ObjId, id: ScheduleId) -> String {
        if let Err(reply) = self.visible(who, id) {
            return reply;
        }
        let resumed = self.rt.schedules().resume(who, id);
        let _ = self.handle.wake(); // its deadline is armed again
        match resumed {
            Ok(true) => format!("ok: resumed #{}", id.get()),
            Ok(false) => format!("ok: #{} was not paused", id.get()),
            Err(error) => format!("error: {}", ErrorChain(&error)),
        }
    }

    fn trigger(&self, who: ObjId, id: ScheduleId) -> String {
        if let Err(reply) = self.visible(who, id) {
            return reply;
        }
        let triggered = self.rt.schedules().trigger_now(who, id);
        let _ = self.handle.wake(); // the firing waits for the next tick
        match triggered {
            Ok(true) => format!("ok: #{} runs now", id.get()),
            Ok(false) => format!("ok: #{} is already about to run", id.get()),
            Err(error) => format!("error: {}", ErrorChain(&error)),
        }
    }

    /// `info`: the summary, then every field of the record on one line, `key=value` as `stats`
    /// prints them (docs/serve.md §4.8). One line, not one a field: a client polling `info`
    /// costs the server one more write, not forty.
    fn info(&self, who: ObjId, id: ScheduleId) -> Vec<String> {
        let info = self.rt.schedules().begin(who).schedule_info(id);
        let info = match info {
            Ok(info) if info.owner == who || self.presence.is_wizard(who) => info,
            Ok(_) => return vec![self.not_found(who, id, None)],
            Err(error) => return vec![self.not_found(who, id, Some(error))],
        };
        // Written into one line as it goes: formatting a string for each of the fifty fields,
        // and the fields into a map first, was most of what answering `info` cost the thread.
        let mut line = String::with_capacity(1024);
        let mut text = String::new();
        line.push(' ');
        for (key, value) in info.fields() {
            text.clear();
            let _ = write!(text, "{value}");
            let _ = write!(line, " {key}={}", shown(&text));
        }
        vec![format!("ok: {}", self.describe(&info)), line]
    }

    fn describe(&self, info: &ScheduleInfo) -> String {
        let now = self.rt.schedules().now_unix_seconds();
        let args: Vec<String> = info.args.iter().map(ToString::to_string).collect();
        let when = match info.kind {
            ScheduleKind::Every => format!("every {} s", info.interval),
            ScheduleKind::At => "once".to_owned(),
            // The expression and zone were checked at creation; shown escaped all the same, as
            // everything a user typed is (docs/serve.md §11).
            ScheduleKind::Cron => info.calendar.as_ref().map_or_else(
                || "cron".to_owned(),
                |c| format!("cron \"{}\" {}", shown(&c.expr), shown(&c.zone)),
            ),
        };
        let next = if let Some(pause) = &info.pause {
            // The engine refuses control characters in a note (docs/schedules.md §9.5); bidi
            // controls may still be there, and a wizard reads another's note (docs/serve.md §11).
            format!(
                "paused by {}: {}",
                self.presence.name(pause.by),
                shown(&pause.note)
            )
        } else if info.next_run > 0.0 {
            // A player's zone is not known to the server: the date is UTC (docs/serve.md §4.8).
            format!(
                "next {}",
                crate::when::Times::chosen(true, false).at(info.next_run, now)
            )
        } else {
            "no next run".to_owned()
        };
        let named = info
            .key
            .as_ref()
            .map_or_else(String::new, |key| format!(" as {key}"));
        format!(
            "#{}{named} {when} {} {} owner {} runs {} faults {} {next}",
            info.id.get(),
            info.verb,
            shown(&args.join(" ")),
            self.presence.name(info.owner),
            info.run_count,
            info.fault_count
        )
    }

    fn listing(&self, who: ObjId) -> Vec<String> {
        let txn = self.rt.schedules().begin(who);
        let ids = match txn.schedules(None) {
            Ok(ids) => ids,
            Err(error) => return vec![format!("error: {error}")],
        };
        let mut lines = vec![format!("ok: {}", plural(ids.len(), "live schedule"))];
        for id in ids.iter().take(LISTING_CAP) {
            if let Ok(info) = txn.schedule_info(*id) {
                lines.push(format!("  {}", self.describe(&info)));
            }
        }
        if ids.len() > LISTING_CAP {
            lines.push(format!("  ... and {} more", ids.len() - LISTING_CAP));
        }
        lines
    }

    /// The wizard's view of the server: frame step times since the last `stats`, firings,
    /// schedules, connections.
    fn stats(&self) -> String {
        let frames = self.frames.take_summary();
        let rt = self.rt.stats();
        format!(
            "ok: frames_run={} step_p50_us={} step_p99_us={} step_max_us={} overruns={} \
             step_cpu_p50_us={} step_cpu_p99_us={} step_cpu_max_us={} cpu_overruns={} \
             firings_window={} firings={} live={} online={} commands={} says_dropped={}",
            frames.count,
            frames.wall.p50,
            frames.wall.p99,
            frames.wall.max,
            frames.wall.overruns,
            frames.cpu.p50,
            frames.cpu.p99,
            frames.cpu.max,
            frames.cpu.overruns,
            rt.firings_started - self.firings_reported.replace(rt.firings_started),
            rt.firings_started,
            rt.schedules_live,
            self.presence.online_count(),
            self.commands_handled.get(),
            self.fair_use.borrow_mut().take_dropped()
        )
    }
}

/// When a new schedule fires.
#[derive(Clone, Copy)]
enum Kind<'a> {
    At(f64),
    Every(f64),
    /// A cron expression and an IANA zone (docs/serve.md §3.8).
    Cron(&'a str, &'a str),
}

/// `n` and a noun, the noun plural unless `n` is one: `1 live schedule`, `2 live schedules`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
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

/// The policies a player may set with words before a schedule's verb (docs/serve.md §3.9): the
/// catch-up, overlap and fault policies of docs/schedules.md §4 and §16. The engine's other
/// options (limits, persistence, who the firing runs as) stay the server's.
const PLAYER_POLICIES: [&str; 6] = [
    "catchup",
    "catchup_window",
    "overlap",
    "max_faults",
    "on_max_faults",
    "remaining_runs",
];

/// The options the policy words ask for, read by the engine's own options map
/// (`Options::from_map`), so a bad value is refused with the engine's words: the value and the
/// rule. A number is a number; any other value is a word.
fn policy_options(words: &[PolicyWord]) -> Result<Options, tickstep::schedules::Error> {
    let mut pairs = Vec::with_capacity(words.len());
    for word in words {
        if !PLAYER_POLICIES.contains(&word.name.as_str()) {
            return Err(tickstep::schedules::Error::InvalidArg {
                value: shown(&word.name).into_owned(),
                rule: format!(
                    "a policy word is one of {} (docs/serve.md §3.9)",
                    PLAYER_POLICIES.join(", ")
                ),
            });
        }
        let value = if let Ok(n) = word.value.parse::<i64>() {
            Value::Int(n)
        } else if let Ok(x) = word.value.parse::<f64>() {
            Value::Float(x)
        } else {
            Value::from(word.value.as_str())
        };
        pairs.push((Value::from(word.name.as_str()), value));
    }
    Options::from_map(&Value::Map(pairs))
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
