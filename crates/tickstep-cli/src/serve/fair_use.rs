//! The world's fair use (docs/serve.md §11.3–§11.6): the rates the command line sets, and the
//! buckets that hold them — new schedules per player and per address, new names and failed logins
//! per address, says per player, and scheduled says for the whole world. One owned part of the
//! [`Server`](super::server::Server); the buckets themselves are [`Limiter`]s.
//!
//! Time is passed in, never read here, so the tests drive it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use tickstep::schedules::ObjId;

use super::limits::{self, Limiter, address_key, wait_text};

/// The limits the command line sets (docs/serve.md §1.1, §11).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FairUse {
    pub(crate) creates_per_player: Option<limits::Rate>,
    pub(crate) creates_per_address: Option<limits::Rate>,
    pub(crate) names_per_address: Option<limits::Rate>,
}

/// The fair-use buckets (docs/serve.md §11).
pub(crate) struct FairUseBuckets {
    creates_per_player: Limiter<ObjId>,
    creates_per_address: Limiter<IpAddr>,
    pub(crate) names_per_address: Limiter<IpAddr>,
    pub(crate) failed_logins: Limiter<IpAddr>,
    says_per_player: Limiter<ObjId>,
    scheduled_says: Limiter<()>,
    /// Scheduled says not delivered since `stats` last reported them.
    says_dropped: u64,
    /// When each owner was last told their schedules' says were dropped.
    dropped_noted: HashMap<ObjId, Instant>,
}

/// What became of a schedule's `say` (docs/serve.md §11.6).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ScheduledSay {
    /// Within the world's rate: said.
    Said,
    /// Over it: dropped and counted; its owner was told within the last minute.
    Dropped,
    /// Over it: dropped and counted; its owner is to be told (at most once a minute).
    DroppedTellOwner,
}

/// How often an owner is told their schedules' says were dropped.
const DROPPED_NOTE_EVERY: Duration = Duration::from_secs(60);

impl FairUseBuckets {
    /// Empty buckets for the rates `fair` sets, and the fixed ones of docs/serve.md §11.
    pub(crate) fn new(fair: FairUse) -> FairUseBuckets {
        FairUseBuckets {
            creates_per_player: Limiter::optional(fair.creates_per_player),
            creates_per_address: Limiter::optional(fair.creates_per_address),
            names_per_address: Limiter::optional(fair.names_per_address),
            failed_logins: Limiter::new(limits::FAILED_LOGINS_PER_ADDRESS),
            says_per_player: Limiter::new(limits::SAYS_PER_PLAYER),
            scheduled_says: Limiter::new(limits::SCHEDULED_SAYS),
            says_dropped: 0,
            dropped_noted: HashMap::new(),
        }
    }

    /// Takes a creation from the player's and the address's buckets (docs/serve.md §11.3): both
    /// must have one, and a refusal takes from neither. A refusal is the reply's line.
    pub(crate) fn take_creation(
        &mut self,
        who: ObjId,
        from: IpAddr,
        now: Instant,
    ) -> Result<(), String> {
        let address = address_key(from);
        let refused = |rate: Option<limits::Rate>, whose: &str, wait| {
            let rate = rate.expect("only a limiter with a rate refuses");
            format!(
                "error: too many new schedules: {} at once, then {} a second per {whose}; \
                 try again in {}",
                rate.burst,
                rate.per_second,
                wait_text(wait)
            )
        };
        if let Err(wait) = self.creates_per_player.check(who, now) {
            return Err(refused(self.creates_per_player.rate(), "player", wait));
        }
        if let Err(wait) = self.creates_per_address.check(address, now) {
            return Err(refused(self.creates_per_address.rate(), "address", wait));
        }
        let _ = self.creates_per_player.take(who, now);
        let _ = self.creates_per_address.take(address, now);
        Ok(())
    }

    /// Takes one of `who`'s says (docs/serve.md §11.7), or says how long to wait.
    pub(crate) fn take_say(&mut self, who: ObjId, now: Instant) -> Result<(), Duration> {
        self.says_per_player.take(who, now)
    }

    /// Takes a scheduled say of `owner`'s from the world's bucket (docs/serve.md §11.6); one over
    /// the rate is counted as dropped.
    pub(crate) fn take_scheduled_say(&mut self, owner: ObjId, now: Instant) -> ScheduledSay {
        if self.scheduled_says.take((), now).is_ok() {
            return ScheduledSay::Said;
        }
        self.says_dropped += 1;
        let noted = self.dropped_noted.get(&owner).copied();
        if noted.is_some_and(|at| now.duration_since(at) < DROPPED_NOTE_EVERY) {
            return ScheduledSay::Dropped;
        }
        self.dropped_noted.insert(owner, now);
        ScheduledSay::DroppedTellOwner
    }

    /// The scheduled says dropped since the last call (for `stats`).
    pub(crate) fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.says_dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets() -> FairUseBuckets {
        FairUseBuckets::new(FairUse {
            creates_per_player: Some(limits::Rate {
                burst: 2.0,
                per_second: 1.0,
            }),
            creates_per_address: None,
            names_per_address: None,
        })
    }

    #[test]
    fn a_burst_of_scheduled_says_is_said_then_dropped_and_the_owner_told_once_a_minute() {
        let mut fair = buckets();
        let start = Instant::now();
        let (alice, bob) = (ObjId(1), ObjId(2));
        let burst = limits::SCHEDULED_SAYS.burst as usize;
        for _ in 0..burst {
            assert_eq!(fair.take_scheduled_say(alice, start), ScheduledSay::Said);
        }
        assert_eq!(
            fair.take_scheduled_say(alice, start),
            ScheduledSay::DroppedTellOwner
        );
        assert_eq!(fair.take_scheduled_say(alice, start), ScheduledSay::Dropped);
        // Each owner is told for themselves.
        assert_eq!(
            fair.take_scheduled_say(bob, start),
            ScheduledSay::DroppedTellOwner
        );
        // The bucket refills as time passes: bob's says empty it again (ending in one drop each
        // time) before alice's is tried.
        let later = start + Duration::from_millis(59_999); // just inside the minute
        while fair.take_scheduled_say(bob, later) == ScheduledSay::Said {}
        assert_eq!(fair.take_scheduled_say(alice, later), ScheduledSay::Dropped);
        let minute = start + DROPPED_NOTE_EVERY;
        while fair.take_scheduled_say(bob, minute) == ScheduledSay::Said {}
        assert_eq!(
            fair.take_scheduled_say(alice, minute),
            ScheduledSay::DroppedTellOwner
        );
        assert_eq!(fair.take_dropped(), 7, "every drop counted");
        assert_eq!(fair.take_dropped(), 0, "counted since the last call");
    }

    #[test]
    fn a_refused_creation_takes_nothing_and_names_the_rate() {
        let mut fair = buckets();
        let now = Instant::now();
        let (who, from) = (ObjId(1), IpAddr::from([127, 0, 0, 1]));
        assert!(fair.take_creation(who, from, now).is_ok());
        assert!(fair.take_creation(who, from, now).is_ok());
        let refused = fair.take_creation(who, from, now).unwrap_err();
        assert!(
            refused.contains("2 at once, then 1 a second per player"),
            "{refused}"
        );
        assert!(
            fair.take_creation(who, from, now + Duration::from_secs(1))
                .is_ok()
        );
    }
}
