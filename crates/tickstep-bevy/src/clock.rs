//! The plugin's two timelines: real time (kernel, durable schedules, Bevy's `Time<Real>`) and
//! game time (the commands, Bevy's `Time<Fixed>`); docs/bevy.md §4.
//!
//! There is one source of time, the [`RealClock`]: the machine's monotonic clock
//! ([`SystemClock`]) or, in tests and simulations, a [`ManualClock`]. Bevy's `Time<Real>` advances
//! on that same source (with a `ManualClock` the plugin feeds it the clock's movement every frame
//! through `TimeUpdateStrategy::ManualDuration`), and Bevy derives `Time<Virtual>` (pause, speed)
//! and `Time<Fixed>` from it. The [`GameClock`] is the commands' view: it reads `Time<Fixed>`'s
//! elapsed time as Bevy publishes it, so pausing Bevy's virtual time stops the commands' clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tickstep_kernel::clock::{Clock, Instant, ManualClock, SystemClock};

/// The real timeline the kernel and the durable schedules run on, and that Bevy's `Time<Real>`
/// follows.
///
/// It never sleeps: Bevy decides when frames run (its runner paces them), so
/// [`Clock::sleep_until`] returns at once and moves no time, even on a [`ManualClock`]. The
/// kernel's budget checks and deadlines read [`Clock::now`] live, inside the frame.
///
/// ```
/// use std::time::Duration;
/// use tickstep_bevy::RealClock;
/// use tickstep_bevy::kernel::clock::{Clock, Instant, ManualClock};
///
/// let manual = ManualClock::new();
/// let clock = RealClock::Manual(manual.clone());
/// manual.advance(Duration::from_millis(5));
/// clock.sleep_until(Instant::from_nanos(u64::MAX)); // Bevy paces frames: no jump
/// assert_eq!(clock.now(), Instant::from_nanos(5_000_000));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum RealClock {
    /// The machine's monotonic and wall clocks.
    System(SystemClock),
    /// Virtual time that moves only when told to (tests, simulations).
    Manual(ManualClock),
}

impl RealClock {
    /// The manual clock behind this one, if it is manual.
    ///
    /// ```
    /// use tickstep_bevy::RealClock;
    /// use tickstep_bevy::kernel::clock::SystemClock;
    /// assert!(RealClock::System(SystemClock::new()).manual().is_none());
    /// ```
    pub fn manual(&self) -> Option<&ManualClock> {
        match self {
            RealClock::Manual(clock) => Some(clock),
            RealClock::System(_) => None,
        }
    }
}

impl Clock for RealClock {
    #[inline]
    fn now(&self) -> Instant {
        match self {
            RealClock::System(c) => c.now(),
            RealClock::Manual(c) => c.now(),
        }
    }

    fn unix_nanos(&self) -> u64 {
        match self {
            RealClock::System(c) => c.unix_nanos(),
            RealClock::Manual(c) => c.unix_nanos(),
        }
    }

    /// Returns at once: inside a Bevy app the frame pacing is Bevy's (see the type's docs).
    fn sleep_until(&self, _deadline: Instant) {}

    fn is_virtual(&self) -> bool {
        matches!(self, RealClock::Manual(_))
    }
}

/// The commands' clock: Bevy's `Time<Fixed>` elapsed time, as of the last fixed step.
///
/// The plugin publishes `Time<Fixed>::elapsed()` into it right before each commands cycle in
/// `FixedUpdate`, and at the end of every fixed main loop (so it reads the same whether or not
/// the cycle is installed, docs/bevy.md §4.2). A command's `wait(d)` therefore counts
/// fixed-timestep game time: it stops while Bevy's virtual time is paused and scales with its
/// relative speed. The wall side
/// ([`Clock::unix_nanos`]) is the real wall clock at app start plus the game time (commands
/// persist nothing; it only stamps telemetry).
///
/// ```
/// use std::time::Duration;
/// use tickstep_bevy::GameClock;
/// use tickstep_bevy::kernel::clock::{Clock, Instant};
///
/// let clock = GameClock::starting_at_unix_nanos(1_000);
/// clock.publish(Duration::from_millis(15));
/// assert_eq!(clock.now(), Instant::from_nanos(15_000_000));
/// assert_eq!(clock.unix_nanos(), 15_001_000);
/// ```
#[derive(Clone, Debug)]
pub struct GameClock {
    shared: Arc<GameTime>,
}

#[derive(Debug)]
struct GameTime {
    elapsed: AtomicU64,
    wall_origin: u64,
}

impl GameClock {
    /// A game clock at zero whose wall side starts at `unix_nanos`.
    ///
    /// ```
    /// use tickstep_bevy::GameClock;
    /// use tickstep_bevy::kernel::clock::{Clock, Instant};
    /// assert_eq!(GameClock::starting_at_unix_nanos(7).now(), Instant::ZERO);
    /// ```
    pub fn starting_at_unix_nanos(unix_nanos: u64) -> Self {
        GameClock {
            shared: Arc::new(GameTime {
                elapsed: AtomicU64::new(0),
                wall_origin: unix_nanos,
            }),
        }
    }

    /// Sets the game time to `elapsed` (Bevy's `Time<Fixed>::elapsed()`); it never moves back.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_bevy::GameClock;
    /// use tickstep_bevy::kernel::clock::{Clock, Instant};
    /// let clock = GameClock::starting_at_unix_nanos(0);
    /// clock.publish(Duration::from_secs(2));
    /// clock.publish(Duration::from_secs(1));
    /// assert_eq!(clock.now(), Instant::from_nanos(2_000_000_000));
    /// ```
    pub fn publish(&self, elapsed: std::time::Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.shared.elapsed.fetch_max(nanos, Ordering::Relaxed);
    }
}

impl Clock for GameClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_nanos(self.shared.elapsed.load(Ordering::Relaxed))
    }

    fn unix_nanos(&self) -> u64 {
        self.shared
            .wall_origin
            .saturating_add(self.shared.elapsed.load(Ordering::Relaxed))
    }

    /// Returns at once: game time moves only when Bevy runs fixed steps.
    fn sleep_until(&self, _deadline: Instant) {}
}
