//! An operator's actions on a store from outside any engine (docs/schedules.md §9.12): stop,
//! pause, resume, trigger and backfill. Each opens the store writable for its one transaction —
//! the engine's own durable-stop path on a `SQLite` file, one transaction with a `NOTIFY` on a
//! `postgres://` URL — and leaves a note every engine running on the store applies at its next
//! tick. None creates, converts or migrates a store.

use std::path::Path;

use super::{Inspector, server_url};
use crate::store::sqlite::SqliteStore;
use crate::store_rows::OperatorAction;
use crate::{Error, ScheduleId};

impl Inspector {
    /// Stops schedule `id` in the store at `path`, as an operator: deletes its row in a
    /// `synchronous=FULL` transaction — the engine's own durable-stop code path — so the stop has
    /// reached the disk when this returns. Returns whether the store held it (`false` is not an
    /// error, as with `schedule_stop`).
    ///
    /// The same transaction leaves a note in the store's `operator_stops` table: every engine
    /// running on the file drops the schedule at its next tick, before firing anything (see
    /// [`Schedules::take_operator_stops`](crate::Schedules::take_operator_stops)). The next
    /// engine that opens the file does not load it. Like [`Inspector::open`], this never creates, converts or
    /// migrates the file. On a `postgres://` URL the delete, the note in
    /// `tickstep_operator_stops` and a `NOTIFY tickstep_stops` are one transaction
    /// (docs/schedules.md §11.21).
    ///
    /// # Errors
    ///
    /// As [`Inspector::open`]; [`Error::Store`] (or [`Error::Database`] on a URL) if the delete
    /// fails (then nothing was deleted).
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// use tickstep_schedules::Inspector;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "upkeep");
    /// # let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(),
    /// #     Default::default()).unwrap();
    /// # let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "upkeep", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    ///
    /// assert!(Inspector::stop(&path, id).unwrap());
    /// assert!(!Inspector::stop(&path, id).unwrap(), "already gone");
    /// assert_eq!(Inspector::open(&path).unwrap().get(id).unwrap(), None);
    /// ```
    pub fn stop(path: impl AsRef<Path>, id: ScheduleId) -> Result<bool, Error> {
        let path = path.as_ref();
        let now = wall_now();
        if let Some(url) = server_url(path)? {
            #[cfg(feature = "postgres")]
            return crate::store::postgres::pg_inspector::stop(url, id.get(), now);
            #[cfg(not(feature = "postgres"))]
            let _ = url;
        }
        SqliteStore::open_existing(path)?.stop_as_operator(id.get(), now)
    }

    /// Pauses schedule `id` in the store at `path`, as [`Schedules::pause`] does in an engine,
    /// paused by `#-1` (the store's operator): the row records it and every engine running on
    /// the store applies it at its next poll, as it does a stop. Returns `false`, changing
    /// nothing, when it was paused already.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id the store does not hold, a bad note (docs/schedules.md
    /// §9.5), or a store older than operator actions; the store's error otherwise. Nothing is
    /// changed on error.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(Inspector::pause(&path, id, "disk full").unwrap());
    /// engine.tick().unwrap(); // the engine finds the note
    /// let pause = engine.begin(wiz).schedule_info(id).unwrap().pause.unwrap();
    /// assert_eq!((pause.by.0, pause.note.as_str()), (-1, "disk full"));
    /// ```
    ///
    /// [`Schedules::pause`]: crate::Schedules::pause
    pub fn pause(path: impl AsRef<Path>, id: ScheduleId, note: &str) -> Result<bool, Error> {
        let action = OperatorAction::Pause {
            note: note.to_owned(),
        };
        Self::act(path.as_ref(), id, &action).map(|n| n > 0)
    }

    /// Resumes schedule `id` in the store at `path` (docs/schedules.md §9.12); `false` when it
    /// was not paused. The engine holding it applies catch-up to the points it missed, as
    /// [`Schedules::resume`] does; with none running, the next to open it applies catch-up as
    /// after downtime (docs/schedules.md §11.8).
    ///
    /// # Errors
    ///
    /// As [`Inspector::pause`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(), tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let err = tickstep_schedules::Inspector::resume(&path, tickstep_schedules::ScheduleId::from_raw(5)).unwrap_err();
    /// assert_eq!(err.code(), "E_INVARG");
    /// ```
    ///
    /// [`Schedules::resume`]: crate::Schedules::resume
    pub fn resume(path: impl AsRef<Path>, id: ScheduleId) -> Result<bool, Error> {
        Self::act(path.as_ref(), id, &OperatorAction::Resume).map(|n| n > 0)
    }

    /// Asks for one firing of schedule `id` now (docs/schedules.md §9.6, §9.12): the engine
    /// holding it fires it at its next tick after it reads the note, or the next engine to open
    /// the store at its first tick; `false` when one was waiting already.
    ///
    /// # Errors
    ///
    /// As [`Inspector::pause`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(), tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let err = tickstep_schedules::Inspector::trigger(&path, tickstep_schedules::ScheduleId::from_raw(5)).unwrap_err();
    /// assert!(err.to_string().contains("no such schedule"));
    /// ```
    pub fn trigger(path: impl AsRef<Path>, id: ScheduleId) -> Result<bool, Error> {
        Self::act(path.as_ref(), id, &OperatorAction::Trigger).map(|n| n > 0)
    }

    /// Backfills schedule `id` over `[from, to]` (float Unix seconds, by the system clock), as
    /// [`Schedules::backfill`] does (docs/schedules.md §9.7, §9.12); how many points it will
    /// fire.
    ///
    /// # Errors
    ///
    /// As [`Schedules::backfill`] and [`Inspector::pause`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(), tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let id = tickstep_schedules::ScheduleId::from_raw(5);
    /// let err = tickstep_schedules::Inspector::backfill(&path, id, 20.0, 10.0).unwrap_err();
    /// assert!(err.to_string().contains("from must not be after to"));
    /// ```
    ///
    /// [`Schedules::backfill`]: crate::Schedules::backfill
    pub fn backfill(
        path: impl AsRef<Path>,
        id: ScheduleId,
        from: f64,
        to: f64,
    ) -> Result<u64, Error> {
        let (from, to) = crate::row_actions::backfill_bounds(from, to, wall_now())?;
        Self::act(path.as_ref(), id, &OperatorAction::Backfill { from, to })
    }

    fn act(path: &Path, id: ScheduleId, action: &OperatorAction) -> Result<u64, Error> {
        let now = wall_now();
        let answer = if let Some(url) = server_url(path)? {
            #[cfg(feature = "postgres")]
            {
                crate::store::postgres::pg_inspector::act(url, id.get(), action, now)?
            }
            #[cfg(not(feature = "postgres"))]
            {
                let _ = url;
                unreachable!("server_url refuses a URL without the postgres feature")
            }
        } else {
            SqliteStore::open_existing(path)?.act_as_operator(id.get(), action, now)?
        };
        answer.ok_or_else(|| {
            Error::invalid(id, "no such schedule in the store (docs/schedules.md §9.9)")
        })
    }
}

/// The system clock's wall time, Unix nanoseconds: what an operator's action is stamped with.
fn wall_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
