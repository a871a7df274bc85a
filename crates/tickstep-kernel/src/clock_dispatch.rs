//! Static dispatch over the workspace's clocks, and budget deadlines in raw counter ticks.
//!
//! The scheduler reads its clock before every task. Behind a `Box<dyn Clock>` that read is an
//! indirect call; behind [`AnyClock`] it is a match the compiler inlines for the two clocks the
//! workspace ships. A [`Deadline`] goes one step further for a [`SystemClock`]: the budget
//! deadline is converted to raw time-stamp-counter ticks once per step, so each check is a counter
//! read and one comparison, with no scaling to nanoseconds.

use crate::clock::{Clock, Instant, ManualClock, SystemClock};

/// Counter ticks scaled once to learn the tick rate (large, so the ratio is exact to the
/// calibration's own precision).
const CALIBRATION_SPAN: u64 = 1 << 40;

/// A step's budget deadline in the cheapest form its clock allows: raw counter ticks for a
/// [`SystemClock`] (the per-task check is then one counter read and one comparison, no scaling),
/// an [`Instant`] otherwise. The check itself is never skipped.
pub(crate) enum Deadline<'a> {
    Ticks { counter: &'a quanta::Clock, at: u64 },
    Instant { clock: &'a AnyClock, at: Instant },
}

impl Deadline<'_> {
    /// Whether the deadline has passed (reads the clock).
    #[inline]
    pub(crate) fn passed(&self) -> bool {
        match self {
            Deadline::Ticks { counter, at } => counter.raw() >= *at,
            Deadline::Instant { clock, at } => clock.now() >= *at,
        }
    }
}

/// A clock with static dispatch for the two clocks the workspace ships, so the scheduler's
/// per-task budget check inlines the read instead of calling through a vtable.
pub(crate) enum AnyClock {
    System(SystemClock),
    Manual(ManualClock),
    Other(Box<dyn Clock>),
}

impl AnyClock {
    pub(crate) fn new<C: Clock + 'static>(clock: C) -> Self {
        let mut slot = Some(clock);
        let any: &mut dyn std::any::Any = &mut slot;
        if let Some(system) = any.downcast_mut::<Option<SystemClock>>() {
            return AnyClock::System(system.take().expect("just filled"));
        }
        if let Some(manual) = any.downcast_mut::<Option<ManualClock>>() {
            return AnyClock::Manual(manual.take().expect("just filled"));
        }
        AnyClock::Other(Box::new(slot.take().expect("just filled")))
    }
}

impl AnyClock {
    /// The deadline `at`, in the form [`Deadline::passed`] checks fastest.
    pub(crate) fn deadline(&self, at: Instant) -> Deadline<'_> {
        match self {
            AnyClock::System(system) => {
                let counter = &system.counter;
                let raw_now = counter.raw();
                let now = Instant::from_nanos(counter.delta_as_nanos(system.origin, raw_now));
                // Ticks per nanosecond from the calibration itself: scale a large span once.
                let span_nanos = u128::from(counter.delta_as_nanos(0, CALIBRATION_SPAN).max(1));
                let remaining = u128::from(at.as_nanos().saturating_sub(now.as_nanos()));
                let ticks = u64::try_from(remaining * u128::from(CALIBRATION_SPAN) / span_nanos)
                    .unwrap_or(u64::MAX);
                Deadline::Ticks {
                    counter,
                    at: raw_now.saturating_add(ticks),
                }
            }
            _ => Deadline::Instant { clock: self, at },
        }
    }
}

impl Clock for AnyClock {
    #[inline]
    fn now(&self) -> Instant {
        match self {
            AnyClock::System(c) => c.now(),
            AnyClock::Manual(c) => c.now(),
            AnyClock::Other(c) => c.now(),
        }
    }

    fn unix_nanos(&self) -> u64 {
        match self {
            AnyClock::System(c) => c.unix_nanos(),
            AnyClock::Manual(c) => c.unix_nanos(),
            AnyClock::Other(c) => c.unix_nanos(),
        }
    }

    fn sleep_until(&self, deadline: Instant) {
        match self {
            AnyClock::System(c) => c.sleep_until(deadline),
            AnyClock::Manual(c) => c.sleep_until(deadline),
            AnyClock::Other(c) => c.sleep_until(deadline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_system_clock_deadline_passes_exactly_when_the_clock_reaches_it() {
        let clock = AnyClock::new(SystemClock::new());
        let at = clock.now() + Duration::from_millis(2);
        let deadline = clock.deadline(at);
        // Spin (no sleep) until the clock itself says the deadline is here.
        while clock.now() < at {}
        assert!(deadline.passed());
        assert!(!clock.deadline(Instant::MAX).passed());
        assert!(clock.deadline(Instant::ZERO).passed());
    }

    #[test]
    fn any_clock_keeps_a_manual_clocks_time() {
        let manual = ManualClock::new();
        let clock = AnyClock::new(manual.clone());
        manual.advance(Duration::from_secs(1));
        assert_eq!(clock.now(), Instant::from_nanos(1_000_000_000));
        assert!(clock.deadline(Instant::from_nanos(1_000_000_000)).passed());
        assert!(!clock.deadline(Instant::from_nanos(1_000_000_001)).passed());
    }
}
