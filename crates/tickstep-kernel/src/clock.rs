//! Time, owned by the kernel: one monotonic timeline and one wall clock.
//!
//! Every layer of tickstep reads time through a [`Clock`] and nothing else calls
//! `std::time::Instant::now()` or `SystemTime::now()`. That single seam is what lets a whole
//! runtime (frames, commands, durable schedules) run in virtual time: tests hand every layer the
//! same [`ManualClock`] and move it with [`ManualClock::advance`], so a simulated day takes
//! milliseconds and no test ever sleeps.
//!
//! # The two timelines
//!
//! * **Monotonic** ([`Clock::now`] → [`Instant`]): nanoseconds since the clock's own origin.
//!   It never goes backwards, is cheap to read, and is what budgets, deadlines and profilers use.
//!   An [`Instant`] means nothing outside the clock that produced it and never reaches disk.
//! * **Wall** ([`Clock::unix_nanos`]): nanoseconds since the Unix epoch, as a `u64`. It may jump
//!   (an operator sets the date, NTP steps it). Persisted times use it.
//!
//! # Costs
//!
//! [`SystemClock::now`] reads the CPU's time-stamp counter through `quanta` (about 17–20 ns on
//! this class of virtual machine, where a `std::time::Instant` vDSO read costs 30–90 ns) and scales
//! it to nanoseconds; where no invariant TSC exists, `quanta` falls back to the OS monotonic clock.
//! The budget check reads the clock before every task, so this read is the scheduler's hot path.
//! [`ManualClock::now`] is one relaxed atomic load. Both are `Send + Sync`, so a clock can be
//! shared with a thread that only sleeps; the schedulers that read them are single-threaded.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A point on a [`Clock`]'s monotonic timeline: nanoseconds since that clock's origin.
///
/// It is a plain `u64`, so comparing two instants and keying a heap by one is as cheap as it gets.
/// Arithmetic saturates at the ends of the timeline instead of panicking; use
/// [`Instant::checked_add`] where overflow must be reported (a deadline that would overflow is a
/// caller's error, not a silent clamp).
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::clock::Instant;
///
/// let t = Instant::from_nanos(1_000);
/// assert_eq!((t + Duration::from_nanos(500)).as_nanos(), 1_500);
/// assert_eq!(t.duration_since(Instant::ZERO), Duration::from_micros(1));
/// assert!(Instant::MAX.checked_add(Duration::from_nanos(1)).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[must_use]
pub struct Instant(u64);

impl Instant {
    /// The clock's origin.
    ///
    /// ```
    /// assert_eq!(tickstep_kernel::clock::Instant::ZERO.as_nanos(), 0);
    /// ```
    pub const ZERO: Instant = Instant(0);

    /// The last representable instant (about 584 years after the origin).
    ///
    /// ```
    /// assert_eq!(tickstep_kernel::clock::Instant::MAX.as_nanos(), u64::MAX);
    /// ```
    pub const MAX: Instant = Instant(u64::MAX);

    /// The instant `nanos` nanoseconds after the origin.
    ///
    /// ```
    /// assert_eq!(tickstep_kernel::clock::Instant::from_nanos(7).as_nanos(), 7);
    /// ```
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    /// Nanoseconds since the origin.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::Instant;
    /// assert_eq!((Instant::ZERO + Duration::from_millis(2)).as_nanos(), 2_000_000);
    /// ```
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time from `earlier` to `self`, or zero when `earlier` is later.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::Instant;
    /// let a = Instant::from_nanos(10);
    /// let b = Instant::from_nanos(25);
    /// assert_eq!(b.duration_since(a), Duration::from_nanos(15));
    /// assert_eq!(a.duration_since(b), Duration::ZERO);
    /// ```
    pub const fn duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, or `None` when the result would pass [`Instant::MAX`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::Instant;
    /// assert_eq!(Instant::ZERO.checked_add(Duration::from_nanos(3)), Some(Instant::from_nanos(3)));
    /// assert_eq!(Instant::MAX.checked_add(Duration::from_secs(1)), None);
    /// ```
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        let nanos = u64::try_from(d.as_nanos()).ok()?;
        self.0.checked_add(nanos).map(Instant)
    }

    /// `self - d`, or `None` before the origin.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::Instant;
    /// assert_eq!(Instant::from_nanos(5).checked_sub(Duration::from_nanos(5)), Some(Instant::ZERO));
    /// assert_eq!(Instant::ZERO.checked_sub(Duration::from_nanos(1)), None);
    /// ```
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        let nanos = u64::try_from(d.as_nanos()).ok()?;
        self.0.checked_sub(nanos).map(Instant)
    }

    /// `self + d`, stopping at [`Instant::MAX`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::Instant;
    /// assert_eq!(Instant::MAX.saturating_add(Duration::from_secs(1)), Instant::MAX);
    /// ```
    pub fn saturating_add(self, d: Duration) -> Instant {
        self.checked_add(d).unwrap_or(Instant::MAX)
    }

    /// `self - d`, stopping at the origin.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::Instant;
    /// assert_eq!(Instant::from_nanos(3).saturating_sub(Duration::from_secs(1)), Instant::ZERO);
    /// ```
    pub fn saturating_sub(self, d: Duration) -> Instant {
        self.checked_sub(d).unwrap_or(Instant::ZERO)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Instant({:?})", Duration::from_nanos(self.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturating; see [`Instant::checked_add`] for the checked form.
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    /// Saturating at the origin.
    fn sub(self, d: Duration) -> Instant {
        self.saturating_sub(d)
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: zero when `rhs` is later.
    fn sub(self, rhs: Instant) -> Duration {
        self.duration_since(rhs)
    }
}

/// A source of time: monotonic instants, wall-clock Unix nanoseconds, and a way to wait.
///
/// Implemented by [`SystemClock`] (real time) and [`ManualClock`] (virtual time), and by
/// `Rc`/`Arc`/`&` of any clock, so a clock can be passed by value or shared.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::clock::{Clock, ManualClock};
///
/// fn elapsed_since_start(clock: &impl Clock, start: tickstep_kernel::clock::Instant) -> Duration {
///     clock.now() - start
/// }
/// let clock = ManualClock::new();
/// let start = clock.now();
/// clock.advance(Duration::from_millis(16));
/// assert_eq!(elapsed_since_start(&clock, start), Duration::from_millis(16));
/// ```
pub trait Clock {
    /// The current monotonic instant. Never earlier than a previous call on the same clock.
    fn now(&self) -> Instant;

    /// The current wall-clock time in nanoseconds since the Unix epoch.
    fn unix_nanos(&self) -> u64;

    /// Blocks until `deadline` has passed on this clock.
    ///
    /// A real clock sleeps the thread; a virtual clock moves itself to `deadline` at once, which is
    /// how a frame loop driven by a [`ManualClock`] skips idle time instead of waiting for it.
    fn sleep_until(&self, deadline: Instant);

    /// Whether this clock's time moves only when told to (a [`ManualClock`]): virtual time, in
    /// which nothing that takes real time (a disk write, another thread) moves the clock. A layer
    /// whose behaviour depends on how long real work takes may make that work instant under such a
    /// clock, so a run on it is deterministic (docs/schedules.md §11.42). `false` unless the clock
    /// says otherwise; a clock that wraps another forwards it.
    ///
    /// ```
    /// use tickstep_kernel::clock::{Clock, ManualClock, SystemClock};
    /// assert!(ManualClock::new().is_virtual());
    /// assert!(!SystemClock::new().is_virtual());
    /// ```
    fn is_virtual(&self) -> bool {
        false
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Instant {
        (**self).now()
    }
    fn unix_nanos(&self) -> u64 {
        (**self).unix_nanos()
    }
    fn sleep_until(&self, deadline: Instant) {
        (**self).sleep_until(deadline);
    }
    fn is_virtual(&self) -> bool {
        (**self).is_virtual()
    }
}

impl<C: Clock + ?Sized> Clock for std::rc::Rc<C> {
    fn now(&self) -> Instant {
        (**self).now()
    }
    fn unix_nanos(&self) -> u64 {
        (**self).unix_nanos()
    }
    fn sleep_until(&self, deadline: Instant) {
        (**self).sleep_until(deadline);
    }
    fn is_virtual(&self) -> bool {
        (**self).is_virtual()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Instant {
        (**self).now()
    }
    fn unix_nanos(&self) -> u64 {
        (**self).unix_nanos()
    }
    fn sleep_until(&self, deadline: Instant) {
        (**self).sleep_until(deadline);
    }
    fn is_virtual(&self) -> bool {
        (**self).is_virtual()
    }
}

/// Real time: the CPU's monotonic time-stamp counter (via `quanta`) and the OS wall clock.
///
/// The monotonic origin is the moment the clock was created. This is the one place in the
/// workspace that reads the machine's clocks. The first `SystemClock` in a process calibrates the
/// counter against the OS clock once (a few milliseconds); later ones reuse the calibration.
///
/// ```
/// use tickstep_kernel::clock::{Clock, SystemClock};
///
/// let clock = SystemClock::new();
/// let a = clock.now();
/// let b = clock.now();
/// assert!(b >= a);
/// assert!(clock.unix_nanos() > 1_600_000_000_000_000_000); // after September 2020
/// ```
#[derive(Clone, Debug)]
pub struct SystemClock {
    /// The time-stamp counter (read directly by the scheduler's budget check).
    pub(crate) counter: quanta::Clock,
    /// The counter's reading at this clock's origin.
    pub(crate) origin: u64,
}

impl SystemClock {
    /// A clock whose monotonic origin is now.
    ///
    /// ```
    /// use tickstep_kernel::clock::{Clock, SystemClock};
    /// assert!(SystemClock::new().now().as_nanos() < 1_000_000_000);
    /// ```
    pub fn new() -> Self {
        let counter = quanta::Clock::new();
        let origin = counter.raw();
        SystemClock { counter, origin }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Instant {
        // u64 nanoseconds cover 584 years of uptime.
        Instant(self.counter.delta_as_nanos(self.origin, self.counter.raw()))
    }

    fn unix_nanos(&self) -> u64 {
        // A wall clock before 1970 reads as the epoch; after 2554 it saturates.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    fn sleep_until(&self, deadline: Instant) {
        let now = self.now();
        if deadline > now {
            std::thread::sleep(deadline - now);
        }
    }
}

/// Virtual time: a shared handle to a clock that moves only when told to.
///
/// Cloning is cheap and every clone sees the same time. The monotonic timeline starts at
/// [`Instant::ZERO`]; the wall clock starts at [`ManualClock::DEFAULT_UNIX_NANOS`]
/// (2026-01-01T00:00:00Z) unless set, and moves with the monotonic one.
/// [`Clock::sleep_until`] on a manual clock advances it to the deadline at once.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::clock::{Clock, Instant, ManualClock};
///
/// let clock = ManualClock::new();
/// let handle = clock.clone();
/// handle.advance(Duration::from_secs(2));
/// assert_eq!(clock.now(), Instant::ZERO + Duration::from_secs(2));
/// assert_eq!(clock.unix_nanos(), ManualClock::DEFAULT_UNIX_NANOS + 2_000_000_000);
/// ```
#[derive(Clone, Debug)]
pub struct ManualClock {
    shared: Arc<ManualState>,
}

#[derive(Debug)]
struct ManualState {
    /// Monotonic nanoseconds since the origin.
    mono: AtomicU64,
    /// Wall-clock Unix nanoseconds at monotonic zero; wall = this + mono.
    wall_at_origin: AtomicU64,
}

impl ManualClock {
    /// The wall-clock start of a new manual clock: 2026-01-01T00:00:00Z in Unix nanoseconds.
    ///
    /// ```
    /// use tickstep_kernel::clock::{Clock, ManualClock};
    /// assert_eq!(ManualClock::new().unix_nanos(), ManualClock::DEFAULT_UNIX_NANOS);
    /// ```
    pub const DEFAULT_UNIX_NANOS: u64 = 1_767_225_600 * 1_000_000_000;

    /// A clock at [`Instant::ZERO`] and wall time [`ManualClock::DEFAULT_UNIX_NANOS`].
    ///
    /// ```
    /// use tickstep_kernel::clock::{Clock, Instant, ManualClock};
    /// assert_eq!(ManualClock::new().now(), Instant::ZERO);
    /// ```
    pub fn new() -> Self {
        Self::starting_at_unix_nanos(Self::DEFAULT_UNIX_NANOS)
    }

    /// A clock at [`Instant::ZERO`] whose wall clock reads `unix_nanos`.
    ///
    /// Useful for restart tests: a second engine opened "later" gets a clock that starts later.
    ///
    /// ```
    /// use tickstep_kernel::clock::{Clock, ManualClock};
    /// let clock = ManualClock::starting_at_unix_nanos(42);
    /// assert_eq!(clock.unix_nanos(), 42);
    /// ```
    pub fn starting_at_unix_nanos(unix_nanos: u64) -> Self {
        ManualClock {
            shared: Arc::new(ManualState {
                mono: AtomicU64::new(0),
                wall_at_origin: AtomicU64::new(unix_nanos),
            }),
        }
    }

    /// Moves both timelines forward by `d` (saturating at the end of the timeline).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::{Clock, ManualClock};
    /// let clock = ManualClock::new();
    /// clock.advance(Duration::from_millis(5));
    /// assert_eq!(clock.now().as_nanos(), 5_000_000);
    /// ```
    pub fn advance(&self, d: Duration) {
        let step = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let mono = &self.shared.mono;
        // fetch_update never fails with a closure that always returns Some.
        let _ = mono.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
            Some(t.saturating_add(step))
        });
    }

    /// Moves the monotonic clock to `at` (and the wall clock with it).
    ///
    /// # Panics
    ///
    /// If `at` is earlier than [`Clock::now`]: a monotonic clock never goes back. Move the wall
    /// clock with [`ManualClock::set_unix_nanos`] instead.
    ///
    /// ```
    /// use tickstep_kernel::clock::{Clock, Instant, ManualClock};
    /// let clock = ManualClock::new();
    /// clock.set(Instant::from_nanos(1_000));
    /// assert_eq!(clock.now(), Instant::from_nanos(1_000));
    /// ```
    #[track_caller]
    pub fn set(&self, at: Instant) {
        let previous = self.shared.mono.fetch_max(at.0, Ordering::Relaxed);
        assert!(
            previous <= at.0,
            "ManualClock::set would move the monotonic clock back from {:?} to {at:?}",
            Instant(previous)
        );
    }

    /// Sets the wall clock to `unix_nanos` without moving the monotonic clock (a date change).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::{Clock, ManualClock};
    /// let clock = ManualClock::new();
    /// clock.advance(Duration::from_secs(1));
    /// clock.set_unix_nanos(5);
    /// assert_eq!(clock.unix_nanos(), 5);
    /// assert_eq!(clock.now().as_nanos(), 1_000_000_000);
    /// ```
    pub fn set_unix_nanos(&self, unix_nanos: u64) {
        let mono = self.shared.mono.load(Ordering::Relaxed);
        self.shared
            .wall_at_origin
            .store(unix_nanos.wrapping_sub(mono), Ordering::Relaxed);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant(self.shared.mono.load(Ordering::Relaxed))
    }

    fn unix_nanos(&self) -> u64 {
        let mono = self.shared.mono.load(Ordering::Relaxed);
        // Wrapping on purpose: set_unix_nanos stores `wall - mono` with wrapping arithmetic.
        self.shared
            .wall_at_origin
            .load(Ordering::Relaxed)
            .wrapping_add(mono)
    }

    fn sleep_until(&self, deadline: Instant) {
        self.shared.mono.fetch_max(deadline.0, Ordering::Relaxed);
    }

    fn is_virtual(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_clones_share_one_time() {
        let a = ManualClock::new();
        let b = a.clone();
        b.advance(Duration::from_millis(34));
        assert_eq!(a.now(), Instant::from_nanos(34_000_000));
    }

    #[test]
    fn manual_clock_sleep_until_jumps_forward_and_never_back() {
        let clock = ManualClock::new();
        clock.sleep_until(Instant::from_nanos(100));
        assert_eq!(clock.now(), Instant::from_nanos(100));
        clock.sleep_until(Instant::from_nanos(50));
        assert_eq!(clock.now(), Instant::from_nanos(100));
    }

    #[test]
    #[should_panic(expected = "would move the monotonic clock back")]
    fn manual_clock_set_backwards_panics() {
        let clock = ManualClock::new();
        clock.advance(Duration::from_secs(1));
        clock.set(Instant::ZERO);
    }

    #[test]
    fn manual_clock_advance_saturates_at_the_end_of_time() {
        let clock = ManualClock::new();
        clock.set(Instant::MAX);
        clock.advance(Duration::from_secs(1));
        assert_eq!(clock.now(), Instant::MAX);
    }

    #[test]
    fn wall_clock_moves_with_monotonic_until_set() {
        let clock = ManualClock::starting_at_unix_nanos(1_000);
        clock.advance(Duration::from_nanos(10));
        assert_eq!(clock.unix_nanos(), 1_010);
        clock.set_unix_nanos(50);
        clock.advance(Duration::from_nanos(5));
        assert_eq!(clock.unix_nanos(), 55);
    }

    #[test]
    fn instant_arithmetic_saturates() {
        assert_eq!(Instant::ZERO - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(Instant::ZERO - Instant::from_nanos(9), Duration::ZERO);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
    }
}
