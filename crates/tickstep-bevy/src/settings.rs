//! The plugin's settings, as its builder fills them in and the systems read them: a leaf that
//! imports nothing of the plugin, so `plugin.rs` and `systems.rs` both depend on it and not on
//! each other.

use std::path::PathBuf;
use std::time::Duration;

use bevy_ecs::schedule::InternedScheduleLabel;
use tickstep_kernel::clock::ManualClock;
use tickstep_kernel::{FramePhase, Priority, Role};

/// Everything [`TickstepPlugin`](crate::TickstepPlugin) was configured with.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) role: Role,
    pub(crate) frame_target: Option<Duration>,
    pub(crate) budget: Option<Duration>,
    pub(crate) store: Option<PathBuf>,
    pub(crate) manual_clock: Option<ManualClock>,
    pub(crate) kernel_schedule: InternedScheduleLabel,
    pub(crate) schedules_tick: Duration,
    pub(crate) diagnostics: Option<bool>,
    pub(crate) per_cycle_events: bool,
    pub(crate) phases: Vec<FramePhase>,
    pub(crate) firing_priority: Priority,
}
