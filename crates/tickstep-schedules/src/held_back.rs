//! What an engine held back at open rather than retire (docs/schedules.md §15.6): a leaf
//! module, the report alone.

use std::fmt;

use crate::{Namespace, ScheduleId};

/// The fewest schedules with an unknown target that make an open suspicious: one schedule whose
/// object is gone is ordinary and retires as `invalid_target` at its firing (docs/schedules.md
/// §8.1); two or more, making up more than half of what was loaded, are held back.
pub(crate) const HOLD_BACK_MIN: usize = 2;

/// The schedules an engine loaded but found naming objects its world does not have, in such
/// numbers — more than half of what it loaded, and at least two — that the store is more likely
/// another application's than this one's (docs/schedules.md §15.6). The engine neither fires
/// nor retires them: their rows stay as they are, for the application that made them or for an
/// operator to stop, and [`Schedules::held_back`](crate::Schedules::held_back) says so.
///
/// ```
/// use tickstep_schedules::kernel::clock::ManualClock;
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// use tickstep_schedules::{Options, Schedules};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.db");
/// // An application with objects of its own makes two schedules on them.
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// let bell = world.add_object(wiz);
/// world.add_verb(bell, "ring");
/// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
/// let mut txn = engine.begin(wiz);
/// for _ in 0..2 {
///     txn.schedule_every(bell, "ring", 60.0, vec![], Options::new()).unwrap();
/// }
/// txn.commit().unwrap();
/// drop(engine);
///
/// // Another world opens the same store in the same namespace: the objects are not there.
/// let stranger = TestWorld::new();
/// let engine = Schedules::open(&path, ManualClock::new(), stranger, TestRunner::new(), Default::default()).unwrap();
/// let held = engine.held_back().unwrap();
/// assert_eq!((held.schedules.len(), held.loaded), (2, 2));
/// assert!(held.to_string().contains("held back, not retired"), "{held}");
/// assert_eq!(engine.live_count(), 0, "neither fired nor retired");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeldBack {
    /// The engine's namespace.
    pub namespace: Namespace,
    /// The schedules held back, by id.
    pub schedules: Vec<ScheduleId>,
    /// How many schedules the engine loaded in all.
    pub loaded: usize,
}

impl fmt::Display for HeldBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<String> = self
            .schedules
            .iter()
            .take(10)
            .map(ToString::to_string)
            .collect();
        let more = self.schedules.len().saturating_sub(shown.len());
        write!(
            f,
            "{} of the {} schedules in namespace {} name objects this world does not have; they \
             are held back, not retired (another application's schedules in this namespace? \
             docs/schedules.md §15.6): {}{}",
            self.schedules.len(),
            self.loaded,
            self.namespace,
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }
}
