//! The narrow API a [`Txn`](crate::Txn) uses, and all it may use: the clock and the world, a
//! [`Draft`] for each creation, a [`Summary`] of what it looks up, `schedule_info` records, live
//! ids, and one commit. A transaction never sees an entry or the engine's fields, so the engine's
//! layout can change without touching it.
//!
//! Each call borrows the engine for its own short step and returns with no borrow held, so the
//! transaction can ask the host's [`World`] between calls (permission checks are host code).

use std::rc::Rc;

use super::core::{Core, Shared};
use super::entry::{Entry, Extra, Kind, Limits};
use super::interner::Names;
use super::keys::Holder;
use crate::info::ScheduleInfo;
use crate::options::{Options, Resolved};
use crate::schedule_keys::{check_key, first_difference};
use crate::store::answer::Pending;
use crate::store_rows::{ChangeSet, Durability};
use crate::{Error, ObjId, ScheduleId, Value, World};

/// What a transaction may know of a schedule: enough to check permissions and filter listings.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Summary {
    pub(crate) id: u64,
    pub(crate) owner: ObjId,
    pub(crate) target: ObjId,
    /// Not retired.
    pub(crate) live: bool,
}

/// A schedule created inside a transaction and not committed yet: it has its id, and the engine
/// knows nothing else of it until [`Shared::commit`].
#[derive(Debug)]
pub(crate) struct Draft(pub(super) Entry);

impl Draft {
    pub(crate) fn id(&self) -> u64 {
        self.0.id
    }

    pub(crate) fn summary(&self) -> Summary {
        summary(&self.0)
    }

    /// Whether this draft is `owner`'s schedule keyed `key`.
    pub(crate) fn is_keyed(&self, owner: ObjId, key: &str) -> bool {
        self.0.owner == owner && self.0.key().is_some_and(|k| &**k == key)
    }
}

fn summary(e: &Entry) -> Summary {
    Summary {
        id: e.id,
        owner: e.owner,
        target: e.target,
        live: e.is_live(),
    }
}

/// What a keyed creation came to (docs/schedules.md §5.13).
pub(super) enum Keyed {
    /// Nothing held the key: a new schedule, committed with the transaction.
    New(Draft),
    /// The key names this schedule, of the same definition: nothing is created.
    Existing(u64),
}

/// Everything a creation has checked, ready to become a [`Draft`].
pub(crate) struct NewSchedule<'a> {
    pub(crate) kind: Kind,
    pub(crate) target: ObjId,
    pub(crate) verb: &'a str,
    /// The first cadence point (Unix nanoseconds).
    pub(crate) first: u64,
    pub(crate) interval_ns: u64,
    pub(crate) interval_clamped: bool,
    /// A `Cron` schedule's calendar, checked whole (docs/schedules.md §14.12).
    pub(crate) calendar: Option<std::sync::Arc<crate::Calendar>>,
    pub(crate) args: Vec<Value>,
    pub(crate) options: Options,
    pub(crate) resolved: Resolved,
    /// The creating task's permissions: owner and authority.
    pub(crate) owner: ObjId,
    pub(crate) player: ObjId,
    pub(crate) now: u64,
}

impl Shared {
    /// The clock's wall time, Unix nanoseconds.
    pub(crate) fn now_unix_nanos(&self) -> u64 {
        self.clock.unix_nanos()
    }

    /// The host's object model.
    pub(crate) fn world(&self) -> &dyn World {
        &*self.world
    }

    /// The engine's tick, nanoseconds (the floor for intervals).
    pub(crate) fn tick_ns(&self) -> u64 {
        self.core.borrow().settings.tick_ns
    }

    /// Hands out an id, builds the draft and adds it to the transaction's drafts `own`; returns
    /// its id. Fails only when the store cannot raise the id high-water mark.
    ///
    /// A keyed creation (docs/schedules.md §5.13) may instead come to the schedule its key
    /// already names, among the transaction's drafts and what it has not stopped (`stops`):
    /// then that schedule's id, with nothing added.
    pub(crate) fn draft(
        &self,
        new: NewSchedule<'_>,
        own: &mut Vec<Draft>,
        stops: &[u64],
    ) -> Result<u64, Error> {
        if new.options.key_name().is_some() {
            return match self.draft_keyed(new, own, stops)? {
                Keyed::New(draft) => {
                    let id = draft.id();
                    own.push(draft);
                    Ok(id)
                }
                Keyed::Existing(id) => Ok(id),
            };
        }
        let mut core = self.core.borrow_mut();
        let id = core.store.allocate_id()?;
        own.push(Draft(Entry::new(id, new, &mut core.names)));
        Ok(id)
    }

    /// The committed schedule `id` as lookups see it at `now` (a retired one until its retention
    /// runs out).
    pub(crate) fn lookup(&self, id: u64, now: u64) -> Option<Summary> {
        let mut core = self.core.borrow_mut();
        if let Some(e) = core.visible(id, now) {
            return Some(summary(e));
        }
        core.held_elsewhere(id).map(|e| summary(&e))
    }

    /// The `schedule_info` record of committed schedule `id`.
    pub(crate) fn info(&self, id: u64, now: u64) -> Option<ScheduleInfo> {
        let mut core = self.core.borrow_mut();
        // Only a live schedule this engine holds settles every firing that adds to its history
        // here, so only its read may be answered from the last one (docs/schedules.md §11.44).
        let (mut info, settled, holds) = if let Some(e) = core.visible(id, now) {
            (
                super::view::schedule_info(e, &core.names.verbs, now),
                e.settled(),
                e.is_live(),
            )
        } else {
            let e = core.held_elsewhere(id)?;
            (
                super::view::schedule_info(&e, &core.names.verbs, now),
                e.settled(),
                false,
            )
        };
        if info.persist {
            info.history = core.store.history(id, settled, holds);
        }
        Some(info)
    }

    /// The next `count` cadence points of committed schedule `id` (docs/schedules.md §9.8).
    pub(crate) fn upcoming(&self, id: u64, now: u64, count: usize) -> Option<Vec<u64>> {
        let mut core = self.core.borrow_mut();
        if let Some(e) = core.visible(id, now) {
            return Some(super::cadence::upcoming(e.cadence_view(), now, count));
        }
        core.held_elsewhere(id)
            .map(|e| super::cadence::upcoming(e.cadence_view(), now, count))
    }

    /// The `schedule_info` record of a draft.
    pub(crate) fn draft_info(&self, draft: &Draft) -> ScheduleInfo {
        let now = self.clock.unix_nanos();
        super::view::schedule_info(&draft.0, &self.core.borrow().names.verbs, now)
    }

    /// Appends the ids of live committed schedules that `keep` accepts.
    pub(crate) fn live_ids(&self, keep: impl Fn(&Summary) -> bool, out: &mut Vec<u64>) {
        let core = self.core.borrow();
        out.extend(
            core.table
                .iter()
                .filter(|e| e.is_live())
                .map(summary)
                .filter(|s| keep(s))
                .map(|s| s.id),
        );
    }

    /// Applies a transaction: the durable part first (one synced store commit), then memory; on a
    /// store error nothing changes.
    pub(crate) fn commit(
        &self,
        drafts: Vec<Draft>,
        stops: &[u64],
        discards: &[u64],
        now: u64,
    ) -> Result<(), Error> {
        let mut core = self.core.borrow_mut();
        core.check_keys(&drafts, stops)?;
        if let Some(mut changes) = durable_changes(&core, &drafts, stops, discards)
            && let Some(store) = core.store.backend.as_mut()
            && let Err(error) = store.commit(&mut changes, Durability::Synced)
        {
            return Err(core.key_conflict(error, &drafts));
        }
        core.apply_committed(drafts, stops, discards, now);
        Ok(())
    }

    /// The durable half of an awaited commit (docs/schedules.md §11.41): hands the store the
    /// transaction's rows and returns the answer to await; `None` when nothing needs writing.
    /// Nothing changes in memory until [`Shared::finish_commit`].
    ///
    /// # Errors
    ///
    /// A key the transaction would take that is already taken (docs/schedules.md §5.15), with
    /// nothing handed to the store.
    pub(crate) fn start_commit(
        &self,
        drafts: &[Draft],
        stops: &[u64],
        discards: &[u64],
    ) -> Result<Option<Pending<Result<usize, Error>>>, Error> {
        let mut core = self.core.borrow_mut();
        core.check_keys(drafts, stops)?;
        let Some(mut changes) = durable_changes(&core, drafts, stops, discards) else {
            return Ok(None);
        };
        let Some(store) = core.store.backend.as_mut() else {
            return Ok(None);
        };
        Ok(Some(store.start_synced_commit(&mut changes)))
    }

    /// A store's refusal of an awaited commit, named as the key it lost when another task or
    /// node took that key meanwhile (docs/schedules.md §5.15).
    pub(crate) fn refusal(&self, error: Error, drafts: &[Draft]) -> Error {
        self.core.borrow_mut().key_conflict(error, drafts)
    }

    /// The in-memory half of an awaited commit, once its write is durable.
    pub(crate) fn finish_commit(&self, drafts: Vec<Draft>, stops: &[u64], discards: &[u64]) {
        let now = self.clock.unix_nanos();
        self.core
            .borrow_mut()
            .apply_committed(drafts, stops, discards, now);
    }

    /// Create-if-absent (docs/schedules.md §5.13, §5.14): the schedule `new` describes, under
    /// `key`, unless a live schedule of the same owner holds the key — one of `own` (the
    /// transaction's drafts), one this engine holds, or one another engine holds — minus
    /// `stops`. The same definition returns that schedule; a different one is
    /// [`Error::KeyTaken`]. An id is handed out only for a new schedule.
    #[inline(never)]
    pub(super) fn draft_keyed(
        &self,
        new: NewSchedule<'_>,
        own: &[Draft],
        stops: &[u64],
    ) -> Result<Keyed, Error> {
        let key = new.options.key_name().unwrap_or_default().to_owned();
        check_key(&key)?;
        let key = key.as_str();
        let owner = new.owner;
        let mut core = self.core.borrow_mut();
        let wanted = Entry::new(0, new, &mut core.names);
        let wanted_row = wanted.to_row(&core.names.verbs);
        let holder = match own.iter().find(|d| d.is_keyed(owner, key)) {
            Some(d) => Some(Holder {
                row: d.0.to_row(&core.names.verbs),
                persist: d.0.persist,
            }),
            None => core.key_holder(owner, key, stops)?,
        };
        let Some(holder) = holder else {
            let mut entry = wanted;
            entry.id = core.store.allocate_id()?;
            return Ok(Keyed::New(Draft(entry)));
        };
        let differs = first_difference(&wanted_row, &holder.row)
            .or((wanted.persist != holder.persist).then_some("persist"));
        match differs {
            None => Ok(Keyed::Existing(holder.row.id)),
            Some(field) => Err(Error::KeyTaken {
                key: key.to_owned(),
                owner,
                existing: ScheduleId::from_raw(holder.row.id),
                rule: format!(
                    "its {field} differs; a keyed creation returns the existing schedule only \
                     when it defines the same one (stop it first to replace it, \
                     docs/schedules.md §5.14)"
                ),
            }),
        }
    }

    /// Lookup by key (docs/schedules.md §5.17): the live schedule of `owner` keyed `key`, held
    /// here or by another engine sharing the store, skipping `skip`.
    pub(crate) fn find_key(
        &self,
        owner: ObjId,
        key: &str,
        skip: &[u64],
    ) -> Result<Option<u64>, Error> {
        let mut core = self.core.borrow_mut();
        Ok(core.key_holder(owner, key, skip)?.map(|h| h.row.id))
    }
}

impl Entry {
    /// The entry `new` describes, with id `id`, its verb and calendar interned in `names`.
    /// Inlined into the unkeyed creation, which then
    /// builds the entry in place in the transaction's drafts: left to the compiler, it was a call
    /// and a copy of the entry, 2% more instructions per creation than before keys (measured with
    /// callgrind over 20,000 `create_inmem` creations; always inlined, 0.5% fewer).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn new(id: u64, new: NewSchedule<'_>, names: &mut Names) -> Entry {
        let verb = names.verbs.intern(new.verb);
        let NewSchedule {
            args,
            options,
            calendar,
            ..
        } = new;
        let limits = Limits {
            time_limit_ns: new.resolved.time_limit_ns,
            tick_limit: new.resolved.tick_limit,
        };
        let key: Option<Rc<str>> = options.key.as_deref().map(Rc::from);
        let policies = new.resolved.policies;
        let has_extra = !args.is_empty()
            || options.state.is_some()
            || !limits.is_none()
            || key.is_some()
            || !policies.is_default();
        let extra = has_extra.then(|| {
            Box::new(Extra {
                args: (!args.is_empty()).then(|| Rc::from(args)),
                state: options.state.map(Rc::new),
                limits,
                key,
                policies,
                ..Extra::default()
            })
        });
        Entry {
            id,
            fire_at: new.first,
            next_run: new.first,
            interval_ns: new.interval_ns,
            jitter_ns: new.resolved.jitter_ns,
            created_at: new.now,
            last_run: 0,
            run_count: 0,
            fault_count: 0,
            missed_count: 0,
            overlap_count: 0,
            last_duration_ns: 0,
            target: new.target,
            owner: new.owner,
            player: new.player,
            verb,
            max_faults: options.max_faults,
            consecutive_faults: 0,
            backlog: 0,
            kind: new.kind,
            catchup: options.catchup,
            overlap: options.overlap,
            adaptive: new.resolved.adaptive,
            pass_elapsed: options.pass_elapsed,
            persist: options.persist,
            interval_clamped: new.interval_clamped,
            // Not in the heap until commit; armed so schedule_info shows the first deadline.
            armed: true,
            dirty: false,
            extra,
            calendar: calendar.map(|c| names.calendars.intern(c)),
        }
    }
}

/// What a transaction writes to the store, synced (see [`StoreSide::durable_changes`]).
///
/// [`StoreSide::durable_changes`]: super::store_side::StoreSide::durable_changes
#[inline]
fn durable_changes(
    core: &Core,
    drafts: &[Draft],
    stops: &[u64],
    discards: &[u64],
) -> Option<ChangeSet> {
    core.store.durable_changes(
        (&core.table, &core.names.verbs),
        drafts.iter().map(|d| &d.0),
        stops.iter().chain(discards).copied(),
    )
}
