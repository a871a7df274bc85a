//! The per-player quota of live schedules (docs/serve.md §4.3): how many each owner has, kept as
//! schedules are made, stopped and fired, and the one-shots whose firing ends them. One owned part
//! of the [`Server`](super::server::Server).
//!
//! On the server's one thread: plain `RefCell` state, never borrowed across an await.

use std::cell::RefCell;
use std::collections::HashMap;

use tickstep::schedules::{ObjId, ScheduleId};

/// Live schedules per owner, against the limit per player.
pub(crate) struct Quota {
    per_player: usize,
    /// Live schedules per owner.
    live: RefCell<HashMap<ObjId, usize>>,
    /// One-shot schedules not yet fired, and their owners (a firing ends one).
    one_shots: RefCell<HashMap<ScheduleId, ObjId>>,
}

impl Quota {
    /// No schedules counted yet, `per_player` allowed each.
    pub(crate) fn new(per_player: usize) -> Quota {
        Quota {
            per_player,
            live: RefCell::new(HashMap::new()),
            one_shots: RefCell::new(HashMap::new()),
        }
    }

    /// The limit per player.
    pub(crate) fn per_player(&self) -> usize {
        self.per_player
    }

    /// Whether `who` may make one more; if not, how many they have.
    pub(crate) fn room(&self, who: ObjId) -> Result<(), usize> {
        let live = self.live.borrow().get(&who).copied().unwrap_or(0);
        if live >= self.per_player {
            Err(live)
        } else {
            Ok(())
        }
    }

    /// Counts schedule `id` of `owner`, made or brought back from the store.
    pub(crate) fn count(&self, id: ScheduleId, owner: ObjId, one_shot: bool) {
        *self.live.borrow_mut().entry(owner).or_default() += 1;
        if one_shot {
            self.one_shots.borrow_mut().insert(id, owner);
        }
    }

    /// Schedule `id` of `owner` is gone (stopped, or its one firing started).
    pub(crate) fn forget(&self, owner: ObjId, id: ScheduleId) {
        self.one_shots.borrow_mut().remove(&id);
        if let Some(count) = self.live.borrow_mut().get_mut(&owner) {
            *count = count.saturating_sub(1);
        }
    }

    /// Schedule `id` of `owner` fired: a one-shot's firing ends it.
    pub(crate) fn fired(&self, owner: ObjId, id: ScheduleId) {
        let one_shot = self.one_shots.borrow().contains_key(&id);
        if one_shot {
            self.forget(owner, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_at_the_limit_has_room_again_once_one_is_stopped_or_a_one_shot_fires() {
        let quota = Quota::new(2);
        let (alice, bob) = (ObjId(1), ObjId(2));
        let (every, once) = (ScheduleId::from_raw(1), ScheduleId::from_raw(2));
        quota.count(every, alice, false);
        quota.count(once, alice, true);
        assert_eq!(quota.room(alice), Err(2));
        assert_eq!(quota.room(bob), Ok(()), "the limit is per player");
        quota.fired(alice, every);
        assert_eq!(
            quota.room(alice),
            Err(2),
            "a recurring schedule lives on after firing"
        );
        quota.fired(alice, once);
        assert_eq!(quota.room(alice), Ok(()), "a one-shot's firing ends it");
        quota.fired(alice, once);
        quota.count(once, alice, true);
        assert_eq!(
            quota.room(alice),
            Err(2),
            "a second firing is not counted twice"
        );
        quota.forget(alice, every);
        assert_eq!(quota.room(alice), Ok(()));
    }
}
