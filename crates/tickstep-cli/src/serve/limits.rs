//! Fair use: token buckets per player, per address and for the whole world
//! (docs/serve.md §11.3–§11.8).
//!
//! A bucket holds up to `burst` tokens and gains `per_second` of them as time passes; each act
//! takes one, and an act that finds none is refused with how long to wait. Buckets are kept in a
//! map per key (a player id, an IP address); a map that reaches [`MAX_KEYS`] first forgets the
//! keys whose buckets are full again (they are the same as new ones), and then, if it is still
//! full, one busy key, so memory stays bounded however many addresses come and go. IPv6
//! addresses are keyed by their /64 ([`address_key`]), the block one host is usually given. Time is passed in, never read here, so the tests drive it.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// The most keys one [`Limiter`] remembers before forgetting the ones at rest.
const MAX_KEYS: usize = 10_000;

/// How fast an act may be repeated: a burst, then a steady rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rate {
    /// Acts allowed at once, from rest.
    pub(crate) burst: f64,
    /// Acts regained per second.
    pub(crate) per_second: f64,
}

// New schedules per player and per address: `--creates-per-player` (5 a second) and
// `--creates-per-address` (10 a second), each with bursts of four seconds' worth
// ([`Rate::per_second`], docs/serve.md §11.3).

/// New names per address by default (`--names-per-address`): 5, then one every 10 minutes (docs/serve.md §11.4).
pub(crate) const NAMES_PER_ADDRESS: Rate = Rate {
    burst: 5.0,
    per_second: 1.0 / 600.0,
};

impl Rate {
    /// A per-second limit `n` from the command line: bursts of four seconds' worth; `None` for 0
    /// (no limit).
    pub(crate) fn per_second(n: u32) -> Option<Rate> {
        (n > 0).then(|| Rate {
            burst: 4.0 * f64::from(n),
            per_second: f64::from(n),
        })
    }

    /// A cap of `n` new names per address from the command line, regained one every 10 minutes;
    /// `None` for 0 (no limit).
    pub(crate) fn names(n: u32) -> Option<Rate> {
        (n > 0).then(|| Rate {
            burst: f64::from(n),
            per_second: NAMES_PER_ADDRESS.per_second,
        })
    }
}
/// Failed logins per address: 5, then one every 12 seconds (docs/serve.md §10.6).
pub(crate) const FAILED_LOGINS_PER_ADDRESS: Rate = Rate {
    burst: 5.0,
    per_second: 1.0 / 12.0,
};
/// Commands one connection may send: 500 at once, then 1,000 a second; a connection over it
/// waits, its next command read only when it has a token, so a client looping as fast as the
/// server answers cannot take the server's one thread from the others (docs/serve.md §11.11).
pub(crate) const COMMANDS_PER_CONNECTION: Rate = Rate {
    burst: 500.0,
    per_second: 1_000.0,
};
/// How long a connection's next command waits after a creation the rate refused
/// (docs/serve.md §11.3): a create/stop loop is then answered 20 times a second rather than the
/// 1,000 of its pace (docs/serve.md §11.11), so refusing it costs the server's thread almost
/// nothing (docs/serve.md §11.12).
pub(crate) const REFUSED_CREATION_HOLD: Duration = Duration::from_millis(50);
/// A player's `say`: 10 at once, then 2 a second (docs/serve.md §11.6).
pub(crate) const SAYS_PER_PLAYER: Rate = Rate {
    burst: 10.0,
    per_second: 2.0,
};
/// Lines schedules broadcast (`say` firings), the whole world together: 20 at once, then 10 a
/// second, so no number of players' schedules sends everyone more (docs/serve.md §11.6).
pub(crate) const SCHEDULED_SAYS: Rate = Rate {
    burst: 20.0,
    per_second: 10.0,
};

/// One bucket.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn refill(&mut self, rate: Rate, now: Instant) {
        let gained = now.saturating_duration_since(self.at).as_secs_f64() * rate.per_second;
        self.tokens = (self.tokens + gained).min(rate.burst);
        self.at = now;
    }
}

/// Buckets of one [`Rate`], one per key; or no limit at all.
#[derive(Debug)]
pub(crate) struct Limiter<K> {
    rate: Option<Rate>,
    buckets: HashMap<K, Bucket>,
}

impl<K: Hash + Eq + Copy> Limiter<K> {
    pub(crate) fn new(rate: Rate) -> Limiter<K> {
        Limiter::optional(Some(rate))
    }

    /// A limiter at `rate`, or one that allows everything (`None`).
    pub(crate) fn optional(rate: Option<Rate>) -> Limiter<K> {
        Limiter {
            rate,
            buckets: HashMap::new(),
        }
    }

    /// The rate this limiter applies, if any.
    pub(crate) fn rate(&self) -> Option<Rate> {
        self.rate
    }

    /// Whether `key` has a token now; `Err(wait)` until it gains one. Takes nothing.
    pub(crate) fn check(&mut self, key: K, now: Instant) -> Result<(), Duration> {
        let Some(rate) = self.rate else {
            return Ok(());
        };
        let bucket = self.bucket(rate, key, now);
        if bucket.tokens >= 1.0 {
            Ok(())
        } else {
            let missing = 1.0 - bucket.tokens;
            Err(Duration::from_secs_f64(missing / rate.per_second))
        }
    }

    /// Takes a token of `key`'s, or says how long until there is one.
    pub(crate) fn take(&mut self, key: K, now: Instant) -> Result<(), Duration> {
        self.check(key, now)?;
        if let Some(rate) = self.rate {
            self.bucket(rate, key, now).tokens -= 1.0;
        }
        Ok(())
    }

    fn bucket(&mut self, rate: Rate, key: K, now: Instant) -> &mut Bucket {
        if self.buckets.len() >= MAX_KEYS && !self.buckets.contains_key(&key) {
            self.buckets.retain(|_, b| {
                b.refill(rate, now);
                b.tokens < rate.burst
            });
            // Still full of busy keys (a flood from many addresses): one makes room, so the
            // map never grows past the bound.
            if self.buckets.len() >= MAX_KEYS {
                let evicted = self.buckets.keys().next().copied();
                if let Some(evicted) = evicted {
                    self.buckets.remove(&evicted);
                }
            }
        }
        let bucket = self.buckets.entry(key).or_insert(Bucket {
            tokens: rate.burst,
            at: now,
        });
        bucket.refill(rate, now);
        bucket
    }

    /// How many keys are remembered (for the tests of the bound).
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.buckets.len()
    }

    /// The tokens `key` has at `now` (for the tests that model a limit: docs/serve.md §10.6).
    #[cfg(test)]
    pub(crate) fn tokens(&mut self, key: K, now: Instant) -> f64 {
        match self.rate {
            Some(rate) => self.bucket(rate, key, now).tokens,
            None => f64::INFINITY,
        }
    }
}

/// The key of an address's buckets: an IPv4 address itself, an IPv6 one by its /64 prefix.
pub(crate) fn address_key(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            std::net::IpAddr::V6(prefix.into())
        }
        std::net::IpAddr::V6(v6) => std::net::IpAddr::V4(v6.to_ipv4_mapped().expect("mapped")),
        v4 @ std::net::IpAddr::V4(_) => v4,
    }
}

/// A wait as a player reads it: `0.2 s`, `9 min`.
pub(crate) fn wait_text(wait: Duration) -> String {
    let secs = wait.as_secs_f64();
    if secs < 60.0 {
        format!("{:.1} s", secs.max(0.1))
    } else {
        format!("{} min", (secs / 60.0).ceil())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_steady_rate() {
        let t0 = Instant::now();
        let mut limiter = Limiter::new(Rate {
            burst: 3.0,
            per_second: 2.0,
        });
        for _ in 0..3 {
            assert_eq!(limiter.take(1, t0), Ok(()));
        }
        assert_eq!(limiter.take(1, t0), Err(Duration::from_millis(500)));
        assert_eq!(
            limiter.take(2, t0),
            Ok(()),
            "another key has its own bucket"
        );
        let later = t0 + Duration::from_millis(500);
        assert_eq!(limiter.take(1, later), Ok(()));
        assert!(limiter.take(1, later).is_err());
        // A long rest refills only up to the burst.
        let rested = t0 + Duration::from_secs(3_600);
        for _ in 0..3 {
            assert_eq!(limiter.take(1, rested), Ok(()));
        }
        assert!(limiter.take(1, rested).is_err());
    }

    #[test]
    fn no_rate_allows_everything_and_remembers_nothing() {
        let t0 = Instant::now();
        let mut limiter = Limiter::optional(None);
        for _ in 0..1_000 {
            assert!(limiter.take(1, t0).is_ok());
        }
        assert_eq!(limiter.remembered(), 0);
    }

    #[test]
    fn check_takes_nothing() {
        let t0 = Instant::now();
        let mut limiter = Limiter::new(Rate {
            burst: 1.0,
            per_second: 1.0,
        });
        assert!(limiter.check(7, t0).is_ok());
        assert!(limiter.check(7, t0).is_ok());
        assert!(limiter.take(7, t0).is_ok());
        assert!(limiter.check(7, t0).is_err());
    }

    #[test]
    fn keys_at_rest_are_forgotten_so_memory_stays_bounded() {
        let t0 = Instant::now();
        let mut limiter = Limiter::new(Rate::per_second(10).unwrap());
        for key in 0..MAX_KEYS as u32 {
            limiter.take(key, t0).unwrap();
        }
        assert_eq!(limiter.remembered(), MAX_KEYS);
        // Ten seconds on, every bucket is full again: a new key forgets them all.
        limiter
            .take(u32::MAX, t0 + Duration::from_secs(10))
            .unwrap();
        assert_eq!(limiter.remembered(), 1);
    }

    #[test]
    fn waits_read_as_a_player_would() {
        assert_eq!(wait_text(Duration::from_millis(230)), "0.2 s");
        assert_eq!(wait_text(Duration::from_millis(1)), "0.1 s");
        assert_eq!(wait_text(Duration::from_secs(540)), "9 min");
    }
}
