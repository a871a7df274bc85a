//! A task's operator actions on committed schedules: pause, resume, trigger and backfill, with
//! its permissions and at once, not at commit (docs/schedules.md §9.4–§9.9, §13.48).

use super::Txn;
use crate::engine::Schedules;
use crate::{Error, ScheduleId};

impl Txn {
    /// `schedule_pause(id, note)`: [`Schedules::pause`] with this task's permissions. Unlike
    /// creations and stops it takes effect at once, not at commit, as MOO's `kill_task()` does
    /// (docs/schedules.md §9.4, §13.48).
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`]; and [`Error::InvalidArg`] for a schedule this transaction
    /// created or stopped (an operator acts on committed schedules).
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::Options;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// assert_eq!(txn.schedule_pause(id, "").unwrap_err().code(), "E_INVARG", "not committed yet");
    /// txn.commit().unwrap();
    /// let mut txn = engine.begin(wiz);
    /// assert!(txn.schedule_pause(id, "until the fix").unwrap());
    /// assert!(txn.schedule_resume(id).unwrap());
    /// ```
    pub fn schedule_pause(&mut self, id: ScheduleId, note: &str) -> Result<bool, Error> {
        self.committed_only(id, "schedule_pause")?;
        Schedules::from_shared(&self.shared).pause(self.perms, id, note)
    }

    /// `schedule_resume(id)`: [`Schedules::resume`] with this task's permissions, at once
    /// (docs/schedules.md §9.4).
    ///
    /// # Errors
    ///
    /// As [`Txn::schedule_pause`].
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(tickstep_schedules::ObjId(1));
    /// let err = txn.schedule_resume(tickstep_schedules::ScheduleId::from_raw(9)).unwrap_err();
    /// assert_eq!(err.code(), "E_INVARG");
    /// ```
    pub fn schedule_resume(&mut self, id: ScheduleId) -> Result<bool, Error> {
        self.committed_only(id, "schedule_resume")?;
        Schedules::from_shared(&self.shared).resume(self.perms, id)
    }

    /// `schedule_trigger(id)`: [`Schedules::trigger_now`] with this task's permissions, at once
    /// (docs/schedules.md §9.6).
    ///
    /// # Errors
    ///
    /// As [`Txn::schedule_pause`].
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::Options;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// # let mut txn = engine.begin(wiz);
    /// # let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// # txn.commit().unwrap();
    /// assert!(engine.begin(wiz).schedule_trigger(id).unwrap());
    /// assert_eq!(engine.tick().unwrap().started, 1);
    /// ```
    pub fn schedule_trigger(&mut self, id: ScheduleId) -> Result<bool, Error> {
        self.committed_only(id, "schedule_trigger")?;
        Schedules::from_shared(&self.shared).trigger_now(self.perms, id)
    }

    /// `schedule_backfill(id, from, to)`: [`Schedules::backfill`] with this task's permissions,
    /// at once (docs/schedules.md §9.7); how many points it will fire.
    ///
    /// # Errors
    ///
    /// As [`Schedules::backfill`] and [`Txn::schedule_pause`].
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::Options;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// # let mut txn = engine.begin(wiz);
    /// # let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// # txn.commit().unwrap();
    /// let now = engine.now_unix_seconds();
    /// let err = engine.begin(wiz).schedule_backfill(id, now, now + 600.0).unwrap_err();
    /// assert!(err.to_string().contains("past range"));
    /// ```
    pub fn schedule_backfill(&mut self, id: ScheduleId, from: f64, to: f64) -> Result<u64, Error> {
        self.committed_only(id, "schedule_backfill")?;
        Schedules::from_shared(&self.shared).backfill(self.perms, id, from, to)
    }

    /// An operator action names a committed schedule: not one this transaction created (not
    /// there yet) or stopped (gone at commit).
    fn committed_only(&self, id: ScheduleId, action: &str) -> Result<(), Error> {
        let raw = id.get();
        if self.creates.iter().any(|d| d.id() == raw) {
            return Err(Error::invalid(
                id,
                format!(
                    "{action} acts on a committed schedule: commit its creation first (docs/schedules.md §9.9)"
                ),
            ));
        }
        if self.stops.contains(&raw) {
            return Err(Error::invalid(
                id,
                format!(
                    "{action} needs a live schedule: this transaction stops it (docs/schedules.md §9.9)"
                ),
            ));
        }
        Ok(())
    }
}
