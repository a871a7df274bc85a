//! What tickstep publishes under `/tickstep/` each frame (docs/nt4.md §5).

use std::collections::HashMap;
use std::sync::Arc;

use tickstep_commands::{CommandInfo, CommandScheduler, Mechanism, Telemetry, Trigger};
use tickstep_kernel::Stats;

use crate::protobuf;
use crate::server::Nt4Server;
use crate::topics;
use crate::value::Value;
use crate::wpilog::WpiLog;

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
/// use tickstep_commands::{CommandInfo, CommandScheduler, Mechanism, Trigger};
/// use tickstep_kernel::clock::ManualClock;
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
    /// Per mechanism, the running command owning it this frame (reused every frame).
    owners: Vec<Option<usize>>,
    /// The scheduler's snapshot (reused every frame).
    snapshot: Option<Telemetry>,
    /// The scheduler message being encoded (reused every frame).
    scratch: Vec<u8>,
    schema_sent: bool,
}

struct Slot {
    topic: Arc<str>,
    last: Option<Value>,
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
const FIXED: [&str; 12] = [
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
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_kernel::clock::ManualClock;
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
            slots: FIXED
                .iter()
                .map(|t| Slot {
                    topic: Arc::from(*t),
                    last: None,
                })
                .collect(),
            owners: Vec::new(),
            snapshot: None,
            scratch: Vec::new(),
            schema_sent: false,
        }
    }

    /// Publishes to `server`.
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_kernel::clock::ManualClock;
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
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_kernel::clock::ManualClock;
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
    /// # use tickstep_commands::{CommandScheduler, Mechanism};
    /// # use tickstep_kernel::clock::ManualClock;
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
        self
    }

    /// Shows `trigger`'s state under `/tickstep/triggers/<name>`.
    ///
    /// ```
    /// # use tickstep_commands::{CommandScheduler, Trigger};
    /// # use tickstep_kernel::clock::ManualClock;
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
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_kernel::{clock::ManualClock, FrameScheduler, SchedulerConfig};
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
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_kernel::clock::ManualClock;
    /// # use tickstep_nt4::{ScheduleCounts, SchedulerTelemetry};
    /// let mut t = SchedulerTelemetry::new(&CommandScheduler::new(ManualClock::new()));
    /// t.set_schedule_counts(ScheduleCounts { live: 2, running: 0 });
    /// ```
    pub fn set_schedule_counts(&mut self, counts: ScheduleCounts) -> &mut Self {
        self.schedules = Some(counts);
        self
    }

    /// Publishes this frame's values: call it once per frame, after the scheduler's `run()`.
    /// Costs a scheduler snapshot, the protobuf encoding and one comparison per topic; only
    /// changed values reach the server and the log (docs/nt4.md §5.3, §5.4).
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_kernel::clock::ManualClock;
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
        // The last frame's snapshot, overwritten in place: no allocation once it has held as
        // many commands as run (docs/commands.md §10.5).
        let mut t = self
            .snapshot
            .take()
            .unwrap_or_else(|| self.scheduler.telemetry());
        self.scheduler.telemetry_into(&mut t);
        let mut bytes = std::mem::take(&mut self.scratch);
        bytes.clear();
        protobuf::scheduler(
            &mut bytes,
            &t.queued,
            &t.running,
            t.last_run_time.as_secs_f64() * 1e3,
        );
        if !matches!(&self.slots[SCHEDULER].last, Some(Value::Raw(last, _)) if *last == bytes) {
            self.emit(
                SCHEDULER,
                Value::Raw(bytes.clone(), protobuf::SCHEDULER_TYPE.to_owned()),
                timestamp,
            );
        }
        self.scratch = bytes;
        // Arrays are compared in place and built only when they changed.
        if !matches!(&self.slots[RUNNING].last, Some(Value::StringArray(v)) if v.iter().map(String::as_str).eq(t.running.iter().map(|c| c.name.as_str())))
        {
            self.emit(
                RUNNING,
                Value::StringArray(
                    t.running
                        .iter()
                        .map(|c| c.name.as_str())
                        .map(str::to_owned)
                        .collect(),
                ),
                timestamp,
            );
        }
        if !matches!(&self.slots[QUEUED].last, Some(Value::StringArray(v)) if v.iter().map(String::as_str).eq(t.queued.iter().map(|c| c.name.as_str())))
        {
            self.emit(
                QUEUED,
                Value::StringArray(
                    t.queued
                        .iter()
                        .map(|c| c.name.as_str())
                        .map(str::to_owned)
                        .collect(),
                ),
                timestamp,
            );
        }
        let ids = t.running.iter().map(|c| int(c.id.get()));
        if !matches!(&self.slots[RUNNING_IDS].last, Some(Value::IntArray(v)) if v.iter().copied().eq(ids.clone()))
        {
            self.emit(RUNNING_IDS, Value::IntArray(ids.collect()), timestamp);
        }
        let parents = t
            .running
            .iter()
            .map(|c| c.parent.map_or(0, |p| int(p.get())));
        if !matches!(&self.slots[RUNNING_PARENTS].last, Some(Value::IntArray(v)) if v.iter().copied().eq(parents.clone()))
        {
            self.emit(
                RUNNING_PARENTS,
                Value::IntArray(parents.collect()),
                timestamp,
            );
        }
        self.emit(
            LAST_RUN_MS,
            Value::Double(t.last_run_time.as_secs_f64() * 1e3),
            timestamp,
        );
        self.emit(CYCLE, Value::Int(int(t.cycle)), timestamp);
        self.publish_owners(&t.running, timestamp);
        for i in 0..self.triggers.len() {
            let (state, slot) = (self.triggers[i].0.get(), self.triggers[i].1);
            self.emit(slot, Value::Boolean(state), timestamp);
        }
        self.publish_host(timestamp);
        self.snapshot = Some(t);
    }

    /// A mechanism's owner is the newest running command requiring it: children start after
    /// their parents, so the innermost command that uses it wins (docs/nt4.md §5.1).
    fn publish_owners(&mut self, running: &[CommandInfo], timestamp: u64) {
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
            if !matches!(&self.slots[slot].last, Some(Value::String(s)) if s == owner) {
                self.emit(slot, Value::String(owner.to_owned()), timestamp);
            }
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
    fn publish_host(&mut self, timestamp: u64) {
        if let Some(k) = self.kernel.take() {
            self.emit(
                KERNEL_STEP_MS,
                Value::Double(k.last_step.as_secs_f64() * 1e3),
                timestamp,
            );
            self.emit(
                KERNEL_BUDGET_MS,
                Value::Double(k.last_budget.as_secs_f64() * 1e3),
                timestamp,
            );
            self.emit(
                KERNEL_DEFERRED,
                Value::Int(int(k.tasks_deferred)),
                timestamp,
            );
        }
        if let Some(s) = self.schedules.take() {
            self.emit(SCHEDULES_LIVE, Value::Int(int(s.live)), timestamp);
            self.emit(SCHEDULES_RUNNING, Value::Int(int(s.running)), timestamp);
        }
    }

    /// The slot of `topic`, made on first use.
    fn slot(&mut self, topic: &str) -> usize {
        if let Some(i) = self.slots.iter().position(|s| &*s.topic == topic) {
            return i;
        }
        self.slots.push(Slot {
            topic: Arc::from(topic),
            last: None,
        });
        self.slots.len() - 1
    }

    /// Hands `value` on if it differs from the slot's last one.
    fn emit(&mut self, slot: usize, value: Value, timestamp: u64) {
        let slot = &mut self.slots[slot];
        if slot.last.as_ref() == Some(&value) {
            return;
        }
        if let Some(s) = &self.server {
            s.set(&slot.topic, value.clone());
        }
        if let Some(l) = &self.log {
            l.append(&slot.topic, value.clone(), timestamp);
        }
        slot.last = Some(value);
    }
}

/// NT4's `int` is signed: counts past `i64::MAX` saturate.
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
