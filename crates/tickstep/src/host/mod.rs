//! The host core: what every host of the schedules engine on a kernel shares (docs/runtime.md §8).
//!
//! The `Runtime` (and, on it, the `TokioDriver` and `tickstep serve`) and the Bevy plugin
//! (`tickstep-bevy`) each wire the durable schedules onto a kernel. Everything in that wiring that
//! is not about driving frames or choosing the clock lives here, once:
//!
//! * [`HostCore`] (`core.rs`): the kernel runner — each firing a kernel task, a sync verb one
//!   task and an async verb an async task — the schedules wake, reporting outcomes, kill, the
//!   running list, settling interrupted firings, opening the store, and the counters;
//! * `verbs.rs`: the verb table, [`VerbCall`] and [`VerbResult`], and the world narrowed to the
//!   verbs that have code;
//! * `firings.rs`: [`FiringLimits`] (`seconds`, `ticks`) and the list of running firings;
//! * `settings.rs`: [`HostSettings`], the one builder core (its error, [`SettingsError`](crate::SettingsError),
//!   lives in `error.rs`);
//! * `open.rs`: opening the store and naming it in the error.
//!
//! The core is generic over the clock it reads wall time from (`RuntimeClock`, Bevy's
//! `RealClock`), so a host pays for its own clock and nothing more: no dynamic dispatch and no
//! work per frame beyond the wake's heap peek the host asks for.

mod core;
mod firings;
mod open;
mod settings;
mod store_news;
mod verbs;

pub use self::core::{HostCore, HostCounts};
pub use firings::{FiringLimits, RunningFiring};
pub use settings::{
    DEFAULT_SCHEDULES_TICK, DEFAULT_SCHEDULES_TICK_TIME, HostSettings, program_namespace,
};
pub use verbs::{VerbCall, VerbResult};
