//! Schedule keys (docs/schedules.md §5.12–§5.18): the index of the live keyed schedules this
//! engine holds. Create-if-absent and lookup by key are [`access`](super::access)'s, the commit's
//! key checks `Core`'s ([`lifecycle`](super::lifecycle)).
//!
//! The index holds live schedules only: a stop or a retirement takes the key out at once, so the
//! key is free for a new schedule (docs/schedules.md §5.16). A store several engines share holds
//! the keys of every node's persistent schedules behind a unique index, and is asked (one round
//! trip) about a key this engine does not hold, as an id is (docs/schedules.md §11.30). A store
//! only one engine uses answers nothing: the index is the whole truth there.

use std::collections::HashMap;
use std::rc::Rc;

use super::entry::Entry;
use crate::store_rows::ScheduleRow;
use crate::{Error, ObjId, ScheduleId};

/// The live keyed schedules this engine holds, by (owner, key) (docs/schedules.md §5.12).
#[derive(Default)]
pub(super) struct Keys {
    map: HashMap<(ObjId, Rc<str>), u64>,
}

impl Keys {
    /// Adds a live keyed entry to the index. A key already held by another schedule here stays
    /// with it: only a non-persistent schedule (whose key the store never sees, docs/schedules.md
    /// §5.18) can meet a claimed row's key this way, and the older holder keeps it.
    pub(super) fn index(&mut self, e: &Entry) {
        let Some(key) = e.key().filter(|_| e.is_live()) else {
            return;
        };
        let slot = self.map.entry((e.owner, Rc::clone(key))).or_insert(e.id);
        if *slot != e.id {
            tracing::warn!(schedule = e.id, holder = *slot, key = %key,
                "schedule key already held here by another schedule of the same owner");
        }
    }

    /// Takes `e`'s key out of the index (a stop, a drop), if it is `e` that holds it.
    pub(super) fn unindex_entry(&mut self, e: &Entry) {
        if let Some(key) = e.key() {
            self.unindex(e.owner, key, e.id);
        }
    }

    /// Takes (`owner`, `key`) out of the index if schedule `id` holds it.
    pub(super) fn unindex(&mut self, owner: ObjId, key: &Rc<str>, id: u64) {
        let k = (owner, Rc::clone(key));
        if self.map.get(&k) == Some(&id) {
            self.map.remove(&k);
        }
    }

    /// The schedule here that holds `owner`'s key `key`.
    pub(super) fn holder(&self, owner: ObjId, key: &str) -> Option<u64> {
        self.map.get(&(owner, Rc::from(key))).copied()
    }
}

/// A schedule holding a key: its definition, and whether it is persistent (rows always are).
pub(super) struct Holder {
    pub(super) row: ScheduleRow,
    pub(super) persist: bool,
}

/// The refusal of a keyed creation committed after another took its key.
pub(super) fn taken_meanwhile(key: &str, owner: ObjId, existing: u64) -> Error {
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
