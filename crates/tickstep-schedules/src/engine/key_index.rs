//! Schedule keys (docs/schedules.md §5.12–§5.18): the index of the live keyed schedules this
//! engine holds, create-if-absent, lookup by key, and the commit's key checks.
//!
//! The index holds live schedules only: a stop or a retirement takes the key out at once, so the
//! key is free for a new schedule (docs/schedules.md §5.16). A store several engines share holds
//! the keys of every node's persistent schedules behind a unique index, and is asked (one round
//! trip) about a key this engine does not hold, as an id is (docs/schedules.md §11.30). A store
//! only one engine uses answers nothing: the index is the whole truth there.

use std::rc::Rc;

use super::access::{Draft, Keyed, NewSchedule};
use super::core::{Core, Shared};
use super::entry::Entry;
use crate::key_rules::{check_key, first_difference};
use crate::row::ScheduleRow;
use crate::{Error, ObjId, ScheduleId};

/// A schedule holding a key: its definition, and whether it is persistent (rows always are).
struct Holder {
    row: ScheduleRow,
    persist: bool,
}

impl Draft {
    /// Whether this draft is `owner`'s schedule keyed `key`.
    pub(crate) fn is_keyed(&self, owner: ObjId, key: &str) -> bool {
        self.0.owner == owner && self.0.key().is_some_and(|k| &**k == key)
    }
}

impl Core {
    /// Adds a live keyed entry to the index. A key already held by another schedule here stays
    /// with it: only a non-persistent schedule (whose key the store never sees, docs/schedules.md
    /// §5.18) can meet a claimed row's key this way, and the older holder keeps it.
    pub(super) fn index_key(&mut self, e: &Entry) {
        let Some(key) = e.key().filter(|_| e.is_live()) else {
            return;
        };
        let slot = self.keys.entry((e.owner, Rc::clone(key))).or_insert(e.id);
        if *slot != e.id {
            tracing::warn!(schedule = e.id, holder = *slot, key = %key,
                "schedule key already held here by another schedule of the same owner");
        }
    }

    /// Takes `e`'s key out of the index (a stop, a drop), if it is `e` that holds it.
    pub(super) fn unindex_key(&mut self, e: &Entry) {
        if let Some(key) = e.key() {
            self.unindex(e.owner, key, e.id);
        }
    }

    /// Takes (`owner`, `key`) out of the index if schedule `id` holds it.
    pub(super) fn unindex(&mut self, owner: ObjId, key: &Rc<str>, id: u64) {
        let k = (owner, Rc::clone(key));
        if self.keys.get(&k) == Some(&id) {
            self.keys.remove(&k);
        }
    }

    /// The live schedule of `owner` keyed `key`, skipping `skip` (a transaction's stops): the
    /// one this engine holds, else, on a shared store, the row another engine holds. A row of a
    /// schedule this engine holds but has retired is not a holder: its delete is on its way.
    fn key_holder(
        &mut self,
        owner: ObjId,
        key: &str,
        skip: &[u64],
    ) -> Result<Option<Holder>, Error> {
        if let Some(&id) = self.keys.get(&(owner, Rc::from(key))) {
            if !skip.contains(&id)
                && let Some(e) = self.table.get(id)
            {
                return Ok(Some(Holder {
                    row: e.to_row(&self.verbs),
                    persist: e.persist,
                }));
            }
            return Ok(None);
        }
        let Some(store) = self.store.as_mut() else {
            return Ok(None);
        };
        let row = store.row_by_key(owner, key)?;
        Ok(row
            .filter(|r| !skip.contains(&r.id) && self.table.get(r.id).is_none())
            .map(|row| Holder { row, persist: true }))
    }

    /// Checks a transaction's keyed creations against what committed since they were made
    /// (another task took the key: docs/schedules.md §5.15), and gets this engine's retired rows
    /// out of the store before a new row may take their key. Nothing is applied on error.
    #[inline(never)]
    pub(super) fn prepare_keys(&mut self, drafts: &[Draft], stops: &[u64]) -> Result<(), Error> {
        let mut keyed = false;
        for d in drafts {
            let Some(key) = d.0.key() else { continue };
            keyed |= d.0.persist;
            if let Some(&id) = self.keys.get(&(d.0.owner, Rc::clone(key)))
                && !stops.contains(&id)
            {
                return Err(taken_meanwhile(key, d.0.owner, id));
            }
        }
        if keyed && !self.doomed_rows.is_empty() {
            // Retired rows go at the group commit; written first, the commit below never meets
            // a retired schedule's key in the store's unique index (docs/schedules.md §5.16).
            self.group_commit()?;
        }
        Ok(())
    }

    /// Explains a store's refusal of a commit holding keyed creations: when another engine
    /// committed a row under one of their keys first (docs/schedules.md §5.15), that is the error;
    /// otherwise the store's own.
    #[cold]
    pub(super) fn key_conflict(&mut self, error: Error, drafts: &[Draft]) -> Error {
        for d in drafts.iter().filter(|d| d.0.persist) {
            let Some(key) = d.0.key() else { continue };
            let key = Rc::clone(key);
            if let Ok(Some(holder)) = self.key_holder(d.0.owner, &key, &[])
                && holder.row.id != d.0.id
            {
                return taken_meanwhile(&key, d.0.owner, holder.row.id);
            }
        }
        error
    }
}

/// The refusal of a keyed creation committed after another took its key.
fn taken_meanwhile(key: &str, owner: ObjId, existing: u64) -> Error {
    Error::KeyTaken {
        key: key.to_owned(),
        owner,
        existing: ScheduleId::from_raw(existing),
        rule: "it was committed after this transaction created its own schedule under the key \
               (another task or node took it first; run the task again and the creation \
               returns it, docs/schedules.md §5.15)"
            .to_owned(),
    }
}

impl Shared {
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
        let wanted = core.new_entry(0, new);
        let wanted_row = wanted.to_row(&core.verbs);
        let holder = match own.iter().find(|d| d.is_keyed(owner, key)) {
            Some(d) => Some(Holder {
                row: d.0.to_row(&core.verbs),
                persist: d.0.persist,
            }),
            None => core.key_holder(owner, key, stops)?,
        };
        let Some(holder) = holder else {
            let mut entry = wanted;
            entry.id = core.allocate_id()?;
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
