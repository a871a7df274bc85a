//! tickstep-host: the durable schedules engine wired onto a frame-budgeted kernel, once, for every
//! host.
//!
//! A *host* is a program that owns a kernel and drives its frames: tickstep's `Runtime` (and, on
//! it, the tokio driver and `tickstep serve`), the Bevy plugin (`tickstep-bevy`), or your own
//! engine loop. Each wires the durable schedules onto its kernel the same way, so that wiring
//! lives here, and a host keeps only what is its own: when frames run and which clock it reads.
//!
//! ```
//! use std::{cell::Cell, rc::Rc, time::Duration};
//! use tickstep_host::{HostCore, HostSettings};
//! use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
//! use tickstep_host::schedules::{ObjId, OpenWorld, Options, Value};
//!
//! let clock = ManualClock::new();
//! let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
//! let settings = HostSettings::default().schedules_tick(Duration::from_millis(10));
//! let core = HostCore::new(clock.clone(), kernel.clone(), &settings, None);
//! core.open(None, Box::new(OpenWorld), None)?; // in memory; a path or postgres:// URL keeps it
//!
//! let rings = Rc::new(Cell::new(0));
//! let r = rings.clone();
//! core.verb("ring", move |_call| { r.set(r.get() + 1); Ok(Value::Int(0)) });
//! let mut txn = core.engine().begin(ObjId(1));
//! txn.schedule_every(ObjId(1), "ring", 1.0, vec![], Options::new()).unwrap();
//! txn.commit().unwrap();
//! core.rearm(); // a host re-arms after it changed the schedules
//!
//! for _ in 0..350 { // the host's frames: 3.5 s of 10 ms steps, in virtual time
//!     clock.advance(Duration::from_millis(10));
//!     kernel.step();
//! }
//! assert_eq!(rings.get(), 3);
//! # Ok::<(), tickstep_host::HostError>(())
//! ```
//!
//! # The model
//!
//! (Specified in docs/runtime.md §8.)
//!
//! * [`HostCore`] ticks the engine from one kernel timer armed for its earliest deadline, runs
//!   each firing as its own kernel task at the firing priority — a sync [verb](HostCore::verb) as
//!   one task, an [async verb](HostCore::async_verb) as an async task that may wait across frames
//!   — and reports each outcome to the engine by run id. Firings run under [`FiringLimits`]
//!   (`seconds`, `ticks`), are listed while they run ([`RunningFiring`]) and can be killed.
//!   Opening the engine settles the firings a restart interrupted. The core is generic over the
//!   clock it reads wall time from, so a host pays for its own clock and nothing more.
//! * [`HostSettings`] is the one settings type: role, budget, frame target, diagnostics,
//!   schedules tick and tick time, firing priority and limits, jitter seed, lease, namespace. A
//!   host's builder holds one and delegates each of these setters to it, and checks it the same
//!   way ([`SettingsError`]); it produces the kernel's configuration and the engine's.
//! * [`HostError`] is what opening the engine can fail with; every host wraps it.
//! * What a host shows people, one form everywhere (docs/runtime.md §8.8): [`shown`], text one
//!   user typed made safe for another's terminal; [`relative`], how far a time is from now; and
//!   [`same_origin`], whether a web request comes from a page of the host's own origin.
//!
//! Everything runs on one thread: the core is `Rc`-based, and no borrow of it is held while a
//! verb runs, so a verb may create schedules or kill firings.
//!
//! # Costs
//!
//! Nothing per frame beyond what the host asks for — re-arming the wake is one heap peek and a
//! comparison when nothing changed — and, per firing, one boxed kernel task under `catch_unwind`,
//! one entry in the running list and, with a `seconds` limit, one kernel timer (docs/runtime.md
//! §8.6, §4). docs/runtime.md §10 holds the measurements.

#![forbid(unsafe_code)]

mod error;
mod firings;
mod from_now;
mod host_core;
mod host_settings;
mod open;
mod origin;
mod shown;
mod store_news;
mod verbs;

pub use error::{HostError, SettingsError};
pub use firings::{FiringLimits, RunningFiring};
pub use from_now::relative;
pub use host_core::{HostCore, HostCounts};
pub use host_settings::{
    DEFAULT_SCHEDULES_TICK, DEFAULT_SCHEDULES_TICK_TIME, HostSettings, program_namespace,
};
pub use origin::same_origin;
pub use shown::shown;
pub use tickstep_kernel as kernel;
pub use tickstep_schedules as schedules;
pub use verbs::{VerbCall, VerbResult};
