//! Identifiers: schedule ids, run ids and object references, each its own type.
//!
//! A [`ScheduleId`] comes from the schedule engine's own id space. Making it a distinct type (rather
//! than a bare integer shared with task ids) is what turns "passed a task id to `schedule_stop`"
//! into a compile error in Rust hosts; hosts that expose ids to a scripting language convert at the
//! boundary with [`ScheduleId::from_raw`], where an unknown number is simply an id that names
//! nothing (`schedule_stop` returns `false`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The id of a schedule. Never reused, across restarts included.
///
/// ```
/// use tickstep_schedules::ScheduleId;
/// let id = ScheduleId::from_raw(7);
/// assert_eq!(id.get(), 7);
/// assert_eq!(id.to_string(), "schedule 7");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct ScheduleId(u64);

impl ScheduleId {
    /// The id with raw value `raw`, as a host reads it back from its own storage or language.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleId::from_raw(3).get(), 3);
    /// ```
    pub const fn from_raw(raw: u64) -> Self {
        ScheduleId(raw)
    }

    /// The raw value, for hosts that store ids in their own values.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleId::from_raw(9).get(), 9);
    /// ```
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ScheduleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schedule {}", self.0)
    }
}

/// The engine's id for one firing, handed to the host in [`Firing::run`](crate::Firing::run)
/// and used to report the firing's outcome. It is written with the update that records the
/// firing before the firing starts, so a run survives a crash under its id (docs/schedules.md
/// §11.5). Ids count up from 1 per engine, above every run restored from the store.
///
/// ```
/// use tickstep_schedules::RunId;
/// assert_eq!(RunId(12).0, 12);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct RunId(pub u64);

/// A reference to a host object (a MOO object number such as `#42`).
///
/// The engine never interprets it; the host's [`World`](crate::World) decides whether it is
/// valid, anonymous, a wizard, and who controls it.
///
/// ```
/// use tickstep_schedules::ObjId;
/// assert_eq!(ObjId(42).to_string(), "#42");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct ObjId(pub i64);

impl fmt::Display for ObjId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}
