//! A firing waiting for its cadence update to be durable (docs/schedules.md §11.42): plain data,
//! kept by the engine's state and handled by the `starts` module.

use std::collections::VecDeque;

use crate::Firing;

/// A planned firing waiting for its cadence update to be durable.
pub(super) struct Pending {
    pub(super) firing: Firing,
    /// The store's grouped commit that carries its update, counted as the store counts
    /// ([`Backend::handed_behind`](crate::store::Backend)); `Some(0)` for a write made before
    /// `commit` returned, `None` until a group commit has carried it.
    pub(super) seq: Option<u64>,
    /// When it was planned (Unix nanoseconds): the host ticks again one engine tick later.
    pub(super) planned: u64,
}

/// The waiting starts, oldest first.
pub(super) type PendingStarts = VecDeque<Pending>;
