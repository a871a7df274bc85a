//! tickstep inside a Bevy app (essay below, in progress).

#![forbid(unsafe_code)]

mod clock;
mod error;
mod frame_meter;
mod mechanisms;
mod messages;
mod plugin;
mod resources;
mod schedules_host;
mod systems;
mod world_queue;

pub use clock::{GameClock, RealClock};
pub use error::PluginError;
pub use mechanisms::{MechanismComponent, TickstepAppExt};
pub use messages::{CommandEvent, CommandEventKind, CommandsFailed, KernelOverload, KernelStats};
pub use plugin::{DEFAULT_SCHEDULES_TICK, TickstepPlugin, TickstepPluginBuilder};
pub use resources::{TickstepCommands, TickstepKernel, TickstepSchedules};
pub use schedules_host::{VerbCall, VerbResult};
pub use world_queue::{Reply, WorldQueue};
