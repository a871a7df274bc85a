//! The schedule commands (docs/serve.md §4): `remind`, `every`, `at`, `cron`, `stop`, `info`,
//! `pause`, `resume`, `trigger` and `schedules`, each on the engine with the player's
//! permissions, and the quota they are counted against. One owned part of the
//! [`Server`](super::server::Server) (docs/serve.md §4.10); names and wizards are read from its
//! [`Presence`].
//!
//! On the server's one thread: plain `RefCell` state, never borrowed across an await.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;

use tickstep::kernel::ErrorChain;
use tickstep::schedules::{self, ObjId, Options, ScheduleId, ScheduleInfo, ScheduleKind, Value};
use tickstep::{Runtime, RuntimeHandle};
use tickstep_host::shown;

use crate::named::create_named;

use super::line_protocol::{Action, PolicyWord};
use super::metrics::{Refusal, ServeMetrics};
use super::presence::Presence;
use super::quota::Quota;

/// The most schedules `schedules` lists in one reply.
const LISTING_CAP: usize = 50;

/// The schedule commands' state: the engine they act on, the quota, and whether the store can
/// still be trusted.
pub(crate) struct ScheduleCommands {
    rt: Rc<Runtime>,
    handle: RuntimeHandle,
    /// Live schedules per player, against the quota (docs/serve.md §4.3).
    quota: Quota,
    /// Why the store can no longer be trusted, once the watch has seen it go (docs/serve.md §12).
    store_lost: RefCell<Option<String>>,
    metrics: Rc<ServeMetrics>,
}

/// When a new schedule fires.
#[derive(Clone, Copy)]
pub(crate) enum Kind<'a> {
    At(f64),
    Every(f64),
    /// A cron expression and an IANA zone (docs/serve.md §3.8).
    Cron(&'a str, &'a str),
}

impl ScheduleCommands {
    /// The commands on `rt`'s engine, `per_player` live schedules allowed each, counting those
    /// the store brought back (as `root` sees them: all of them).
    pub(crate) fn new(
        rt: Rc<Runtime>,
        handle: RuntimeHandle,
        per_player: usize,
        root: ObjId,
        metrics: Rc<ServeMetrics>,
    ) -> ScheduleCommands {
        let quota = Quota::new(per_player);
        let txn = rt.schedules().begin(root);
        let ids = txn.schedules(None).unwrap_or_default();
        for id in ids {
            if let Ok(info) = txn.schedule_info(id) {
                quota.count(id, info.owner, info.kind == ScheduleKind::At);
            }
        }
        drop(txn);
        ScheduleCommands {
            rt,
            handle,
            quota,
            store_lost: RefCell::new(None),
            metrics,
        }
    }

    /// A schedule fired: a one-shot's firing ends it in the quota.
    pub(crate) fn fired(&self, owner: ObjId, id: ScheduleId) {
        self.quota.fired(owner, id);
    }

    /// Records why the store is lost; false when it was already (docs/serve.md §12.1).
    pub(crate) fn lose_store(&self, why: &str) -> bool {
        let mut lost = self.store_lost.borrow_mut();
        if lost.is_some() {
            return false;
        }
        *lost = Some(why.to_owned());
        true
    }

    /// Why the store cannot be trusted, if the watch found it so.
    pub(crate) fn store_trouble(&self) -> Option<String> {
        self.store_lost.borrow().clone()
    }

    /// The checks a new schedule passes before any rate is taken: its policy words (a misspelt
    /// one costs the player nothing), the store, the quota. Its options, or the refusal.
    pub(crate) fn admit(
        &self,
        who: ObjId,
        policies: &[PolicyWord],
        presence: &Presence,
    ) -> Result<Options, String> {
        let options =
            policy_options(policies).map_err(|error| format!("error: {}", ErrorChain(&error)))?;
        if let Some(why) = self.store_trouble() {
            return Err(format!("error: no new schedules: {why}"));
        }
        if let Err(live) = self.quota.room(who) {
            self.metrics.refused(Refusal::Quota);
            return Err(format!(
                "error: quota reached: {} has {} and the limit is {} per player; stop one first",
                presence.name(who),
                plural(live, "live schedule"),
                self.quota.per_player()
            ));
        }
        Ok(options)
    }

    /// Makes the schedule [`admit`](Self::admit) let through; the reply.
    pub(crate) fn create(
        &self,
        who: ObjId,
        kind: Kind<'_>,
        (action, key, options): (&Action, Option<String>, &Options),
        what: &str,
    ) -> String {
        let made = create_named(
            self.rt.schedules(),
            who,
            (key.as_deref(), options),
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
            Err(error) => return format!("error: {}", ErrorChain(&error)),
        };
        if !new {
            let name = key.unwrap_or_default();
            return format!(
                "ok: schedule #{} is already {name}: nothing created",
                id.get()
            );
        }
        self.quota.count(id, who, matches!(kind, Kind::At(_)));
        let _ = self.handle.wake(); // an idle runtime re-arms its schedules wake now
        match key {
            Some(name) => format!("ok: schedule #{} {what} as {name}", id.get()),
            None => format!("ok: schedule #{} {what}", id.get()),
        }
    }

    /// `stop`: one wording for a schedule that is not there and one that is not the player's,
    /// so ids cannot be probed; a wizard is told which (docs/serve.md §4.7).
    pub(crate) fn stop(&self, who: ObjId, id: ScheduleId, presence: &Presence) -> String {
        let mut txn = self.rt.schedules().begin(who);
        let info = txn.schedule_info(id);
        let mine = info
            .as_ref()
            .is_ok_and(|info| info.owner == who || presence.is_wizard(who));
        if !mine {
            return not_found(who, id, info.err(), presence);
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

    /// Whether `who` may see schedule `id` (theirs, or any for a wizard); if not, the reply
    /// that does not tell a missing schedule from another's (docs/serve.md §4.7).
    fn visible(&self, who: ObjId, id: ScheduleId, presence: &Presence) -> Result<(), String> {
        match self.rt.schedules().begin(who).schedule_info(id) {
            Ok(info) if info.owner == who || presence.is_wizard(who) => Ok(()),
            Ok(_) => Err(not_found(who, id, None, presence)),
            Err(error) => Err(not_found(who, id, Some(error), presence)),
        }
    }

    /// `pause <id> [note]` (docs/serve.md §3.7): the engine's pause, with the player's
    /// permissions (docs/schedules.md §9.4).
    pub(crate) fn pause(
        &self,
        who: ObjId,
        id: ScheduleId,
        note: &str,
        presence: &Presence,
    ) -> String {
        if let Err(reply) = self.visible(who, id, presence) {
            return reply;
        }
        match self.rt.schedules().pause(who, id, note) {
            Ok(true) => format!("ok: paused #{}", id.get()),
            Ok(false) => format!("ok: #{} was paused already", id.get()),
            Err(error) => format!("error: {}", ErrorChain(&error)),
        }
    }

    pub(crate) fn resume(&self, who: ObjId, id: ScheduleId, presence: &Presence) -> String {
        if let Err(reply) = self.visible(who, id, presence) {
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

    pub(crate) fn trigger(&self, who: ObjId, id: ScheduleId, presence: &Presence) -> String {
        if let Err(reply) = self.visible(who, id, presence) {
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
    pub(crate) fn info(&self, who: ObjId, id: ScheduleId, presence: &Presence) -> Vec<String> {
        let info = self.rt.schedules().begin(who).schedule_info(id);
        let info = match info {
            Ok(info) if info.owner == who || presence.is_wizard(who) => info,
            Ok(_) => return vec![not_found(who, id, None, presence)],
            Err(error) => return vec![not_found(who, id, Some(error), presence)],
        };
        // Written into one line as it goes: formatting a string for each of the fifty fields,
        // and the fields into a map first, was most of what answering `info` cost the thread.
        // Each value is written in place and put back escaped only when it needs it (a player's
        // argument, a note, a fault's text); the line has room for a recurring schedule's whole
        // record with a few records of history, so it is allocated once.
        let mut line = String::with_capacity(2048);
        line.push(' ');
        for (key, value) in info.fields() {
            line.push(' ');
            line.push_str(key);
            line.push('=');
            let start = line.len();
            let _ = write!(line, "{value}");
            if let Cow::Owned(escaped) = shown(&line[start..]) {
                line.truncate(start);
                line.push_str(&escaped);
            }
        }
        vec![format!("ok: {}", self.describe(&info, presence)), line]
    }

    fn describe(&self, info: &ScheduleInfo, presence: &Presence) -> String {
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
                presence.name(pause.by),
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
            presence.name(info.owner),
            info.run_count,
            info.fault_count
        )
    }

    /// `schedules`: the count, then at most [`LISTING_CAP`] of them described.
    pub(crate) fn listing(&self, who: ObjId, presence: &Presence) -> Vec<String> {
        let txn = self.rt.schedules().begin(who);
        let ids = match txn.schedules(None) {
            Ok(ids) => ids,
            Err(error) => return vec![format!("error: {error}")],
        };
        let mut lines = vec![format!("ok: {}", plural(ids.len(), "live schedule"))];
        for id in ids.iter().take(LISTING_CAP) {
            if let Ok(info) = txn.schedule_info(*id) {
                lines.push(format!("  {}", self.describe(&info, presence)));
            }
        }
        if ids.len() > LISTING_CAP {
            lines.push(format!("  ... and {} more", ids.len() - LISTING_CAP));
        }
        lines
    }
}

/// The reply for a schedule `who` may not see: the same words whether it is missing or
/// another's, unless `who` is a wizard (who may see every schedule, so only a missing one
/// comes here).
fn not_found(
    who: ObjId,
    id: ScheduleId,
    error: Option<schedules::Error>,
    presence: &Presence,
) -> String {
    match error {
        Some(error) if presence.is_wizard(who) && error.code() != "E_PERM" => {
            format!("error: there is no schedule #{} ({error})", id.get())
        }
        _ if presence.is_wizard(who) => {
            format!("error: there is no schedule #{}", id.get())
        }
        _ => format!("error: you have no schedule #{}", id.get()),
    }
}

/// `n` and a noun, the noun plural unless `n` is one: `1 live schedule`, `2 live schedules`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
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
fn policy_options(words: &[PolicyWord]) -> Result<Options, schedules::Error> {
    let mut pairs = Vec::with_capacity(words.len());
    for word in words {
        if !PLAYER_POLICIES.contains(&word.name.as_str()) {
            return Err(schedules::Error::InvalidArg {
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
