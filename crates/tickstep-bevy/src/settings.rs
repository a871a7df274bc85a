//! The plugin's settings, as its builder fills them in and the systems read them: a leaf that
//! imports nothing of the plugin, so `plugin.rs` and `systems.rs` both depend on it and not on
//! each other.

use std::path::PathBuf;

use bevy_ecs::schedule::InternedScheduleLabel;
use tickstep_host::HostSettings;
use tickstep_kernel::FramePhase;
use tickstep_kernel::clock::ManualClock;

/// Everything [`TickstepPlugin`](crate::TickstepPlugin) was configured with: what every host
/// shares (the `tickstep` host core's settings, docs/runtime.md §8.3), then what is Bevy's.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) host: HostSettings,
    pub(crate) store: Option<PathBuf>,
    pub(crate) manual_clock: Option<ManualClock>,
    pub(crate) kernel_schedule: InternedScheduleLabel,
    pub(crate) per_cycle_events: bool,
    pub(crate) phases: Vec<FramePhase>,
}
