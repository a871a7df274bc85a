//! Holding back, at open, schedules whose targets the world does not have, when they are too
//! many to be this application's own (docs/schedules.md §15.6).
//!
//! A schedule whose object is gone retires as `invalid_target` when it comes due
//! (docs/schedules.md §8.1): the object was destroyed, the schedule has nothing to run on. But an
//! engine that finds most of what it loads pointing at objects it does not know has most likely
//! opened a store, or a namespace, that another application filled; retiring them would clean
//! up a database that is not its own. So it holds them back: their entries leave the engine's
//! table before catch-up or anything else can touch them, and their rows are left as they are.

use super::core::Core;
use crate::held_back::{HOLD_BACK_MIN, HeldBack};
use crate::{Namespace, ScheduleId, World};

impl Core {
    /// After the load, before catch-up: holds back every loaded schedule whose target `world`
    /// does not know, when they are at least [`HOLD_BACK_MIN`] and more than half of what was
    /// loaded; the report, or `None` when nothing was held.
    pub(super) fn hold_back_unknown_targets(
        &mut self,
        world: &dyn World,
        namespace: Namespace,
    ) -> Option<HeldBack> {
        let loaded = self.table.len();
        let unknown: Vec<u64> = self
            .table
            .iter()
            .filter(|e| !world.valid(e.target))
            .map(|e| e.id)
            .collect();
        if unknown.len() < HOLD_BACK_MIN || unknown.len() * 2 <= loaded {
            return None;
        }
        for &id in &unknown {
            // No row is written for it: the entry simply leaves the engine.
            self.drop_entry(id);
        }
        // What else the load noted of them goes with their entries: a table lookup each, not a
        // search of the held list (which may hold a million).
        let table = &self.table;
        self.interrupted
            .retain(|f| table.get(f.schedule.get()).is_some());
        self.operator_due.retain(|&id| table.get(id).is_some());
        let mut schedules: Vec<ScheduleId> =
            unknown.into_iter().map(ScheduleId::from_raw).collect();
        schedules.sort_unstable();
        let held = HeldBack {
            namespace,
            schedules,
            loaded,
        };
        tracing::warn!(%held, "schedule engine: schedules held back at open");
        Some(held)
    }
}
