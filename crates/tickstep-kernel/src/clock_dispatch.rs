//! Static dispatch over the workspace's clocks, budget deadlines in raw counter ticks, and raw
//! readings for callers that time many short spans.
//!
//! The scheduler reads its clock before every task. Behind a `Box<dyn Clock>` that read is an
//! indirect call; behind [`AnyClock`] it is a match the compiler inlines for the two clocks the
//! workspace ships. A [`Deadline`] goes one step further for a [`SystemClock`]: the budget
//! deadline is converted to raw time-stamp-counter ticks once per step, so each check is a counter
//! read and one comparison, with no scaling to nanoseconds. [`AnyClock::raw`] offers the same to
//! other layers: the command scheduler times every mount in raw ticks and scales a span to
//! nanoseconds only when it is read.

use crate::clock::{Clock, Instant, ManualClock, SystemClock};
use std::time::Duration;

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

/// Any [`Clock`], with static dispatch for the two clocks the workspace ships ([`SystemClock`],
/// [`ManualClock`]), so a hot loop's clock read inlines instead of calling through a vtable.
///
/// Besides [`Clock`] it reads the clock *raw*: in [`SystemClock`] counter ticks (no scaling), or
/// in nanoseconds for every other clock. Raw readings are for timing many short spans cheaply;
/// scale one with [`AnyClock::raw_to_nanos`] or [`AnyClock::raw_instant`] when it is used.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{AnyClock, Clock, ManualClock};
///
/// let manual = ManualClock::new();
/// let clock = AnyClock::new(manual.clone());
/// let start = clock.raw();
/// manual.advance(Duration::from_micros(3));
/// assert_eq!(clock.raw_to_nanos(clock.raw() - start), 3_000);
/// assert_eq!(clock.raw_instant(clock.raw()), clock.now());
/// ```
pub struct AnyClock(Dispatch);

enum Dispatch {
    System(SystemClock),
    Manual(ManualClock),
    Other(Box<dyn Clock>),
}

impl std::fmt::Debug for AnyClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.0 {
            Dispatch::System(_) => "SystemClock",
            Dispatch::Manual(_) => "ManualClock",
            Dispatch::Other(_) => "dyn Clock",
        };
        f.debug_tuple("AnyClock").field(&kind).finish()
    }
}

impl AnyClock {
    /// Wraps `clock`; a [`SystemClock`] or [`ManualClock`] is recognised and dispatched
    /// statically, any other clock goes behind a box.
    ///
    /// ```
    /// use tickstep_kernel::{AnyClock, Clock, Instant, ManualClock};
    /// assert_eq!(AnyClock::new(ManualClock::new()).now(), Instant::ZERO);
    /// ```
    pub fn new<C: Clock + 'static>(clock: C) -> Self {
        let mut slot = Some(clock);
        let any: &mut dyn std::any::Any = &mut slot;
        if let Some(system) = any
            .downcast_mut::<Option<SystemClock>>()
            .and_then(Option::take)
        {
            return AnyClock(Dispatch::System(system));
        }
        if let Some(manual) = any
            .downcast_mut::<Option<ManualClock>>()
            .and_then(Option::take)
        {
            return AnyClock(Dispatch::Manual(manual));
        }
        match slot {
            Some(other) => AnyClock(Dispatch::Other(Box::new(other))),
            None => unreachable!("only a recognised clock is taken out of the slot"),
        }
    }

    /// The clock read raw: counter ticks for a [`SystemClock`] (one counter read, no scaling),
    /// the monotonic nanoseconds of [`Clock::now`] for every other clock. Never earlier than a
    /// previous raw reading of the same clock; the difference of two readings is a span in raw
    /// units.
    ///
    /// ```
    /// use tickstep_kernel::{AnyClock, SystemClock};
    /// let clock = AnyClock::new(SystemClock::new());
    /// let (a, b) = (clock.raw(), clock.raw());
    /// assert!(b >= a);
    /// ```
    #[inline]
    pub fn raw(&self) -> u64 {
        match &self.0 {
            Dispatch::System(system) => system.counter.raw(),
            Dispatch::Manual(manual) => manual.now().as_nanos(),
            Dispatch::Other(other) => other.now().as_nanos(),
        }
    }

    /// A span of `raw` units (the difference of two [`AnyClock::raw`] readings) in nanoseconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{AnyClock, SystemClock};
    /// let clock = AnyClock::new(SystemClock::new());
    /// let ticks = clock.raw_of(Duration::from_millis(5));
    /// let nanos = clock.raw_to_nanos(ticks);
    /// assert!(nanos.abs_diff(5_000_000) < 1_000, "{nanos}");
    /// ```
    #[inline]
    pub fn raw_to_nanos(&self, raw: u64) -> u64 {
        match &self.0 {
            Dispatch::System(system) => system.counter.delta_as_nanos(0, raw),
            _ => raw,
        }
    }

    /// The [`Instant`] of a raw reading (what [`Clock::now`] would have returned then).
    ///
    /// ```
    /// use tickstep_kernel::{AnyClock, Clock, ManualClock};
    /// let clock = AnyClock::new(ManualClock::new());
    /// assert_eq!(clock.raw_instant(clock.raw()), clock.now());
    /// ```
    #[inline]
    pub fn raw_instant(&self, raw: u64) -> Instant {
        match &self.0 {
            Dispatch::System(system) => {
                Instant::from_nanos(system.counter.delta_as_nanos(system.origin, raw))
            }
            _ => Instant::from_nanos(raw),
        }
    }

    /// How many raw units `span` lasts (saturating), so a limit can be compared with raw spans
    /// without scaling each one.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{AnyClock, ManualClock};
    /// let clock = AnyClock::new(ManualClock::new());
    /// assert_eq!(clock.raw_of(Duration::from_micros(2)), 2_000);
    /// ```
    pub fn raw_of(&self, span: Duration) -> u64 {
        let nanos = u64::try_from(span.as_nanos()).unwrap_or(u64::MAX);
        match &self.0 {
            Dispatch::System(system) => ticks_in(&system.counter, nanos),
            _ => nanos,
        }
    }
}

/// Counter ticks in `nanos`, from the calibration itself: a large span is scaled once.
fn ticks_in(counter: &quanta::Clock, nanos: u64) -> u64 {
    let span_nanos = u128::from(counter.delta_as_nanos(0, CALIBRATION_SPAN).max(1));
    u64::try_from(u128::from(nanos) * u128::from(CALIBRATION_SPAN) / span_nanos).unwrap_or(u64::MAX)
}

impl AnyClock {
    /// The deadline `at`, in the form [`Deadline::passed`] checks fastest.
    pub(crate) fn deadline(&self, at: Instant) -> Deadline<'_> {
        match &self.0 {
            Dispatch::System(system) => {
                let counter = &system.counter;
                let raw_now = counter.raw();
                let now = Instant::from_nanos(counter.delta_as_nanos(system.origin, raw_now));
                let ticks = ticks_in(counter, at.as_nanos().saturating_sub(now.as_nanos()));
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
        match &self.0 {
            Dispatch::System(c) => c.now(),
            Dispatch::Manual(c) => c.now(),
            Dispatch::Other(c) => c.now(),
        }
    }

    fn unix_nanos(&self) -> u64 {
        match &self.0 {
            Dispatch::System(c) => c.unix_nanos(),
            Dispatch::Manual(c) => c.unix_nanos(),
            Dispatch::Other(c) => c.unix_nanos(),
        }
    }

    fn sleep_until(&self, deadline: Instant) {
        match &self.0 {
            Dispatch::System(c) => c.sleep_until(deadline),
            Dispatch::Manual(c) => c.sleep_until(deadline),
            Dispatch::Other(c) => c.sleep_until(deadline),
        }
    }

    fn is_virtual(&self) -> bool {
        match &self.0 {
            Dispatch::System(c) => c.is_virtual(),
            Dispatch::Manual(c) => c.is_virtual(),
            Dispatch::Other(c) => c.is_virtual(),
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
