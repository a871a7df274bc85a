//! Named schedules in a transaction (docs/schedules.md §5.12–§5.17): a keyed creation returns
//! the schedule its key already names, [`Txn::is_new`] tells a new id from such a one, and
//! [`Txn::schedule_named`] looks a key up.

use super::Txn;
use crate::perms::check_list_owner;
use crate::schedule_keys::check_key;
use crate::{Error, ObjId, ScheduleId};

impl Txn {
    /// Whether `id` was created by this transaction (and is not committed yet). A keyed creation
    /// whose key already named the same schedule returns that schedule's id, for which this is
    /// `false` (docs/schedules.md §5.13).
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "beat");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 5.0, vec![], Options::new().key("heartbeat")).unwrap();
    /// assert!(txn.is_new(id));
    /// txn.commit().unwrap();
    ///
    /// let mut txn = engine.begin(wiz);
    /// let again = txn.schedule_every(wiz, "beat", 5.0, vec![], Options::new().key("heartbeat")).unwrap();
    /// assert_eq!(again, id);
    /// assert!(!txn.is_new(again), "the key named it already: nothing created");
    /// ```
    pub fn is_new(&self, id: ScheduleId) -> bool {
        self.creates.iter().any(|d| d.id() == id.get())
    }

    /// `schedule_named(key, owner)`: the live schedule of `owner` (default: the caller) keyed
    /// `key`, as this transaction sees it (its own creations count, its own stops do not), from
    /// whichever node holds it (docs/schedules.md §5.17). `None` when no live schedule holds the
    /// key: a stopped or retired one has freed it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for a key that breaks the key rule (docs/schedules.md §5.12);
    /// [`Error::Perm`] when `owner` is given, is not the caller, and the caller is not a wizard
    /// (as `schedules(owner)`); a store's error when the store could not be asked.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "beat");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 5.0, vec![], Options::new().key("heartbeat")).unwrap();
    /// txn.commit().unwrap();
    /// assert_eq!(engine.begin(wiz).schedule_named("heartbeat", None).unwrap(), Some(id));
    /// assert_eq!(engine.begin(wiz).schedule_named("other", None).unwrap(), None);
    /// assert_eq!(engine.begin(wiz).schedule_named("", None).unwrap_err().code(), "E_INVARG");
    /// ```
    pub fn schedule_named(
        &self,
        key: &str,
        owner: Option<ObjId>,
    ) -> Result<Option<ScheduleId>, Error> {
        check_key(key)?;
        if let Some(owner) = owner {
            check_list_owner(self.shared.world(), self.perms, owner)?;
        }
        let owner = owner.unwrap_or(self.perms);
        if let Some(d) = self.creates.iter().find(|d| d.is_keyed(owner, key)) {
            return Ok(Some(ScheduleId::from_raw(d.id())));
        }
        Ok(self
            .shared
            .find_key(owner, key, &self.stops)?
            .map(ScheduleId::from_raw))
    }
}
