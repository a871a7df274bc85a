//! What tickstep publishes under `/tickstep/` each frame (docs/nt4.md §5).

use std::collections::HashMap;
use std::sync::Arc;

use tickstep_commands::{CommandInfo, CommandScheduler, Mechanism, Telemetry, Trigger};
use tickstep_kernel::Stats;

use crate::protobuf;
use crate::server::Nt4Server;
use crate::topics;
use crate::value::Value;
use crate::wpilog::{self, WpiLog};

/// Durable schedules' counts, for a host that has a schedule store (docs/nt4.md §5.1).
///
/// ```
/// let counts = tickstep_nt4::ScheduleCounts { live: 3, running: 1 };
/// assert_eq!(counts.live, 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleCounts {
    /// Schedules in the store that will fire again.
    pub live: u64,
    /// Schedule runs in progress.
    pub running: u64,
}

/// Publishes a command scheduler's state, once per frame, to an [`Nt4Server`] and/or a
/// [`WpiLog`]. Only values that changed since the last frame are handed on (docs/nt4.md §5.3).
///
/// ```
/// use tickstep_nt4::commands::{CommandInfo, CommandScheduler, Mechanism, Trigger};
/// use tickstep_nt4::kernel::clock::ManualClock;
/// use tickstep_nt4::{Limits, Nt4Server, SchedulerTelemetry, Value};
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let raise = arm.run(|co| async move { co.park().await; }).named("raise");
/// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Default::default()).unwrap();
/// let mut telemetry = SchedulerTelemetry::new(&scheduler);
/// telemetry.serve(&server).mechanism(&arm);
///
/// scheduler.schedule(&raise);
/// scheduler.run().unwrap();
/// telemetry.publish();
/// assert_eq!(server.get("/tickstep/mechanisms/arm"), Some(Value::String("raise".into())));
/// assert_eq!(server.get("/tickstep/scheduler/running"), Some(Value::StringArray(vec!["raise".into()])));
/// ```
pub struct SchedulerTelemetry {
    scheduler: CommandScheduler,
    server: Option<Nt4Server>,
    log: Option<WpiLog>,
    /// Each registered mechanism's slot, and its index by name (to find owners).
    mechanisms: Vec<usize>,
    mechanism_index: HashMap<String, usize>,
    triggers: Vec<(Trigger, usize)>,
    kernel: Option<Stats>,
    schedules: Option<ScheduleCounts>,
    /// One per topic: its name and the value last handed on. Fixed indices, so a frame
    /// compares values without hashing names (docs/nt4.md §5.3).
    slots: Vec<Slot>,
    /// The slots that changed this frame (reused every frame).
    changed: Vec<usize>,
    /// Per mechanism, the running command owning it this frame (reused every frame).
    owners: Vec<Option<usize>>,
    /// A mechanism was registered since the owners were last published.
    owners_stale: bool,
    /// The last frame's snapshot, to tell whether the scheduler message changed.
    last: Option<Telemetry>,
    /// The snapshot before it, overwritten by the next frame's (reused every frame).
    before_last: Option<Telemetry>,
    /// The scheduler message being encoded (swapped with the slot's when it changed).
    scratch: Vec<u8>,
    /// The message's encoder, with each command's fixed fields from the frame before.
    encoder: protobuf::SchedulerEncoder,
    schema_sent: bool,
}

/// One topic: its name, the value last handed on, and its ids at the server and in the log
/// (looked up once, then used every frame: docs/nt4.md §8.3).
struct Slot {
    topic: Arc<str>,
    last: Option<Value>,
    server: Link,
    log: Link,
}

/// A slot's id at the server or in the log.
#[derive(Clone, Copy)]
enum Link {
    /// Not looked up yet.
    Unknown,
    Id(u32),
    /// The name is taken there with another type: the value is not handed on.
    Refused,
}

impl Link {
    /// The id, looking it up with `find` the first time.
    fn resolve(&mut self, find: impl FnOnce() -> Option<u32>) -> Option<u32> {
        if let Link::Unknown = self {
            *self = find().map_or(Link::Refused, Link::Id);
        }
        match *self {
            Link::Id(id) => Some(id),
            _ => None,
        }
    }
}

impl Slot {
    fn new(topic: &str) -> Self {
        Self {
            topic: Arc::from(topic),
            last: None,
            server: Link::Unknown,
            log: Link::Unknown,
        }
    }
}

// The fixed slots, in the order of `FIXED`.
const SCHEDULER: usize = 0;
const RUNNING: usize = 1;
const RUNNING_IDS: usize = 2;
const RUNNING_PARENTS: usize = 3;
const QUEUED: usize = 4;
const LAST_RUN_MS: usize = 5;
const CYCLE: usize = 6;
const KERNEL_STEP_MS: usize = 7;
const KERNEL_BUDGET_MS: usize = 8;
const KERNEL_DEFERRED: usize = 9;
const SCHEDULES_LIVE: usize = 10;
const SCHEDULES_RUNNING: usize = 11;
const KERNEL_PENDING: usize = 12;
const ROBOT_ENABLED: usize = 13;
const ROBOT_MODE: usize = 14;
const FIXED: [&str; 15] = [
    topics::SCHEDULER,
    topics::RUNNING,
    topics::RUNNING_IDS,
    topics::RUNNING_PARENTS,
    topics::QUEUED,
    topics::LAST_RUN_MS,
    topics::CYCLE,
    topics::KERNEL_STEP_MS,
    topics::KERNEL_BUDGET_MS,
    topics::KERNEL_DEFERRED,
    topics::SCHEDULES_LIVE,
    topics::SCHEDULES_RUNNING,
    topics::KERNEL_PENDING,
    topics::ROBOT_ENABLED,
    topics::ROBOT_MODE,
];

impl std::fmt::Debug for SchedulerTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulerTelemetry")
            .field("mechanisms", &self.mechanisms.len())
            .field("triggers", &self.triggers.len())
            .finish_non_exhaustive()
    }
}

impl SchedulerTelemetry {
    /// Telemetry of `scheduler`, going nowhere until [`serve`](Self::serve) or
    /// [`log`](Self::log) is called.
    ///
    /// ```
    /// # use tickstep_nt4::commands::CommandScheduler;
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// let mut t = tickstep_nt4::SchedulerTelemetry::new(&CommandScheduler::new(ManualClock::new()));
    /// t.publish(); // nowhere to go: nothing happens
    /// ```
    pub fn new(scheduler: &CommandScheduler) -> Self {
        Self {
            scheduler: scheduler.clone(),
            server: None,
            log: None,
            mechanisms: Vec::new(),
            mechanism_index: HashMap::new(),
            triggers: Vec::new(),
            kernel: None,
            schedules: None,
            slots: FIXED.iter().map(|t| Slot::new(t)).collect(),
            changed: Vec::new(),
            owners: Vec::new(),
            owners_stale: false,
            last: None,
            before_last: None,
            scratch: Vec::new(),
            encoder: protobuf::SchedulerEncoder::default(),
            schema_sent: false,
        }
    }

    /// Publishes to `server`.
    ///
    /// ```
    /// # use tickstep_nt4::commands::CommandScheduler;
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// # use tickstep_nt4::{Nt4Server, SchedulerTelemetry};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Default::default()).unwrap();
    /// SchedulerTelemetry::new(&CommandScheduler::new(ManualClock::new())).serve(&server).publish();
    /// assert!(server.get("/tickstep/scheduler/cycle").is_some());
    /// ```
    pub fn serve(&mut self, server: &Nt4Server) -> &mut Self {
        self.server = Some(server.clone());
        self
    }

    /// Records to `log`.
    ///
    /// ```
    /// # use tickstep_nt4::commands::CommandScheduler;
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// # use tickstep_nt4::{LogConfig, SchedulerTelemetry, WpiLog};
    /// let dir = tempfile::tempdir().unwrap();
    /// let log = WpiLog::start(LogConfig::new(dir.path())).unwrap();
    /// SchedulerTelemetry::new(&CommandScheduler::new(ManualClock::new())).log(&log).publish();
    /// ```
    pub fn log(&mut self, log: &WpiLog) -> &mut Self {
        self.log = Some(log.clone());
        self
    }

    /// Shows `mechanism`'s owning command under `/tickstep/mechanisms/<name>`.
    ///
    /// ```
    /// # use tickstep_nt4::commands::{CommandScheduler, Mechanism};
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// # use tickstep_nt4::{Nt4Server, SchedulerTelemetry, Value};
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Default::default()).unwrap();
    /// SchedulerTelemetry::new(&scheduler).serve(&server).mechanism(&Mechanism::new(&scheduler, "arm")).publish();
    /// assert_eq!(server.get("/tickstep/mechanisms/arm"), Some(Value::String(String::new())));
    /// ```
    pub fn mechanism(&mut self, mechanism: &Mechanism) -> &mut Self {
        let slot = self.slot(&format!("{}{}", topics::MECHANISMS, mechanism.name()));
        self.mechanism_index
            .insert(mechanism.name().to_owned(), self.mechanisms.len());
        self.mechanisms.push(slot);
        self.owners_stale = true;
        self
    }

    /// Shows `trigger`'s state under `/tickstep/triggers/<name>`.
    ///
    /// ```
    /// # use tickstep_nt4::commands::{CommandScheduler, Trigger};
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// # use tickstep_nt4::{Nt4Server, SchedulerTelemetry, Value};
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Default::default()).unwrap();
    /// SchedulerTelemetry::new(&scheduler).serve(&server).trigger("always", &Trigger::new(&scheduler, || true)).publish();
    /// assert_eq!(server.get("/tickstep/triggers/always"), Some(Value::Boolean(true)));
    /// ```
    pub fn trigger(&mut self, name: &str, trigger: &Trigger) -> &mut Self {
        let slot = self.slot(&format!("{}{name}", topics::TRIGGERS));
        self.triggers.push((trigger.clone(), slot));
        self
    }

    /// The kernel statistics the next [`publish`](Self::publish) shows.
    ///
    /// ```
    /// # use tickstep_nt4::commands::CommandScheduler;
    /// # use tickstep_nt4::kernel::{clock::ManualClock, FrameScheduler, SchedulerConfig};
    /// let kernel = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let mut t = tickstep_nt4::SchedulerTelemetry::new(&CommandScheduler::new(ManualClock::new()));
    /// t.set_kernel_stats(&kernel.stats());
    /// ```
    pub fn set_kernel_stats(&mut self, stats: &Stats) -> &mut Self {
        self.kernel = Some(stats.clone());
        self
    }

    /// The durable schedules' counts the next [`publish`](Self::publish) shows.
    ///
    /// ```
    /// # use tickstep_nt4::commands::CommandScheduler;
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// # use tickstep_nt4::{ScheduleCounts, SchedulerTelemetry};
    /// let mut t = SchedulerTelemetry::new(&CommandScheduler::new(ManualClock::new()));
    /// t.set_schedule_counts(ScheduleCounts { live: 2, running: 0 });
    /// ```
    pub fn set_schedule_counts(&mut self, counts: ScheduleCounts) -> &mut Self {
        self.schedules = Some(counts);
        self
    }

    /// Publishes this frame's values: call it once per frame, after the scheduler's `run()`.
    /// Costs a scheduler snapshot, one comparison per topic, the protobuf encoding only when a
    /// command or a run time changed, and for the changed topics one server lock and one log
    /// batch in all (docs/nt4.md §5.3, §5.4, §8.3).
    ///
    /// ```
    /// # use tickstep_nt4::commands::CommandScheduler;
    /// # use tickstep_nt4::kernel::clock::ManualClock;
    /// # use tickstep_nt4::{Nt4Server, SchedulerTelemetry, Value};
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Default::default()).unwrap();
    /// let mut t = SchedulerTelemetry::new(&scheduler);
    /// t.serve(&server);
    /// scheduler.run().unwrap();
    /// t.publish();
    /// assert_eq!(server.get("/tickstep/scheduler/cycle"), Some(Value::Int(1)));
    /// ```
    pub fn publish(&mut self) {
        if self.server.is_none() && self.log.is_none() {
            return;
        }
        let timestamp = self.scheduler.now().as_nanos() / 1_000;
        self.publish_schema_once(timestamp);
        self.changed.clear();
        // This frame's snapshot overwrites the one before last in place (no allocation once it
        // has held as many commands as run: docs/commands.md §10.5); the last stays to compare.
        let mut t = self
            .before_last
            .take()
            .unwrap_or_else(|| self.scheduler.telemetry());
        self.scheduler.telemetry_into(&mut t);
        // The message is encoded only when a command or a run time changed (docs/nt4.md §8.3).
        if self
            .last
            .as_ref()
            .is_none_or(|last| !same_message(last, &t))
        {
            self.encode_scheduler(&t);
        }
        self.update_strings(RUNNING, t.running.iter().map(|c| c.name.as_str()));
        self.update_strings(QUEUED, t.queued.iter().map(|c| c.name.as_str()));
        let ids_changed = self.update_ints(RUNNING_IDS, t.running.iter().map(|c| int(c.id.get())));
        self.update_ints(
            RUNNING_PARENTS,
            t.running
                .iter()
                .map(|c| c.parent.map_or(0, |p| int(p.get()))),
        );
        self.update(
            LAST_RUN_MS,
            Value::Double(t.last_run_time.as_secs_f64() * 1e3),
        );
        self.update(CYCLE, Value::Int(int(t.cycle)));
        // The robot's state as the scheduler obeys it (docs/nt4.md §5.7).
        self.update(ROBOT_ENABLED, Value::Boolean(self.scheduler.is_enabled()));
        let mode = self.scheduler.opmode().map_or(-1, |m| i64::from(m.get()));
        self.update(ROBOT_MODE, Value::Int(mode));
        // An instance's requirements never change, so owners change only with the running ids.
        if ids_changed || self.owners_stale {
            self.owners_stale = false;
            self.publish_owners(&t.running);
        }
        for i in 0..self.triggers.len() {
            let (state, slot) = (self.triggers[i].0.get(), self.triggers[i].1);
            self.update(slot, Value::Boolean(state));
        }
        self.publish_host();
        self.hand_on(timestamp);
        self.before_last = self.last.replace(t);
    }

    /// Encodes the scheduler message into the scratch buffer and, when it differs from the
    /// last one, swaps it in (no copy, no allocation).
    fn encode_scheduler(&mut self, t: &Telemetry) {
        self.scratch.clear();
        self.encoder.encode(
            &mut self.scratch,
            &t.queued,
            &t.running,
            t.last_run_time.as_secs_f64() * 1e3,
        );
        match &mut self.slots[SCHEDULER].last {
            Some(Value::Raw(last, _)) if *last == self.scratch => return,
            Some(Value::Raw(last, _)) => std::mem::swap(last, &mut self.scratch),
            other => {
                *other = Some(Value::Raw(
                    self.scratch.clone(),
                    protobuf::SCHEDULER_TYPE.to_owned(),
                ));
            }
        }
        self.changed.push(SCHEDULER);
    }

    /// A mechanism's owner is the newest running command requiring it: children start after
    /// their parents, so the innermost command that uses it wins (docs/nt4.md §5.1).
    fn publish_owners(&mut self, running: &[CommandInfo]) {
        self.owners.clear();
        self.owners.resize(self.mechanisms.len(), None);
        for (i, c) in running.iter().enumerate() {
            for r in &c.requirements {
                if let Some(&m) = self.mechanism_index.get(r.as_str()) {
                    self.owners[m] = Some(i);
                }
            }
        }
        for m in 0..self.mechanisms.len() {
            let owner = self.owners[m].map_or("", |i| running[i].name.as_str());
            let slot = self.mechanisms[m];
            match &mut self.slots[slot].last {
                Some(Value::String(s)) if s == owner => continue,
                Some(Value::String(s)) => {
                    s.clear();
                    s.push_str(owner);
                }
                other => *other = Some(Value::String(owner.to_owned())),
            }
            self.changed.push(slot);
        }
    }

    /// The schema of the scheduler message, once (docs/nt4.md §5.2).
    fn publish_schema_once(&mut self, timestamp: u64) {
        if !self.schema_sent {
            self.schema_sent = true;
            let schema = Value::Raw(protobuf::schema(), protobuf::SCHEMA_TYPE.to_owned());
            if let Some(s) = &self.server {
                s.set_with_properties(
                    protobuf::SCHEMA_TOPIC,
                    schema.clone(),
                    &serde_json::json!({"retained": true}),
                );
            }
            if let Some(l) = &self.log {
                l.append(protobuf::SCHEMA_TOPIC, schema, timestamp);
            }
        }
    }

    /// The kernel's and the schedules' numbers, when the host handed them over.
    fn publish_host(&mut self) {
        if let Some(k) = self.kernel.take() {
            self.update(
                KERNEL_STEP_MS,
                Value::Double(k.last_step.as_secs_f64() * 1e3),
            );
            self.update(
                KERNEL_BUDGET_MS,
                Value::Double(k.last_budget.as_secs_f64() * 1e3),
            );
            self.update(KERNEL_DEFERRED, Value::Int(int(k.tasks_deferred)));
            self.update_ints(KERNEL_PENDING, k.pending.iter().map(|&n| int(n as u64)));
        }
        if let Some(s) = self.schedules.take() {
            self.update(SCHEDULES_LIVE, Value::Int(int(s.live)));
            self.update(SCHEDULES_RUNNING, Value::Int(int(s.running)));
        }
    }

    /// The slot of `topic`, made on first use.
    fn slot(&mut self, topic: &str) -> usize {
        if let Some(i) = self.slots.iter().position(|s| &*s.topic == topic) {
            return i;
        }
        self.slots.push(Slot::new(topic));
        self.slots.len() - 1
    }

    /// Sets a scalar slot, marking it changed when it differs from its last value.
    fn update(&mut self, slot: usize, value: Value) {
        let last = &mut self.slots[slot].last;
        if last.as_ref() != Some(&value) {
            *last = Some(value);
            self.changed.push(slot);
        }
    }

    /// Sets a `string[]` slot in place (its strings reused); returns whether it changed.
    fn update_strings<'a>(
        &mut self,
        slot: usize,
        items: impl Iterator<Item = &'a str> + Clone,
    ) -> bool {
        match &mut self.slots[slot].last {
            Some(Value::StringArray(v)) => {
                if v.iter().map(String::as_str).eq(items.clone()) {
                    return false;
                }
                let mut n = 0;
                for (i, item) in items.enumerate() {
                    match v.get_mut(i) {
                        Some(s) => {
                            s.clear();
                            s.push_str(item);
                        }
                        None => v.push(item.to_owned()),
                    }
                    n = i + 1;
                }
                v.truncate(n);
            }
            other => *other = Some(Value::StringArray(items.map(str::to_owned).collect())),
        }
        self.changed.push(slot);
        true
    }

    /// Sets an `int[]` slot in place; returns whether it changed.
    fn update_ints(&mut self, slot: usize, items: impl Iterator<Item = i64> + Clone) -> bool {
        match &mut self.slots[slot].last {
            Some(Value::IntArray(v)) => {
                if v.iter().copied().eq(items.clone()) {
                    return false;
                }
                v.clear();
                v.extend(items);
            }
            other => *other = Some(Value::IntArray(items.collect())),
        }
        self.changed.push(slot);
        true
    }

    /// Hands this frame's changed values on: to the server under one lock, by interned topic
    /// id, copied into its retained values' buffers; to the log as one batch of encoded records
    /// (docs/nt4.md §5.4, §8.3).
    fn hand_on(&mut self, timestamp: u64) {
        if self.changed.is_empty() {
            return;
        }
        let (slots, changed) = (&mut self.slots, &self.changed);
        if let Some(server) = &self.server {
            server.with_hub(|hub| {
                let now = hub.now_us();
                for &i in changed {
                    let slot = &mut slots[i];
                    let Some(value) = &slot.last else { continue };
                    let id = slot
                        .server
                        .resolve(|| hub.intern(&slot.topic, value.type_str(), None));
                    if let Some(id) = id {
                        hub.set_interned(id, value, now);
                    }
                }
            });
        }
        if let Some(log) = &self.log {
            let mut batch = log.buffer();
            let mut records = 0;
            for &i in changed {
                let slot = &mut slots[i];
                let Some(value) = &slot.last else { continue };
                let id = slot
                    .log
                    .resolve(|| log.entry(&slot.topic, value.log_type_str()));
                if let Some(id) = id {
                    wpilog::encode(&mut batch, id, value, timestamp);
                    records += 1;
                }
            }
            log.send(batch, records);
        }
    }
}

/// Whether two snapshots encode to the same scheduler message: the same command instances in
/// the same places with the same run times. An instance's name, priority and requirements never
/// change, so comparing ids and times is enough, and far cheaper than encoding to compare.
fn same_message(a: &Telemetry, b: &Telemetry) -> bool {
    let same = |x: &[CommandInfo], y: &[CommandInfo]| {
        x.len() == y.len()
            && x.iter().zip(y).all(|(p, q)| {
                p.id == q.id
                    && p.last_run_time == q.last_run_time
                    && p.total_run_time == q.total_run_time
            })
    };
    a.last_run_time == b.last_run_time && same(&a.queued, &b.queued) && same(&a.running, &b.running)
}

/// NT4's `int` is signed: counts past `i64::MAX` saturate.
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
