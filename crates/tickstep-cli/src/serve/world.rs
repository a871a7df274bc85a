//! The world a server hosts: who is online, the schedule verbs, and what each command does
//! (docs/serve.md §4).
//!
//! Everything here runs on the server's one thread — connection tasks between frames, verbs and
//! the bell inside frames — so it is plain `Rc`/`RefCell` state, never borrowed across an await.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::{Rc, Weak};

use tickstep::kernel::ErrorChain;
use tickstep::schedules::{self, ObjId, ScheduleId, ScheduleInfo, ScheduleKind, Value};
use tickstep::{Runtime, RuntimeHandle, VerbCall, VerbResult};
use tokio::sync::{Notify, mpsc};

use crate::named::create_named;

use super::bell::{Bell, Hall};
use super::frame_times::FrameTimes;
use super::protocol::{Action, HELP, Request, WorldVerb};
use super::registry::Registry;

/// How many lines may wait for a connection that does not read before it is dropped.
pub(crate) const OUTBOX_LINES: usize = 1_000;
/// The most schedules `schedules` lists in one reply.
const LISTING_CAP: usize = 50;

/// A connection's queue of lines to write.
pub(crate) type Outbox = mpsc::Sender<String>;

/// An online player's connection: its queue, and how to drop it when it stops reading.
struct Online {
    outbox: Outbox,
    kick: Rc<Notify>,
}

/// The schedules engine's view of the world: players are the only objects, each controls only
/// itself, one of them is the wizard, and schedules may run the world's three verbs.
pub(crate) struct Principals {
    pub(crate) wizard: ObjId,
    pub(crate) players: RefCell<HashSet<ObjId>>,
}

/// [`Principals`] as the engine's host world.
pub(crate) struct ServeWorld(pub(crate) Rc<Principals>);

impl schedules::World for ServeWorld {
    fn valid(&self, obj: ObjId) -> bool {
        self.0.players.borrow().contains(&obj)
    }
    fn is_wizard(&self, who: ObjId) -> bool {
        who == self.0.wizard
    }
    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        who == obj
    }
    fn verb_callable(&self, _perms: ObjId, _target: ObjId, verb: &str) -> bool {
        WorldVerb::ALL.iter().any(|v| v.name() == verb)
    }
}

/// What a command asks of the connection after its reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum After {
    Continue,
    Quit,
    Shutdown,
}

/// The server's state.
pub(crate) struct Server {
    pub(crate) rt: Rc<Runtime>,
    pub(crate) handle: RuntimeHandle,
    registry: Registry,
    principals: Rc<Principals>,
    names: RefCell<HashMap<ObjId, String>>,
    online: RefCell<HashMap<ObjId, Online>>,
    quota: usize,
    /// Live schedules per owner (the quota's count), kept as schedules are made, stopped, fired.
    live: RefCell<HashMap<ObjId, usize>>,
    /// One-shot schedules not yet fired, and their owners (a firing ends one).
    one_shots: RefCell<HashMap<ScheduleId, ObjId>>,
    pub(crate) bell: Bell,
    pub(crate) commands_handled: Cell<u64>,
    pub(crate) frames: FrameTimes,
    /// Firings started as of the last `stats`.
    firings_reported: Cell<u64>,
}

impl Server {
    /// Wires the world into a runtime whose engine already holds the stored schedules.
    pub(crate) fn new(
        rt: Rc<Runtime>,
        handle: RuntimeHandle,
        registry: Registry,
        players: Vec<(ObjId, String)>,
        principals: Rc<Principals>,
        quota: usize,
    ) -> Rc<Server> {
        let names = players.into_iter().collect();
        let bell = Bell::new(&rt);
        let server = Rc::new(Server {
            rt,
            handle,
            registry,
            principals,
            names: RefCell::new(names),
            online: RefCell::new(HashMap::new()),
            quota,
            live: RefCell::new(HashMap::new()),
            one_shots: RefCell::new(HashMap::new()),
            bell,
            commands_handled: Cell::new(0),
            frames: FrameTimes::default(),
            firings_reported: Cell::new(0),
        });
        server.count_stored_schedules();
        server.register_verbs();
        server
    }

    /// The quota's counts, from the schedules the store brought back.
    fn count_stored_schedules(&self) {
        let txn = self.rt.schedules().begin(self.principals.wizard);
        let ids = txn.schedules(None).unwrap_or_default();
        let (mut live, mut one_shots) = (self.live.borrow_mut(), self.one_shots.borrow_mut());
        for id in ids {
            if let Ok(info) = txn.schedule_info(id) {
                *live.entry(info.owner).or_default() += 1;
                if info.kind == ScheduleKind::At {
                    one_shots.insert(id, info.owner);
                }
            }
        }
    }

    fn register_verbs(self: &Rc<Self>) {
        for verb in WorldVerb::ALL {
            let server = Rc::downgrade(self);
            self.rt
                .verb(verb.name(), move |call| fire(&server, verb, call));
        }
    }

    pub(crate) fn name(&self, who: ObjId) -> String {
        self.names
            .borrow()
            .get(&who)
            .cloned()
            .unwrap_or_else(|| format!("#{}", who.0))
    }

    /// The player with this name, if it ever logged in (or is the wizard).
    pub(crate) fn player_named(&self, name: &str) -> Option<ObjId> {
        let names = self.names.borrow();
        names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(id, _)| *id)
    }

    /// How many players are connected to this server.
    pub(crate) fn online_count(&self) -> usize {
        self.online.borrow().len()
    }

    /// The wizard, whose view of the schedules (all of them) the dashboard shows.
    pub(crate) fn wizard(&self) -> ObjId {
        self.principals.wizard
    }

    pub(crate) fn is_wizard(&self, who: ObjId) -> bool {
        who == self.principals.wizard
    }

    /// Logs `name` in: its id, and its mail. Refused when that name is already connected to
    /// this server.
    pub(crate) async fn login(
        &self,
        name: &str,
        outbox: Outbox,
        kick: Rc<Notify>,
    ) -> Result<(ObjId, Vec<String>), String> {
        let who = self
            .registry
            .id_for(name)
            .await
            .map_err(|e| ErrorChain(&e).to_string())?;
        if self.online.borrow().contains_key(&who) {
            return Err(format!("{name} is already connected"));
        }
        self.add_player(who, name.to_owned());
        self.online
            .borrow_mut()
            .insert(who, Online { outbox, kick });
        let mail = self
            .registry
            .take_mail(who)
            .await
            .map_err(|e| ErrorChain(&e).to_string())?;
        Ok((who, mail))
    }

    /// A player the world knows from now on (a login here, or a registration another server
    /// node announced: docs/serve.md §6.2).
    pub(crate) fn add_player(&self, who: ObjId, name: String) {
        self.names.borrow_mut().insert(who, name);
        self.principals.players.borrow_mut().insert(who);
    }

    /// Shows `who` the mail another server node wrote for them, if they are connected here
    /// (docs/serve.md §6.3); otherwise it waits in the mailbox for their login.
    pub(crate) async fn deliver_mail(&self, who: ObjId) {
        if !self.online.borrow().contains_key(&who) {
            return;
        }
        match self.registry.take_mail(who).await {
            Ok(mail) => {
                for line in mail {
                    if self.online.borrow().contains_key(&who) {
                        self.tell(who, format!("[mail] {line}"));
                    } else {
                        self.registry.post(who, line); // they left meanwhile: back it goes
                    }
                }
            }
            Err(error) => eprintln!(
                "tickstep serve: mail for #{} not read yet: {}",
                who.0,
                ErrorChain(&error)
            ),
        }
    }

    /// Writes the mail still queued, at a clean stop.
    pub(crate) async fn close(&self) {
        if let Err(error) = self.registry.close().await {
            eprintln!(
                "tickstep serve: undelivered mail lost: {}",
                ErrorChain(&error)
            );
        }
    }

    pub(crate) fn logout(&self, who: ObjId) {
        self.online.borrow_mut().remove(&who);
    }

    /// Sends `line` to `who` now, or to their mailbox when they are offline. A connection whose
    /// outbox is full (it stopped reading) loses the line and is disconnected by its task.
    pub(crate) fn tell(&self, who: ObjId, line: String) {
        let outbox = self
            .online
            .borrow()
            .get(&who)
            .map(|o| (o.outbox.clone(), Rc::clone(&o.kick)));
        match outbox {
            Some((outbox, kick)) => {
                if outbox.try_send(line).is_err() {
                    self.logout(who);
                    kick.notify_one(); // its session ends and closes the connection
                }
            }
            // Written between frames, in one write (`Server::between_frames`).
            None => self.registry.post(who, line),
        }
    }

    /// What the server does after each frame, outside its budget: write the mail the frame's
    /// firings posted, in one write: a transaction of the file registry, one statement on a
    /// database (docs/serve.md §4.6).
    pub(crate) fn between_frames(&self) {
        if let Err(error) = self.registry.flush_mail() {
            eprintln!(
                "tickstep serve: mail not written yet (kept for the next frame): {}",
                ErrorChain(&error)
            );
        }
    }

    /// Sends `line` to everyone connected.
    pub(crate) fn broadcast(&self, line: &str) {
        let online: Vec<ObjId> = self.online.borrow().keys().copied().collect();
        for who in online {
            self.tell(who, line.to_owned());
        }
    }

    /// Runs one command of `who`, returning the reply lines.
    pub(crate) fn execute(self: &Rc<Self>, who: ObjId, request: Request) -> (Vec<String>, After) {
        self.commands_handled.set(self.commands_handled.get() + 1);
        let one = |line: String| (vec![line], After::Continue);
        match request {
            Request::Remind { seconds, text } => {
                let when = self.rt.schedules().now_unix_seconds() + seconds;
                let action = Action {
                    verb: WorldVerb::Tell,
                    arg: text,
                };
                one(self.create(
                    who,
                    Kind::At(when),
                    &action,
                    None,
                    &format!("reminds you in {seconds} s"),
                ))
            }
            Request::Every {
                seconds,
                action,
                key,
            } => one(self.create(
                who,
                Kind::Every(seconds),
                &action,
                key,
                &format!("runs {} every {seconds} s", action.verb.name()),
            )),
            Request::At {
                unix_seconds,
                action,
                key,
            } => one(self.create(
                who,
                Kind::At(unix_seconds),
                &action,
                key,
                &format!("runs {} at {unix_seconds}", action.verb.name()),
            )),
            Request::Stop(id) => one(self.stop(who, ScheduleId::from_raw(id))),
            Request::Info(id) => one(self.info(who, ScheduleId::from_raw(id))),
            Request::Pause { id, note } => one(self.pause(who, ScheduleId::from_raw(id), &note)),
            Request::Resume(id) => one(self.resume(who, ScheduleId::from_raw(id))),
            Request::Trigger(id) => one(self.trigger(who, ScheduleId::from_raw(id))),
            Request::Schedules => (self.listing(who), After::Continue),
            Request::Who => one(self.who()),
            Request::Say(text) => {
                self.broadcast(&format!("[say] {} says: {text}", self.name(who)));
                one("ok: said".to_owned())
            }
            Request::Ring(priority) => one(self.bell.ring(self, who, priority, None)),
            Request::Stats if self.is_wizard(who) => one(self.stats()),
            Request::Stats => one("error: only the wizard may read the server's stats".to_owned()),
            Request::Help => (HELP.lines().map(str::to_owned).collect(), After::Continue),
            Request::Quit => (vec!["ok: bye".to_owned()], After::Quit),
            Request::Shutdown if self.is_wizard(who) => {
                (vec!["ok: shutting down".to_owned()], After::Shutdown)
            }
            Request::Shutdown => one("error: only the wizard may shut the server down".to_owned()),
        }
    }

    fn create(
        &self,
        who: ObjId,
        kind: Kind,
        action: &Action,
        key: Option<String>,
        what: &str,
    ) -> String {
        let live = self.live.borrow().get(&who).copied().unwrap_or(0);
        if live >= self.quota {
            return format!(
                "error: quota reached: {} has {live} live schedules and the limit is {} per \
                 player; stop one first",
                self.name(who),
                self.quota
            );
        }
        let made = create_named(self.rt.schedules(), who, key.as_deref(), |txn, options| {
            let args = vec![Value::Str(action.arg.clone())];
            match kind {
                Kind::At(when) => txn.schedule_at(who, action.verb.name(), when, args, options),
                Kind::Every(seconds) => {
                    txn.schedule_every(who, action.verb.name(), seconds, args, options)
                }
            }
        });
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
        *self.live.borrow_mut().entry(who).or_default() += 1;
        if matches!(kind, Kind::At(_)) {
            self.one_shots.borrow_mut().insert(id, who);
        }
        let _ = self.handle.wake(); // an idle runtime re-arms its schedules wake now
        match key {
            Some(name) => format!("ok: schedule #{} {what} as {name}", id.get()),
            None => format!("ok: schedule #{} {what}", id.get()),
        }
    }

    fn stop(&self, who: ObjId, id: ScheduleId) -> String {
        let mut txn = self.rt.schedules().begin(who);
        let owner = txn.schedule_info(id).map(|info| info.owner);
        match txn
            .schedule_stop(id)
            .and_then(|stopped| txn.commit().map(|()| stopped))
        {
            Ok(true) => {
                if let Ok(owner) = owner {
                    self.forget(owner, id);
                }
                format!("ok: stopped #{}", id.get())
            }
            Ok(false) => format!("error: #{} is not a live schedule", id.get()),
            Err(error) => refusal(&error, "stop", id),
        }
    }

    fn forget(&self, owner: ObjId, id: ScheduleId) {
        self.one_shots.borrow_mut().remove(&id);
        if let Some(count) = self.live.borrow_mut().get_mut(&owner) {
            *count = count.saturating_sub(1);
        }
    }

    /// `pause <id> [note]` (docs/serve.md §3.7): the engine's pause, with the player's
    /// permissions (docs/schedules.md §9.4).
    fn pause(&self, who: ObjId, id: ScheduleId, note: &str) -> String {
        match self.rt.schedules().pause(who, id, note) {
            Ok(true) => format!("ok: paused #{}", id.get()),
            Ok(false) => format!("ok: #{} was paused already", id.get()),
            Err(error) => refusal(&error, "pause", id),
        }
    }

    fn resume(&self, who: ObjId, id: ScheduleId) -> String {
        let resumed = self.rt.schedules().resume(who, id);
        let _ = self.handle.wake(); // its deadline is armed again
        match resumed {
            Ok(true) => format!("ok: resumed #{}", id.get()),
            Ok(false) => format!("ok: #{} was not paused", id.get()),
            Err(error) => refusal(&error, "resume", id),
        }
    }

    fn trigger(&self, who: ObjId, id: ScheduleId) -> String {
        let triggered = self.rt.schedules().trigger_now(who, id);
        let _ = self.handle.wake(); // the firing waits for the next tick
        match triggered {
            Ok(true) => format!("ok: #{} runs now", id.get()),
            Ok(false) => format!("ok: #{} is already about to run", id.get()),
            Err(error) => refusal(&error, "trigger", id),
        }
    }

    fn info(&self, who: ObjId, id: ScheduleId) -> String {
        match self.rt.schedules().begin(who).schedule_info(id) {
            Ok(info) => format!("ok: {}", self.describe(&info)),
            Err(error) => refusal(&error, "read", id),
        }
    }

    fn describe(&self, info: &ScheduleInfo) -> String {
        let now = self.rt.schedules().now_unix_seconds();
        let args: Vec<String> = info.args.iter().map(ToString::to_string).collect();
        let when = match info.kind {
            ScheduleKind::Every => format!("every {} s", info.interval),
            ScheduleKind::At => "once".to_owned(),
        };
        let next = if let Some(pause) = &info.pause {
            // The note holds no control character (docs/schedules.md §9.5).
            format!("paused by {}: {}", self.name(pause.by), pause.note)
        } else if info.next_run > 0.0 {
            format!("next in {:.1} s", (info.next_run - now).max(0.0))
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
            args.join(" "),
            self.name(info.owner),
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
        let mut lines = vec![format!("ok: {} live schedules", ids.len())];
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
             firings_window={} firings={} live={} online={} commands={}",
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
            self.online.borrow().len(),
            self.commands_handled.get()
        )
    }

    fn who(&self) -> String {
        let mut names: Vec<String> = self
            .online
            .borrow()
            .keys()
            .map(|&who| {
                let name = self.name(who);
                if self.is_wizard(who) {
                    format!("{name} (wizard)")
                } else {
                    name
                }
            })
            .collect();
        names.sort();
        format!("ok: {} online: {}", names.len(), names.join(", "))
    }
}

/// When a new schedule fires.
#[derive(Clone, Copy)]
enum Kind {
    At(f64),
    Every(f64),
}

/// A schedule error as a player reads it: a permission refusal says whose it is.
fn refusal(error: &schedules::Error, doing: &str, id: ScheduleId) -> String {
    if error.code() == "E_PERM" {
        format!(
            "error: permission denied: #{} is not yours to {doing} ({error})",
            id.get()
        )
    } else {
        format!("error: {}", ErrorChain(error))
    }
}

/// A schedule firing one of the world's verbs.
fn fire(server: &Weak<Server>, verb: WorldVerb, call: &VerbCall) -> VerbResult {
    let Some(server) = server.upgrade() else {
        return Err(Value::from("the server has stopped"));
    };
    let firing = call.firing();
    let (id, owner) = (firing.schedule, firing.authority);
    if server.one_shots.borrow().contains_key(&id) {
        server.forget(owner, id);
    }
    let arg = firing.args.first().and_then(Value::as_text).unwrap_or("");
    match verb {
        WorldVerb::Tell => server.tell(firing.player, format!("[#{}] {arg}", id.get())),
        WorldVerb::Say => {
            server.broadcast(&format!(
                "[#{}] {} says: {arg}",
                id.get(),
                server.name(owner)
            ));
        }
        WorldVerb::Ring => {
            let priority = arg.parse().unwrap_or(0);
            let reply = server.bell.ring(&server, owner, priority, Some(id));
            server.tell(owner, format!("[#{}] {reply}", id.get()));
        }
    }
    Ok(Value::Int(0))
}

/// The bell rings in the server: names, messages and the runtime it needs.
impl Hall for Server {
    fn name(&self, who: ObjId) -> String {
        Server::name(self, who)
    }
    fn tell(&self, who: ObjId, line: String) {
        Server::tell(self, who, line);
    }
    fn broadcast(&self, line: &str) {
        Server::broadcast(self, line);
    }
    fn runtime(&self) -> &Rc<Runtime> {
        &self.rt
    }
}
