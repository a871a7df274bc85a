//! Robot telemetry in `WPILib`'s tools: a `NetworkTables` 4 server and a `.wpilog` writer that
//! show tickstep's command scheduler to `AdvantageScope`, Elastic and Shuffleboard
//! (docs/nt4.md).
//!
//! # What it is
//!
//! * [`Nt4Server`]: an NT4 server (WebSocket on `/nt/<client>`, subprotocols 4.1 and 4.0, JSON
//!   control messages, `MessagePack` values, clock sync) on a tokio runtime on a thread of its
//!   own. The robot publishes with [`Nt4Server::set`] and reads what dashboards publish with
//!   [`Nt4Server::get`].
//! * [`SchedulerTelemetry`]: once per frame, publishes a [`CommandScheduler`]'s state under
//!   `/tickstep/` ([`topics`]): the scheduler in the reference framework's protobuf shape with
//!   its schema under `/.schema/`, running and queued commands, each mechanism's owner, trigger
//!   states, and the kernel's and durable schedules' numbers when the host has them.
//! * [`WpiLog`]: `WPILib` data log files of the same topics, written on a thread of its own,
//!   rotated at a size limit, readable after `kill -9` up to the last flushed block.
//!
//! ```
//! use std::time::Duration;
//! use tickstep_nt4::commands::{CommandScheduler, Mechanism, Trigger};
//! use tickstep_nt4::kernel::clock::ManualClock;
//! use tickstep_nt4::{Limits, LogConfig, Nt4Server, SchedulerTelemetry, WpiLog};
//!
//! let clock = ManualClock::new();
//! let scheduler = CommandScheduler::new(clock.clone());
//! let arm = Mechanism::new(&scheduler, "arm");
//! // Port 5810 is NT4's; 0 picks a free one.
//! let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let log = WpiLog::start(LogConfig::new(dir.path())).unwrap();
//! // A dashboard button: the robot reads the topic a client publishes.
//! let input = server.clone();
//! let button = Trigger::new(&scheduler, move || {
//!     input.get("/tickstep/input/button").and_then(|v| v.as_bool()).unwrap_or(false)
//! });
//! button.on_true(&arm.run(|co| async move { co.wait(Duration::from_millis(500)).await; }).named("score"));
//!
//! let mut telemetry = SchedulerTelemetry::new(&scheduler);
//! telemetry.serve(&server).log(&log).mechanism(&arm).trigger("button", &button);
//! for _ in 0..3 {
//!     scheduler.run().unwrap();
//!     telemetry.publish(); // once per frame, after run()
//!     clock.advance(Duration::from_millis(20));
//! }
//! ```
//!
//! # The model
//!
//! The frame thread owns the scheduler (`!Send`) and the telemetry. `publish` compares each
//! topic with the value it handed on last and passes on only changes: to the server, whose
//! topic table one `Mutex` guards (held for a comparison and a copy, never across I/O), and to
//! the log's bounded channel (never waited on; a full channel drops and counts). Each client has
//! a writer task that sweeps the table at the client's period (NT4's `periodic`, default 100 ms)
//! and sends what changed since its last sweep; a client that does not keep up is dropped, never
//! buffered without bound (docs/nt4.md §4). Timestamps: NT4 values carry the server's time base
//! (microseconds since it started); log records carry the scheduler clock's microseconds, so a
//! run on a `ManualClock` logs virtual time.
//!
//! With the feature `runtime`, `SchedulerTelemetry::attach` publishes after every command
//! cycle of a tickstep `Runtime`, with its kernel and schedules numbers (docs/nt4.md §5.6).
//!
//! # Costs
//!
//! Per frame, `publish` costs the scheduler's telemetry snapshot, one comparison per topic, and
//! work only for the topics that changed: O(changed topics), no allocation once warm, about a
//! microsecond or two added to a frame of 50 running commands, with clients served off the
//! frame's thread. Memory is bounded by the limits. docs/nt4.md §8 holds the measurements, the
//! memory bounds and the build cost of the `axum` server (the codecs and the log format are the
//! crate's own).
//!
//! # Decisions where the spec was open
//!
//! Each is a rule of docs/nt4.md §9: duplicate client names are renamed, not refused; one sweep
//! period per client; malformed frames close the client with a reason rather than being
//! skipped; log timestamps follow the scheduler's clock.
//!
//! [`CommandScheduler`]: tickstep_commands::CommandScheduler

// docs.rs (and CI's docs.rs build) marks each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod hub;
mod keepalive;
mod limits;
mod meta;
mod msgpack;
mod protobuf;
#[cfg(feature = "runtime")]
mod runtime;
mod server;
mod telemetry;
pub mod topics;
mod value;
mod wpilog;

pub use limits::Limits;
pub use server::{Nt4Server, ServerError};
pub use telemetry::{ScheduleCounts, SchedulerTelemetry};
pub use value::Value;
pub use wpilog::{LogConfig, LogError, WpiLog};

/// `serde_json`, whose `Value` [`Nt4Server::set_with_properties`] takes as a topic's properties
/// (docs/crates.md §1.6).
pub use serde_json;
/// The commands layer (`tickstep-commands`) whose [`CommandScheduler`](commands::CommandScheduler)
/// [`SchedulerTelemetry`] shows: a robot needs this crate alone (docs/crates.md §1.6).
pub use tickstep_commands as commands;
/// The kernel layer (`tickstep-kernel`), for the clock the command scheduler runs on
/// (docs/crates.md §1.6).
pub use tickstep_kernel as kernel;
