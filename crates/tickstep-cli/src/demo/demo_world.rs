//! The demo's living world: three rooms with doors, a keeper, a lockdown, players arriving, and
//! four durable schedules — all on one [`Runtime`].
//!
//! * **Doors are mechanisms.** Each room's door is a command-layer `Mechanism` whose default
//!   command is the *keeper* (priority 0: holds the door open). A player waiting outside makes a
//!   trigger schedule that room's *usher* (priority 1: takes the door from the keeper, lets one
//!   player in, and hands the door back). The *lockdown* (priority 10, all three doors) comes from
//!   a trigger on the alarm: it interrupts keepers and ushers, shuts every door for three seconds,
//!   then the keepers' default commands come back. Ushers asked for during a lockdown lose their
//!   priority conflict and retry every cycle until it is over.
//! * **Players arrive** on a kernel timer (one every 0.7 s, round the rooms) and leave on another.
//! * **Durable schedules** (in the store; named, so the next run, or another demo on the same
//!   database, finds them by their key instead of creating them again: docs/schedules.md §5.13):
//!   `bell` rings every 2 s in the hall; `regenerate` integrates `elapsed` in the garden (half a
//!   point of vitality per real second); `lockup` is an adaptive one-shot on the vault that checks
//!   again in 1.5 s while players are inside and raises the alarm once it is empty; `flush` is the
//!   debounce recipe of docs/schedules.md §3.1 and §5.9 (non-persistent, re-armed one second
//!   out at every arrival).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::commands::{Command, EventKind, Mechanism, Trigger};
use tickstep::kernel::ErrorChain;
use tickstep::kernel::{Priority, TaskHandle};
use tickstep::schedules::{ObjId, Options, ScheduleId, ScheduleInfo, Schedules, Value, World};

use crate::named::create_named;

/// The demo's wizard: owner of every object and schedule.
pub(crate) const WIZARD: ObjId = ObjId(1);
pub(crate) const HALL: ObjId = ObjId(10);
pub(crate) const VAULT: ObjId = ObjId(11);
pub(crate) const GARDEN: ObjId = ObjId(12);

/// How long a lockdown keeps the doors shut.
const LOCKDOWN: Duration = Duration::from_secs(3);
/// How long an usher holds a door for one player.
const USHER: Duration = Duration::from_millis(300);
/// A player arrives this often.
const ARRIVALS: Duration = Duration::from_millis(700);
/// A player leaves this often.
const DEPARTURES: Duration = Duration::from_millis(1_100);
/// The lock-up checks again this many seconds later while the vault is occupied.
const LOCKUP_RECHECK: f64 = 1.5;
/// A fresh lock-up is armed this many seconds out when none is live.
const LOCKUP_DELAY: f64 = 5.0;
/// The most vitality regeneration reaches.
const MAX_VITALITY: f64 = 100.0;

/// The demo's object model for schedule permissions: the wizard owns four objects, and each
/// verb lives on the one object that has it.
pub(crate) struct DemoWorld;

impl DemoWorld {
    fn verb_on(target: ObjId) -> &'static [&'static str] {
        match target {
            HALL => &["ring"],
            VAULT => &["lockup", "flush"],
            GARDEN => &["regenerate"],
            _ => &[],
        }
    }
}

impl World for DemoWorld {
    fn valid(&self, obj: ObjId) -> bool {
        [WIZARD, HALL, VAULT, GARDEN].contains(&obj)
    }
    fn is_wizard(&self, who: ObjId) -> bool {
        who == WIZARD
    }
    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        who == obj || (who == WIZARD && self.valid(obj))
    }
    fn verb_callable(&self, _perms: ObjId, target: ObjId, verb: &str) -> bool {
        Self::verb_on(target).contains(&verb)
    }
}

/// One room and its door.
pub(crate) struct Room {
    pub(crate) name: &'static str,
    pub(crate) door: Mechanism,
    pub(crate) open: Rc<Cell<bool>>,
    pub(crate) inside: Rc<Cell<u32>>,
    pub(crate) waiting: Rc<Cell<u32>>,
}

/// What the status line and the live view read.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) bell_rings: Cell<u64>,
    pub(crate) vitality: Cell<f64>,
    pub(crate) lockdowns: Cell<u64>,
    pub(crate) keeper_interruptions: Cell<u64>,
    pub(crate) admitted: Cell<u64>,
    pub(crate) flushes: Cell<u64>,
    pub(crate) lockup_checks: Cell<u64>,
}

/// How a durable schedule was obtained at start-up.
pub(crate) enum Origin {
    /// Created by this run.
    Created,
    /// Found in the store, left by an earlier run (its info as found).
    Found(Box<ScheduleInfo>),
}

/// The world, wired into a runtime.
pub(crate) struct DemoWorldState {
    pub(crate) rooms: Rc<Vec<Room>>,
    pub(crate) tally: Rc<Tally>,
    pub(crate) alarm: Rc<Cell<bool>>,
    pub(crate) lockup: Cell<Option<ScheduleId>>,
    /// The durable schedules this run uses: (name, id, how it was obtained).
    pub(crate) schedules: Vec<(&'static str, ScheduleId, Origin)>,
    _timers: Vec<TaskHandle>,
}

impl DemoWorldState {
    /// Builds the world on `rt`: verbs, mechanisms, commands, triggers, timers, schedules.
    pub(crate) fn install(rt: &Runtime) -> Result<DemoWorldState, String> {
        let tally = Rc::new(Tally::default());
        let alarm = Rc::new(Cell::new(false));
        let commands = rt.commands();
        let rooms: Rc<Vec<Room>> = Rc::new(
            ["hall", "vault", "garden"]
                .into_iter()
                .map(|name| Room {
                    name,
                    door: Mechanism::new(commands, format!("{name} door")),
                    open: Rc::new(Cell::new(false)),
                    inside: Rc::new(Cell::new(0)),
                    waiting: Rc::new(Cell::new(0)),
                })
                .collect(),
        );
        let flush_id = Rc::new(Cell::new(None::<ScheduleId>));
        for room in rooms.iter() {
            let open = Rc::clone(&room.open);
            let keeper = room
                .door
                .run_repeatedly(move || open.set(true))
                .named(format!("{} keeper", room.name));
            room.door
                .set_default_command(&keeper)
                .expect("the keeper requires only its own door");
            let usher = usher(room, rt.schedules(), &tally, &flush_id);
            let waiting = Rc::clone(&room.waiting);
            Trigger::new(commands, move || waiting.get() > 0).retry_while_true(&usher);
        }
        let lockdown = lockdown(&rooms, &alarm);
        let raised = Rc::clone(&alarm);
        Trigger::new(commands, move || raised.get()).on_true(&lockdown);
        let counts = Rc::clone(&tally);
        commands.on_event(move |event| match &event.kind {
            EventKind::Interrupted { .. } if event.name.ends_with("keeper") => {
                counts
                    .keeper_interruptions
                    .set(counts.keeper_interruptions.get() + 1);
            }
            EventKind::Completed if &*event.name == "lockdown" => {
                counts.lockdowns.set(counts.lockdowns.get() + 1);
            }
            _ => {}
        });
        register_verbs(rt, &rooms, &tally, &alarm);
        let timers = people(rt, &rooms)?;
        let schedules = ensure_schedules(rt.schedules())?;
        let lockup = schedules
            .iter()
            .find(|(name, _, _)| *name == "lockup")
            .map(|(_, id, _)| *id);
        Ok(DemoWorldState {
            rooms,
            tally,
            alarm,
            lockup: Cell::new(lockup),
            schedules,
            _timers: timers,
        })
    }

    /// The "one driver per object" recipe: arms a new lock-up when the last one has retired.
    pub(crate) fn keep_lockup_armed(&self, engine: &Schedules) -> Result<(), String> {
        let txn = engine.begin(WIZARD);
        if self.lockup.get().is_some_and(|id| txn.schedule_valid(id)) || self.alarm.get() {
            return Ok(());
        }
        // Named: on a shared database another demo may have armed the next one already, and
        // the key gives its id back instead of arming a second (docs/schedules.md §5.13).
        let at = engine.now_unix_seconds() + LOCKUP_DELAY;
        let id = create_named(
            engine,
            WIZARD,
            (Some("lockup"), &Options::new()),
            |txn, options| txn.schedule_at(VAULT, "lockup", at, vec![], options),
        )
        .map_err(|e| ErrorChain(&e).to_string())?
        .0;
        self.lockup.set(Some(id));
        Ok(())
    }
}

/// The usher of one room: takes its door, lets one waiting player in, and (from inside the
/// command) re-arms the debounced guest-book flush.
fn usher(
    room: &Room,
    engine: &Schedules,
    tally: &Rc<Tally>,
    flush_id: &Rc<Cell<Option<ScheduleId>>>,
) -> Command {
    let (open, inside, waiting) = (
        Rc::clone(&room.open),
        Rc::clone(&room.inside),
        Rc::clone(&room.waiting),
    );
    let (engine, tally, flush_id) = (engine.clone(), Rc::clone(tally), Rc::clone(flush_id));
    room.door
        .run(move |co| {
            let (open, inside, waiting) = (open.clone(), inside.clone(), waiting.clone());
            let (engine, tally, flush_id) = (engine.clone(), tally.clone(), flush_id.clone());
            async move {
                open.set(true);
                co.wait(USHER).await;
                if waiting.get() > 0 {
                    waiting.set(waiting.get() - 1);
                    inside.set(inside.get() + 1);
                    tally.admitted.set(tally.admitted.get() + 1);
                    debounce_flush(&engine, &flush_id);
                }
            }
        })
        .with_priority(1)
        .named(format!("{} usher", room.name))
}

/// Debounce (docs/schedules.md §3.1, §5.9): stop the pending flush, arm a new one a second out,
/// not persisted.
fn debounce_flush(engine: &Schedules, flush_id: &Cell<Option<ScheduleId>>) {
    let mut txn = engine.begin(WIZARD);
    if let Some(id) = flush_id.get()
        && txn.schedule_valid(id)
    {
        let _stopped = txn.schedule_stop(id);
    }
    let at = engine.now_unix_seconds() + 1.0;
    let options = Options::new().persist(false).pass_elapsed(false);
    if let Ok(id) = txn.schedule_at(VAULT, "flush", at, vec![], options)
        && txn.commit().is_ok()
    {
        flush_id.set(Some(id));
    }
}

/// The lockdown: every door, priority 10, shut for [`LOCKDOWN`], then the alarm is cleared.
fn lockdown(rooms: &Rc<Vec<Room>>, alarm: &Rc<Cell<bool>>) -> Command {
    let mut builder = Command::requiring(&rooms[0].door);
    for room in &rooms[1..] {
        builder = builder.requiring(&room.door);
    }
    let (rooms, alarm) = (Rc::clone(rooms), Rc::clone(alarm));
    builder
        .executing(move |co| {
            let (rooms, alarm) = (rooms.clone(), alarm.clone());
            async move {
                for room in rooms.iter() {
                    room.open.set(false);
                }
                co.wait(LOCKDOWN).await;
                alarm.set(false);
            }
        })
        .with_priority(10)
        .named("lockdown")
}

fn register_verbs(rt: &Runtime, rooms: &Rc<Vec<Room>>, tally: &Rc<Tally>, alarm: &Rc<Cell<bool>>) {
    let t = Rc::clone(tally);
    rt.verb("ring", move |_call| {
        t.bell_rings.set(t.bell_rings.get() + 1);
        Ok(Value::Int(0))
    });
    let t = Rc::clone(tally);
    rt.verb("regenerate", move |call| {
        let gained = 0.5 * call.elapsed();
        t.vitality
            .set((t.vitality.get() + gained).min(MAX_VITALITY));
        Ok(Value::Int(0))
    });
    let (t, vault, raise) = (
        Rc::clone(tally),
        Rc::clone(&rooms[1].inside),
        Rc::clone(alarm),
    );
    rt.verb("lockup", move |_call| {
        t.lockup_checks.set(t.lockup_checks.get() + 1);
        if vault.get() > 0 {
            return Ok(Value::Float(LOCKUP_RECHECK)); // customers present: check again soon
        }
        raise.set(true); // lock the doors
        Ok(Value::Int(0)) // done: the one-shot retires "completed"
    });
    let t = Rc::clone(tally);
    rt.verb("flush", move |_call| {
        t.flushes.set(t.flushes.get() + 1);
        Ok(Value::Int(0))
    });
}

/// Players arrive round the rooms and leave the fullest room, on two kernel timers.
fn people(rt: &Runtime, rooms: &Rc<Vec<Room>>) -> Result<Vec<TaskHandle>, String> {
    let arrivals = Rc::new(Cell::new(0usize));
    let r = Rc::clone(rooms);
    let arrive = rt
        .scheduler()
        .with_origin("demo arrivals")
        .every(
            ARRIVALS,
            move || {
                let room = &r[arrivals.get() % r.len()];
                arrivals.set(arrivals.get() + 1);
                room.waiting.set(room.waiting.get() + 1);
            },
            Priority::Low,
        )
        .map_err(|e| ErrorChain(&e).to_string())?;
    let r = Rc::clone(rooms);
    let leave = rt
        .scheduler()
        .with_origin("demo departures")
        .every(
            DEPARTURES,
            move || {
                if let Some(room) = r.iter().max_by_key(|room| room.inside.get())
                    && room.inside.get() > 0
                {
                    room.inside.set(room.inside.get() - 1);
                }
            },
            Priority::Low,
        )
        .map_err(|e| ErrorChain(&e).to_string())?;
    Ok(vec![arrive, leave])
}

/// Finds this demo's persistent schedules from an earlier run, or creates them. Each is named
/// (its key), so a creation whose key already names it gets it back, creating nothing: from this
/// node's store, or from another demo's node on a shared database (docs/schedules.md §5.13,
/// §5.17).
fn ensure_schedules(engine: &Schedules) -> Result<Vec<(&'static str, ScheduleId, Origin)>, String> {
    let wanted: [(&'static str, ObjId, &'static str, Option<f64>); 3] = [
        ("bell", HALL, "ring", Some(2.0)),
        ("regenerate", GARDEN, "regenerate", Some(1.0)),
        ("lockup", VAULT, "lockup", None),
    ];
    let mut found = Vec::new();
    for (name, target, verb, every) in wanted {
        let at = engine.now_unix_seconds() + LOCKUP_DELAY;
        let (id, new) = create_named(
            engine,
            WIZARD,
            (Some(name), &Options::new()),
            |txn, options| match every {
                Some(seconds) => txn.schedule_every(target, verb, seconds, vec![], options),
                None => txn.schedule_at(target, verb, at, vec![], options),
            },
        )
        .map_err(|e| ErrorChain(&e).to_string())?;
        if new {
            found.push((name, id, Origin::Created));
        } else {
            let info = engine
                .begin(WIZARD)
                .schedule_info(id)
                .map_err(|e| ErrorChain(&e).to_string())?;
            found.push((name, id, Origin::Found(Box::new(info))));
        }
    }
    Ok(found)
}

/// A short description of a room for the status line: `hall[open 2 in, 1 waiting]`.
pub(crate) fn describe(room: &Room) -> String {
    format!(
        "{}[{} {} in{}]",
        room.name,
        if room.open.get() { "open" } else { "shut" },
        room.inside.get(),
        match room.waiting.get() {
            0 => String::new(),
            n => format!(", {n} waiting"),
        }
    )
}
