//! The runtime's one clock: real or virtual, chosen at build time.

use tickstep_kernel::clock::{Clock, Instant, ManualClock, SystemClock};

/// The clock every layer of a [`Runtime`](crate::Runtime) reads: the kernel's frames and timers,
/// the command scheduler's waits and the schedule engine's wall-clock deadlines.
///
/// It is an enum rather than a type parameter so `Runtime` stays one concrete type; a read costs
/// one match on top of the underlying clock.
///
/// ```
/// use std::time::Duration;
/// use tickstep::RuntimeClock;
/// use tickstep::kernel::clock::{Clock, ManualClock};
///
/// let manual = ManualClock::new();
/// let clock = RuntimeClock::Manual(manual.clone());
/// manual.advance(Duration::from_secs(3));
/// assert_eq!(clock.now().as_nanos(), 3_000_000_000);
/// assert!(clock.manual().is_some());
/// ```
#[derive(Clone, Debug)]
pub enum RuntimeClock {
    /// Real time: frames sleep the thread.
    System(SystemClock),
    /// Virtual time: idle stretches and frame waits move the clock at once.
    Manual(ManualClock),
}

impl RuntimeClock {
    /// The virtual clock, when the runtime runs on one (to `advance` it from a test).
    ///
    /// ```
    /// use tickstep::RuntimeClock;
    /// use tickstep::kernel::clock::SystemClock;
    /// assert!(RuntimeClock::System(SystemClock::new()).manual().is_none());
    /// ```
    pub fn manual(&self) -> Option<&ManualClock> {
        match self {
            RuntimeClock::Manual(clock) => Some(clock),
            RuntimeClock::System(_) => None,
        }
    }
}

impl Clock for RuntimeClock {
    #[inline]
    fn now(&self) -> Instant {
        match self {
            RuntimeClock::System(c) => c.now(),
            RuntimeClock::Manual(c) => c.now(),
        }
    }

    #[inline]
    fn unix_nanos(&self) -> u64 {
        match self {
            RuntimeClock::System(c) => c.unix_nanos(),
            RuntimeClock::Manual(c) => c.unix_nanos(),
        }
    }

    fn sleep_until(&self, deadline: Instant) {
        match self {
            RuntimeClock::System(c) => c.sleep_until(deadline),
            RuntimeClock::Manual(c) => c.sleep_until(deadline),
        }
    }

    fn is_virtual(&self) -> bool {
        matches!(self, RuntimeClock::Manual(_))
    }
}
