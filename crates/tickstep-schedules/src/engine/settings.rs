//! The engine's settings as it uses them, and the jitter they drive: what [`Config`] says,
//! turned into nanoseconds and bounds once at open, and the random generator it seeds.
//!
//! Keeps docs/schedules.md §4.8 (jitter, never earlier than one tick from now) and the
//! per-tick bounds of docs/schedules.md §10.2 and §10.5.

use super::config::Config;
use crate::limits::duration_nanos;

/// The settings a tick, a jitter draw and an operator pass read.
pub(super) struct Settings {
    /// [`Config::tick`] in nanoseconds, at least 1: the floor for intervals and jitter, and how
    /// often the store is polled for operator stops.
    pub(super) tick_ns: u64,
    /// [`Config::max_firings_per_tick`], at least 1.
    pub(super) max_per_tick: usize,
    /// [`Config::max_tick_time`]: the time a tick may spend starting firings.
    pub(super) max_tick_time: Option<std::time::Duration>,
    /// Draws jitter offsets; seeded from [`Config::rng_seed`] or the clock.
    pub(super) rng: fastrand::Rng,
    /// [`Config::hand_back_taken_over`]: a claimed row's running firings go to the host
    /// (docs/schedules.md §11.57) instead of settling as taken over.
    pub(super) hand_back_taken_over: bool,
}

impl Settings {
    /// The settings of `config`; `seed` seeds the generator when the config names none.
    pub(super) fn new(config: &Config, seed: u64) -> Self {
        Settings {
            tick_ns: duration_nanos(config.tick).max(1),
            max_per_tick: config.max_firings_per_tick.max(1),
            max_tick_time: config.max_tick_time,
            rng: fastrand::Rng::with_seed(config.rng_seed.unwrap_or(seed)),
            hand_back_taken_over: config.hand_back_taken_over,
        }
    }

    /// `point` moved by a uniform random offset in `[-jitter, +jitter]`, never earlier than one
    /// tick after `now`. Without jitter the point is kept as is.
    #[inline]
    pub(super) fn jittered(&mut self, point: u64, jitter_ns: u64, now: u64) -> u64 {
        if jitter_ns == 0 {
            return point;
        }
        let offset = self.rng.u64(0..=jitter_ns.saturating_mul(2));
        let at = if offset >= jitter_ns {
            point.saturating_add(offset - jitter_ns)
        } else {
            point.saturating_sub(jitter_ns - offset)
        };
        at.max(now.saturating_add(self.tick_ns))
    }
}
