//! Transactions: how a host's task creates, stops and inspects schedules.

use std::rc::Rc;
use std::sync::Arc;

use crate::commit::Commit;
use crate::engine::Schedules;
use crate::engine::access::{Draft, NewSchedule, Summary};
use crate::engine::core::Shared;
use crate::info::{ScheduleInfo, ScheduleKind as Kind};
use crate::limits::{check_storable, seconds_to_nanos};
use crate::perms::{check_list_owner, check_player, may_manage};
use crate::{Calendar, Error, ObjId, Options, ScheduleId, Value};

mod actions;
mod named;

/// The latest representable deadline (docs/schedules.md §8.3).
const LAST_DEADLINE: &str = "18446744073 (Unix seconds, July 2554)";

/// A task's view of the engine, with its permissions.
///
/// A [`Txn`] carries the calling task's permissions and buffers its creations and stops, with the
/// semantics of MOO's `task_send()`: nothing is visible to other tasks or the scheduler until
/// [`Txn::commit`]; a rollback — [`Txn::rollback`] or simply dropping the transaction — means the
/// schedules never existed and their ids never fire. Inside the transaction its own creations are
/// already valid, listed and stoppable, so create-then-cancel in one task behaves sensibly.
///
/// Commit is atomic and durable: persistent creations and stops are written in one SQLite
/// transaction with `synchronous=FULL` before anything changes in memory. If
/// the write fails, nothing is applied. So a host that stores the returned id in its own database
/// inside the same task gets "both land or neither does".
///
/// Ids are handed out at creation time (they must be, so the task can store them) from a counter
/// that only goes up, even across restarts: the store's high-water mark always covers every id
/// handed out (it is raised, fsync'd, a block of 1,024 ids at a time before the first id of a
/// block leaves the engine). A rolled-back id is burnt, never reused.
///
/// ```
/// use tickstep_schedules::kernel::clock::ManualClock;
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// use tickstep_schedules::{Options, Schedules};
///
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// world.add_verb(wiz, "flush");
/// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
///
/// let mut txn = engine.begin(wiz);
/// let id = txn.schedule_at(wiz, "flush", engine.now_unix_seconds() + 2.0, vec![], Options::new()).unwrap();
/// assert!(txn.schedule_valid(id));
/// txn.rollback();
/// assert!(!engine.begin(wiz).schedule_valid(id), "rolled back: never existed");
/// ```
///
/// A transaction belongs to the engine's thread, like the engine itself:
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// let engine = tickstep_schedules::Schedules::in_memory(
///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
/// needs_send(engine.begin(tickstep_schedules::ObjId(1)));
/// ```
pub struct Txn {
    shared: Rc<Shared>,
    perms: ObjId,
    creates: Vec<Draft>,
    stops: Vec<u64>,
    /// Retired entries the caller stopped: their retained entry goes at commit.
    discards: Vec<u64>,
}

impl Txn {
    fn new(shared: Rc<Shared>, perms: ObjId) -> Self {
        Txn {
            shared,
            perms,
            creates: Vec::new(),
            stops: Vec::new(),
            discards: Vec::new(),
        }
    }

    /// The permissions this transaction acts with.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::ObjId;
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.begin(ObjId(4)).perms(), ObjId(4));
    /// ```
    pub fn perms(&self) -> ObjId {
        self.perms
    }

    /// `schedule_at(target, verb, when, args, options)`: call `target:verb(@args)` once at Unix
    /// time `when` (float seconds). A `when` in the past fires at the next tick.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for a `when` that is negative, not finite or later than
    /// 18446744073; a target that is not valid; a verb the caller cannot call now; a bad option;
    /// args or state holding NaN/infinity; state over 4 KB. [`Error::Perm`] for a `player` the
    /// caller does not control. [`Error::Store`] when the store cannot raise the id high-water
    /// mark. Nothing is created on error.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "ring");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let next_hour = (engine.now_unix_seconds() / 3600.0).floor() * 3600.0 + 3600.0;
    /// let id = txn.schedule_at(wiz, "ring", next_hour, vec![], Options::new()).unwrap();
    /// assert_eq!(txn.schedule_info(id).unwrap().next_run, next_hour);
    /// assert_eq!(txn.schedule_at(wiz, "ring", 2e10, vec![], Options::new()).unwrap_err().code(), "E_INVARG");
    /// ```
    pub fn schedule_at(
        &mut self,
        target: ObjId,
        verb: &str,
        when: f64,
        args: Vec<Value>,
        options: Options,
    ) -> Result<ScheduleId, Error> {
        let first = seconds_to_nanos(when).ok_or_else(|| {
            Error::invalid(
                Value::Float(when),
                format!("when must be a finite Unix time in seconds from 0 to {LAST_DEADLINE}"),
            )
        })?;
        self.create(
            Kind::At,
            target,
            verb,
            (first, 0, false),
            None,
            args,
            options,
        )
    }

    /// `schedule_every(target, verb, interval, args, options)`: call `target:verb(@args)` every
    /// `interval` seconds, the first time one interval from now. Intervals shorter than the
    /// engine's tick are raised to it and reported `interval_clamped`.
    ///
    /// # Errors
    ///
    /// As [`Txn::schedule_at`], with [`Error::InvalidArg`] for an interval that is negative, not
    /// finite, or reaches past 18446744073 from now.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "upkeep");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "upkeep", 0.001, vec![], Options::new()).unwrap();
    /// let info = txn.schedule_info(id).unwrap();
    /// assert!(info.interval_clamped);
    /// assert_eq!(info.interval, 0.01);
    /// ```
    pub fn schedule_every(
        &mut self,
        target: ObjId,
        verb: &str,
        interval: f64,
        args: Vec<Value>,
        options: Options,
    ) -> Result<ScheduleId, Error> {
        let requested = seconds_to_nanos(interval).ok_or_else(|| {
            Error::invalid(
                Value::Float(interval),
                format!(
                    "interval must be a finite number of seconds >= 0 that ends by {LAST_DEADLINE}"
                ),
            )
        })?;
        let (tick_ns, now) = (self.shared.tick_ns(), self.shared.now_unix_nanos());
        let clamped = requested < tick_ns;
        let interval_ns = requested.max(tick_ns);
        let first = now.checked_add(interval_ns).ok_or_else(|| {
            Error::invalid(
                Value::Float(interval),
                format!("interval reaches past the last representable deadline, {LAST_DEADLINE}"),
            )
        })?;
        self.create(
            Kind::Every,
            target,
            verb,
            (first, interval_ns, clamped),
            None,
            args,
            options,
        )
    }

    /// `schedule_cron(target, verb, expr, zone, args, options)`: call `target:verb(@args)` at
    /// every instant the cron expression `expr` names in the IANA time zone `zone`, under the
    /// DST policy of the `dst_gap` and `dst_fold` options (docs/schedules.md §14.12). The first
    /// firing is the calendar's first point after now. Catch-up, overlap, jitter, `max_faults`,
    /// firing limits and permissions apply as for [`Txn::schedule_every`]; catch-up counts the
    /// calendar's real points (docs/schedules.md §14.13).
    ///
    /// # Errors
    ///
    /// As [`Txn::schedule_at`], and [`Error::Calendar`] for an expression, zone or policy the
    /// calendar refuses: an unknown zone, `61 * * * *`, `0 0 30 2 *` (it never occurs), an empty
    /// expression or one over [`MAX_EXPR_LEN`](crate::MAX_EXPR_LEN) bytes. Nothing is created
    /// on error.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules, ScheduleKind};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "report");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_cron(wiz, "report", "0 3 * * MON-FRI", "Europe/Paris", vec![], Options::new())?;
    /// let info = txn.schedule_info(id)?;
    /// assert_eq!(info.kind, ScheduleKind::Cron);
    /// assert_eq!(info.calendar.unwrap().zone, "Europe/Paris");
    /// let bad = txn.schedule_cron(wiz, "report", "61 * * * *", "UTC", vec![], Options::new());
    /// assert_eq!(bad.unwrap_err().code(), "E_INVARG");
    /// # Ok::<(), tickstep_schedules::Error>(())
    /// ```
    pub fn schedule_cron(
        &mut self,
        target: ObjId,
        verb: &str,
        expr: &str,
        zone: &str,
        args: Vec<Value>,
        options: Options,
    ) -> Result<ScheduleId, Error> {
        let calendar = Calendar::new(expr, zone, options.dst())?;
        let now = self.shared.now_unix_nanos();
        let first = calendar.next_after(now).ok_or_else(|| {
            Error::invalid(
                format!("{expr:?} in {zone}"),
                format!(
                    "the calendar has no point after now and before {LAST_DEADLINE} (docs/schedules.md §14.12)"
                ),
            )
        })?;
        self.create(
            Kind::Cron,
            target,
            verb,
            (first, 0, false),
            Some(Arc::new(calendar)),
            args,
            options,
        )
    }

    /// Creates a schedule of `kind` whose first point is `first`, with `interval_ns` (and
    /// whether it was clamped) for `Every` and `calendar` for `Cron`.
    #[allow(clippy::too_many_arguments)] // the public entry points name every one
    fn create(
        &mut self,
        kind: Kind,
        target: ObjId,
        verb: &str,
        (first, interval_ns, interval_clamped): (u64, u64, bool),
        calendar: Option<Arc<Calendar>>,
        args: Vec<Value>,
        options: Options,
    ) -> Result<ScheduleId, Error> {
        for arg in &args {
            check_storable(arg, "args")?;
        }
        let resolved = options.resolve(kind.is_recurring())?;
        let world = self.shared.world();
        if verb.is_empty() {
            return Err(Error::invalid("\"\"", "verb must be a non-empty name"));
        }
        if !world.valid(target) {
            return Err(Error::invalid(target, "target must be a valid object"));
        }
        if !world.verb_callable(self.perms, target, verb) {
            return Err(Error::invalid(
                format!("{target}:{verb}"),
                format!(
                    "verb must exist and be callable now with the creator's permissions ({})",
                    self.perms
                ),
            ));
        }
        let player = options.player.unwrap_or(target);
        check_player(world, self.perms, player)?;
        let id = self.shared.draft(
            NewSchedule {
                kind,
                target,
                verb,
                first,
                interval_ns,
                interval_clamped,
                calendar,
                args,
                options,
                resolved,
                owner: self.perms,
                player,
                now: self.shared.now_unix_nanos(),
            },
            &mut self.creates,
            &self.stops,
        )?;
        Ok(ScheduleId::from_raw(id))
    }

    /// `schedule_stop(id)`: stops a live schedule when this transaction commits. Returns `true`
    /// when there was a live schedule to stop. An unknown, fired, retired or already-stopped id
    /// returns `false` and never raises; stopping a retired schedule you own (or any, as a wizard)
    /// also discards its retained entry at commit.
    ///
    /// # Errors
    ///
    /// [`Error::Perm`] when the schedule is live and the caller is neither its owner nor a wizard.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, ScheduleId, Schedules};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 1.0, vec![], Options::new()).unwrap();
    /// assert!(txn.schedule_stop(id).unwrap());
    /// assert!(!txn.schedule_stop(id).unwrap());
    /// assert!(!txn.schedule_stop(ScheduleId::from_raw(999)).unwrap());
    /// ```
    pub fn schedule_stop(&mut self, id: ScheduleId) -> Result<bool, Error> {
        let raw = id.get();
        if let Some(pos) = self.creates.iter().position(|d| d.id() == raw) {
            self.creates.remove(pos);
            return Ok(true);
        }
        if self.stops.contains(&raw) {
            return Ok(false);
        }
        let now = self.shared.now_unix_nanos();
        let Some(Summary { owner, live, .. }) = self.shared.lookup(raw, now) else {
            return Ok(false);
        };
        let allowed = may_manage(self.shared.world(), self.perms, owner);
        if live {
            if !allowed {
                return Err(Error::perm(
                    self.perms,
                    id,
                    "schedule_stop of a live schedule is for its owner or a wizard",
                ));
            }
            self.stops.push(raw);
            Ok(true)
        } else {
            if allowed && !self.discards.contains(&raw) {
                self.discards.push(raw);
            }
            Ok(false)
        }
    }

    /// `schedule_valid(id)`: whether `id` names a live schedule, as this transaction sees it (its
    /// own creations count; its own stops do not). Anyone may ask.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::ScheduleId;
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(!engine.begin(tickstep_schedules::ObjId(1)).schedule_valid(ScheduleId::from_raw(1)));
    /// ```
    pub fn schedule_valid(&self, id: ScheduleId) -> bool {
        let raw = id.get();
        if self.creates.iter().any(|d| d.id() == raw) {
            return true;
        }
        if self.stops.contains(&raw) {
            return false;
        }
        let now = self.shared.now_unix_nanos();
        self.shared.lookup(raw, now).is_some_and(|s| s.live)
    }

    /// `schedule_info(id)`: the schedule's record, live or retired within the last 60 s.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id that names nothing (unknown, stopped, or retired more than
    /// 60 s ago); [`Error::Perm`] when the caller is neither the owner nor a wizard.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::ScheduleId;
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// let err = engine.begin(tickstep_schedules::ObjId(1)).schedule_info(ScheduleId::from_raw(5)).unwrap_err();
    /// assert_eq!(err.code(), "E_INVARG");
    /// ```
    pub fn schedule_info(&self, id: ScheduleId) -> Result<ScheduleInfo, Error> {
        let raw = id.get();
        let unknown = || Error::invalid(id, "no such schedule");
        if let Some(d) = self.creates.iter().find(|d| d.id() == raw) {
            return Ok(self.shared.draft_info(d));
        }
        if self.stops.contains(&raw) {
            return Err(unknown());
        }
        let now = self.shared.now_unix_nanos();
        let owner = self
            .shared
            .lookup(raw, now)
            .map(|s| s.owner)
            .ok_or_else(unknown)?;
        if !may_manage(self.shared.world(), self.perms, owner) {
            return Err(Error::perm(
                self.perms,
                id,
                "schedule_info is for the schedule's owner or a wizard",
            ));
        }
        self.shared.info(raw, now).ok_or_else(unknown)
    }

    /// `schedules()` / `schedules(owner)`: live schedule ids in ascending order. Without an owner,
    /// a wizard sees every live schedule and anyone else their own; with one, only a wizard or that
    /// owner may ask.
    ///
    /// # Errors
    ///
    /// [`Error::Perm`] when `owner` is given, is not the caller, and the caller is not a wizard.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{ObjId, Options};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # let prog = world.add_programmer();
    /// # world.add_verb(prog, "v");
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(prog);
    /// let id = txn.schedule_every(prog, "v", 1.0, vec![], Options::new()).unwrap();
    /// assert_eq!(txn.schedules(None).unwrap(), vec![id]);
    /// assert_eq!(txn.schedules(Some(wiz)).unwrap_err().code(), "E_PERM");
    /// ```
    pub fn schedules(&self, owner: Option<ObjId>) -> Result<Vec<ScheduleId>, Error> {
        let world = self.shared.world();
        if let Some(owner) = owner {
            check_list_owner(world, self.perms, owner)?;
        }
        let everyone = owner.is_none() && world.is_wizard(self.perms);
        let wanted = owner.unwrap_or(self.perms);
        Ok(self.listing(|e| everyone || e.owner == wanted))
    }

    /// `schedules_for(obj)`: ids of the live schedules whose target is `obj`, for anyone — a
    /// recycle path must be able to find and stop them whoever created them. O(number of
    /// schedules).
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{ObjId, Options};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # let prog = world.add_programmer();
    /// # let room = world.add_object(wiz);
    /// # world.add_verb(room, "v");
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(room, "v", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert_eq!(engine.begin(prog).schedules_for(room), vec![id]);
    /// ```
    pub fn schedules_for(&self, obj: ObjId) -> Vec<ScheduleId> {
        self.listing(|e| e.target == obj)
    }

    /// Live ids matching `keep`, committed or created in this transaction, minus this
    /// transaction's stops, ascending.
    fn listing(&self, keep: impl Fn(&Summary) -> bool) -> Vec<ScheduleId> {
        let mut ids = Vec::new();
        self.shared
            .live_ids(|s| keep(s) && !self.stops.contains(&s.id), &mut ids);
        ids.extend(
            self.creates
                .iter()
                .map(Draft::summary)
                .filter(|s| keep(s))
                .map(|s| s.id),
        );
        ids.sort_unstable();
        ids.into_iter().map(ScheduleId::from_raw).collect()
    }

    /// Applies the transaction: persistent creations and stops are written to the store in one
    /// durable (fsync'd) SQLite transaction, then take effect in memory.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the write fails; then nothing was applied (the transaction is
    /// consumed, as a rolled-back task's would be).
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
    /// let id = txn.schedule_every(wiz, "v", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(engine.begin(wiz).schedule_valid(id));
    /// ```
    pub fn commit(mut self) -> Result<(), Error> {
        let now = self.shared.now_unix_nanos();
        let creates = std::mem::take(&mut self.creates);
        let stops = std::mem::take(&mut self.stops);
        let discards = std::mem::take(&mut self.discards);
        self.shared.commit(creates, &stops, &discards, now)
    }

    /// Commits like [`Txn::commit`], as a future: the creations and stops are handed to the
    /// store at once, and the future completes when they are durable and applied — what a task
    /// on an async runtime uses so that its thread never blocks on a round trip to a
    /// `PostgreSQL` server (docs/schedules.md §11.41). On a `SQLite` store or none the write is
    /// made before this returns and the future is ready at its first poll. The same all-or-nothing
    /// promise: on a store error the future completes with it and nothing is applied.
    ///
    /// Until it completes, nothing of the transaction is visible in memory (its creations are
    /// not listed yet, its stops have not dropped anything), while the engine keeps ticking.
    /// Dropping the future unfinished waits for the store's answer (see [`Commit`]).
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// async fn create(engine: &Schedules, wiz: tickstep_schedules::ObjId) -> Result<(), tickstep_schedules::Error> {
    ///     let mut txn = engine.begin(wiz);
    ///     txn.schedule_every(wiz, "v", 1.0, vec![], Options::new())?;
    ///     txn.commit_async().await // the thread serves other tasks meanwhile
    /// }
    /// # let _ = create(&engine, wiz);
    /// ```
    pub fn commit_async(mut self) -> Commit {
        let creates = std::mem::take(&mut self.creates);
        let stops = std::mem::take(&mut self.stops);
        let discards = std::mem::take(&mut self.discards);
        Commit::start(Rc::clone(&self.shared), creates, stops, discards)
    }

    /// Discards the transaction: its creations never existed, its stops never happened.
    /// Dropping a transaction does the same.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// engine.begin(tickstep_schedules::ObjId(1)).rollback();
    /// ```
    pub fn rollback(self) {}
}

impl Schedules {
    /// Opens a transaction with the calling task's permissions `perms` (its `task_perms()`).
    /// Creations and stops take effect when it commits; dropping it rolls back.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let txn = engine.begin(wiz);
    /// assert_eq!(txn.perms(), wiz);
    /// ```
    pub fn begin(&self, perms: ObjId) -> Txn {
        Txn::new(Rc::clone(self.shared()), perms)
    }
}
