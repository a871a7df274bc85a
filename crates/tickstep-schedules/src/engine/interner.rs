//! What entries share instead of owning: verb names, interned (an entry holds a `u32`, a firing an
//! `Rc<str>` clone); calendars, interned (the schedules of one calendar share it,
//! docs/schedules.md §14.16); the empty argument list. [`Names`] owns the three.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use crate::{Calendar, Value};

/// The values entries share, by reference: the engine's part that turns an entry's compact
/// fields back into names, calendars and arguments.
pub(super) struct Names {
    pub(super) verbs: Interner,
    /// Calendars shared by the schedules that use them (docs/schedules.md §14.16).
    pub(super) calendars: Calendars,
    /// Shared by every firing of a schedule without arguments.
    pub(super) empty_args: Rc<[Value]>,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            verbs: Interner::default(),
            calendars: Calendars::default(),
            empty_args: Rc::from(Vec::new()),
        }
    }
}

/// Verb names, interned so an entry holds a `u32` instead of a `String`.
#[derive(Default)]
pub(crate) struct Interner {
    names: Vec<Rc<str>>,
    ids: HashMap<Rc<str>, u32>,
}

impl Interner {
    pub(super) fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("more than 4 billion distinct verbs");
        let name: Rc<str> = Rc::from(name);
        self.names.push(Rc::clone(&name));
        self.ids.insert(name, id);
        id
    }

    pub(super) fn name(&self, id: u32) -> &Rc<str> {
        &self.names[id as usize]
    }
}

/// Calendars, interned: schedules with the same expression, zone and policy (a fleet of
/// `0 * * * *` in UTC) hold one `Calendar` between them (docs/schedules.md §14.16, §13.59).
/// Calendars no schedule holds any more are swept out whenever the set has doubled since the
/// last sweep, so the set stays within twice the calendars in use, at an amortised O(1) cost.
#[derive(Default)]
pub(crate) struct Calendars {
    set: HashSet<Arc<Calendar>>,
    sweep_at: usize,
}

impl Calendars {
    /// The shared calendar equal to `calendar`: the one already held, or `calendar` itself.
    pub(super) fn intern(&mut self, calendar: Arc<Calendar>) -> Arc<Calendar> {
        if let Some(held) = self.set.get(&*calendar) {
            return Arc::clone(held);
        }
        if self.set.len() >= self.sweep_at {
            self.set.retain(|c| Arc::strong_count(c) > 1);
            self.sweep_at = (self.set.len() * 2).max(64);
        }
        self.set.insert(Arc::clone(&calendar));
        calendar
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DstPolicy;

    #[test]
    fn equal_calendars_are_shared_and_unused_ones_swept() {
        let mut calendars = Calendars::default();
        let new = |e: &str| Arc::new(Calendar::new(e, "UTC", DstPolicy::default()).unwrap());
        let a = calendars.intern(new("@hourly"));
        let b = calendars.intern(new("0 * * * * "));
        assert!(!Arc::ptr_eq(&a, &b), "different text, different calendar");
        let again = calendars.intern(new("@hourly"));
        assert!(Arc::ptr_eq(&a, &again));
        drop((a, again, b));
        for minute in 0..60 {
            let _ = calendars.intern(new(&format!("{minute} * * * *")));
        }
        assert!(calendars.set.len() < 64, "{} held", calendars.set.len());
    }
}
