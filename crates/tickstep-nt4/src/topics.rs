//! Topic names (docs/nt4.md §5.1): one place the telemetry writes and the hub guards
//! (clients may publish only under [`INPUT`]).

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
/// Tasks waiting in each of the kernel's priority queues now, Kernel, High, Normal, Low,
/// Background (`int[]`, five counts).
pub const KERNEL_PENDING: &str = "/tickstep/kernel/pending";
/// Durable schedules that will fire again (`int`).
pub const SCHEDULES_LIVE: &str = "/tickstep/schedules/live";
/// Durable schedule runs in progress (`int`).
pub const SCHEDULES_RUNNING: &str = "/tickstep/schedules/running";
/// Whether the robot is enabled, as the scheduler obeys it (`boolean`, docs/nt4.md §5.7).
pub const ROBOT_ENABLED: &str = "/tickstep/robot/enabled";
/// The active opmode's number, `-1` for none (`int`; the robot modes are `OpMode::DISABLED` 0,
/// `AUTONOMOUS` 1, `TELEOP` 2, `TEST` 3; docs/nt4.md §5.7).
pub const ROBOT_MODE: &str = "/tickstep/robot/mode";
/// Prefix of topics dashboards publish for the robot to read (docs/nt4.md §5.5).
pub const INPUT: &str = "/tickstep/input/";
