//! Robot telemetry in `WPILib`'s tools: a `NetworkTables` 4 server and a `.wpilog` writer for
//! tickstep's command scheduler.
//!
//! (Crate docs are completed below.)

mod hub;
mod limits;
mod msgpack;
mod protobuf;
mod server;
mod telemetry;
mod value;
mod wpilog;

pub use limits::Limits;
pub use server::{Nt4Server, ServerError};
pub use telemetry::{ScheduleCounts, SchedulerTelemetry, topics};
pub use value::Value;
pub use wpilog::{LogConfig, LogError, WpiLog};
