//! The engine's state, shared by every [`Schedules`](super::Schedules) handle and [`Txn`](crate::Txn).
//!
//! [`Core`] composes owned parts, each a struct in its own file with the methods that touch only
//! it: the [`Table`] of entries, the [`Names`] they share, the [`Settings`], the [`Keys`] index,
//! the [`Runs`] awaited, the [`Retention`] of retired entries, the [`StoreSide`], the
//! [`OperatorQueue`], the waiting [`Starts`], and the metrics (docs/schedules.md §13.77). What
//! needs several parts at once is a method of `Core`, in one of three files:
//! [`lifecycle`](super::lifecycle) (an entry's arrival and departure — loading, claims,
//! transactions, keys, holding back, operator stops, the waiting starts),
//! [`cadence`](super::cadence) (what a due entry fires and where its deadline goes) and
//! [`outcome`](super::outcome) (what a start, a run's end, a fault or an operator's action
//! leaves). Parts are plain fields, borrowed disjointly: no part holds another. This file imports
//! the parts and nothing that imports it, so the engine's modules stay acyclic.

use std::cell::RefCell;

use tickstep_kernel::clock::Clock;

use super::interner::Names;
use super::keys::Keys;
use super::operator_queue::OperatorQueue;
use super::retention::Retention;
use super::runs::Runs;
use super::settings::Settings;
use super::starts::Starts;
use super::store_side::StoreSide;
use super::table::Table;
use crate::held_back::HeldBack;
use crate::{Runner, World};

/// Everything a handle or a transaction holds: the state and the host's parts.
pub(crate) struct Shared {
    pub(super) core: RefCell<Core>,
    pub(super) world: Box<dyn World>,
    pub(super) runner: Box<dyn Runner>,
    pub(super) clock: Box<dyn Clock>,
    /// The schedules held back at open (docs/schedules.md §15.6), if any.
    pub(super) held_back: Option<HeldBack>,
}

impl Drop for Shared {
    /// A clean shutdown writes the last cadence updates (outcomes reported since the last tick),
    /// so only a crash hands firings back as interrupted.
    fn drop(&mut self) {
        let core = self.core.get_mut();
        // Starts still waiting for their update never happened: the next open starts them
        // (docs/schedules.md §11.42).
        core.park_pending();
        if let Err(error) = core.group_commit() {
            tracing::warn!(%error, "schedule engine dropped with cadence updates it could not save");
        }
        core.store.release_ids();
    }
}

/// The engine's state: its parts.
pub(crate) struct Core {
    pub(super) table: Table,
    pub(super) names: Names,
    pub(super) settings: Settings,
    pub(super) keys: Keys,
    pub(super) runs: Runs,
    pub(super) retention: Retention,
    pub(super) store: StoreSide,
    pub(super) operator: OperatorQueue,
    pub(super) starts: Starts,
    /// Starts, outcomes, missed points, retirements and gauges (docs/observability.md §1).
    pub(super) metrics: crate::metrics::SchedulesMetrics,
}
