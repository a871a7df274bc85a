//! What tickstep publishes under `/tickstep/` each frame (docs/nt4.md §5).

use std::collections::HashMap;
use std::sync::Arc;

use tickstep_commands::{CommandInfo, CommandScheduler, Mechanism, Trigger};
use tickstep_kernel::Stats;

use crate::protobuf;
use crate::server::Nt4Server;
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
    mechanisms: Vec<(String, Arc<str>)>,
    triggers: Vec<(Trigger, Arc<str>)>,
    kernel: Option<Stats>,
    schedules: Option<ScheduleCounts>,
    last: HashMap<Arc<str>, Value>,
    owners: HashMap<String, String>,
    schema_sent: bool,
}

impl std::fmt::Debug for SchedulerTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulerTelemetry")
            .field("mechanisms", &self.mechanisms.len())
            .field("triggers", &self.triggers.len())
            .finish_non_exhaustive()
    }
}

/// Topic names (docs/nt4.md §5.1).
pub mod topics {
    /// The scheduler as `proto:wpi.proto.ProtobufScheduler`.
    pub const SCHEDULER: &str = "/tickstep/scheduler";
    /// Running commands' names, in start order (`string[]`).
    pub const RUNNING: &str = "/tickstep/scheduler/running";
    /// Running commands' instance ids (`int[]`), beside [`RUNNING`].
    pub const RUNNING_IDS: &str = "/tickstep/scheduler/running_ids";
    /// Running commands' parent ids, 0 for none (`int[]`), beside [`RUNNING`].
    pub const RUNNING_PARENTS: &str = "/tickstep/scheduler/running_parents";
    /// Queued commands' names (`string[]`).
    pub const QUEUED: &str = "/tickstep/scheduler/queued";
    /// The last `run()`'s time in milliseconds (`double`).
    pub const LAST_RUN_MS: &str = "/tickstep/scheduler/last_run_ms";
    /// `run()` cycles started (`int`).
    pub const CYCLE: &str = "/tickstep/scheduler/cycle";
    /// Prefix of each mechanism's owning command (`string`, empty when idle).
    pub const MECHANISMS: &str = "/tickstep/mechanisms/";
    /// Prefix of each trigger's state (`boolean`).
    pub const TRIGGERS: &str = "/tickstep/triggers/";
    /// The kernel's last step time in milliseconds (`double`).
    pub const KERNEL_STEP_MS: &str = "/tickstep/kernel/step_ms";
    /// The kernel's last budget in milliseconds (`double`).
    pub const KERNEL_BUDGET_MS: &str = "/tickstep/kernel/budget_ms";
    /// Tasks the kernel deferred in its last step (`int`).
    pub const KERNEL_DEFERRED: &str = "/tickstep/kernel/deferred";
    /// Durable schedules that will fire again (`int`).
    pub const SCHEDULES_LIVE: &str = "/tickstep/schedules/live";
    /// Durable schedule runs in progress (`int`).
    pub const SCHEDULES_RUNNING: &str = "/tickstep/schedules/running";
    /// Prefix of topics dashboards publish for the robot to read (docs/nt4.md §5.5).
    pub const INPUT: &str = "/tickstep/input/";
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
            triggers: Vec::new(),
            kernel: None,
            schedules: None,
            last: HashMap::new(),
            owners: HashMap::new(),
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
        let topic = format!("{}{}", topics::MECHANISMS, mechanism.name());
        self.mechanisms
            .push((mechanism.name().to_owned(), topic.into()));
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
        self.triggers.push((
            trigger.clone(),
            format!("{}{name}", topics::TRIGGERS).into(),
        ));
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
        let t = self.scheduler.telemetry();
        let mut bytes = Vec::new();
        protobuf::scheduler(
            &mut bytes,
            &t.queued,
            &t.running,
            t.last_run_time.as_secs_f64() * 1e3,
        );
        self.emit(
            topics::SCHEDULER,
            Value::Raw(bytes, protobuf::SCHEDULER_TYPE.to_owned()),
            timestamp,
        );
        self.emit(
            topics::RUNNING,
            Value::StringArray(t.running.iter().map(|c| c.name.clone()).collect()),
            timestamp,
        );
        self.emit(
            topics::RUNNING_IDS,
            Value::IntArray(t.running.iter().map(|c| int(c.id.get())).collect()),
            timestamp,
        );
        self.emit(
            topics::RUNNING_PARENTS,
            Value::IntArray(
                t.running
                    .iter()
                    .map(|c| c.parent.map_or(0, |p| int(p.get())))
                    .collect(),
            ),
            timestamp,
        );
        self.emit(
            topics::QUEUED,
            Value::StringArray(t.queued.iter().map(|c| c.name.clone()).collect()),
            timestamp,
        );
        self.emit(
            topics::LAST_RUN_MS,
            Value::Double(t.last_run_time.as_secs_f64() * 1e3),
            timestamp,
        );
        self.emit(topics::CYCLE, Value::Int(int(t.cycle)), timestamp);
        self.publish_owners_and_triggers(&t.running, timestamp);
        if let Some(k) = self.kernel.take() {
            self.emit(
                topics::KERNEL_STEP_MS,
                Value::Double(k.last_step.as_secs_f64() * 1e3),
                timestamp,
            );
            self.emit(
                topics::KERNEL_BUDGET_MS,
                Value::Double(k.last_budget.as_secs_f64() * 1e3),
                timestamp,
            );
            self.emit(
                topics::KERNEL_DEFERRED,
                Value::Int(int(k.tasks_deferred)),
                timestamp,
            );
        }
        if let Some(s) = self.schedules.take() {
            self.emit(topics::SCHEDULES_LIVE, Value::Int(int(s.live)), timestamp);
            self.emit(
                topics::SCHEDULES_RUNNING,
                Value::Int(int(s.running)),
                timestamp,
            );
        }
    }

    fn publish_owners_and_triggers(&mut self, running: &[CommandInfo], timestamp: u64) {
        // A mechanism's owner is the newest running command requiring it: children start after
        // their parents, so the innermost command that uses it wins (docs/nt4.md §5.1).
        self.owners.clear();
        for c in running {
            for r in &c.requirements {
                self.owners.insert(r.clone(), c.name.clone());
            }
        }
        for i in 0..self.mechanisms.len() {
            let (name, topic) = &self.mechanisms[i];
            let owner = self.owners.get(name).cloned().unwrap_or_default();
            let topic = topic.clone();
            self.emit(&topic, Value::String(owner), timestamp);
        }
        for i in 0..self.triggers.len() {
            let (trigger, topic) = &self.triggers[i];
            let (state, topic) = (trigger.get(), topic.clone());
            self.emit(&topic, Value::Boolean(state), timestamp);
        }
    }

    fn emit(&mut self, topic: &str, value: Value, timestamp: u64) {
        if self.last.get(topic) == Some(&value) {
            return;
        }
        if let Some(s) = &self.server {
            s.set(topic, value.clone());
        }
        if let Some(l) = &self.log {
            l.append(topic, value.clone(), timestamp);
        }
        match self.last.get_mut(topic) {
            Some(v) => *v = value,
            None => {
                self.last.insert(topic.into(), value);
            }
        }
    }
}

/// NT4's `int` is signed: counts past `i64::MAX` saturate.
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
