//! Frames whose waiting belongs to the host: the kernel's frame loop runs a frame, then *asks*
//! to wait until the next one instead of sleeping the thread, and an async driver (the `tokio`
//! feature) does the waiting on its own timer, where sockets and early wake-ups can share it.
//!
//! The kernel's frame loop waits through [`Clock::sleep_until`]. A [`HostedClock`] is the
//! runtime's own clock with that one call replaced: it records the instant and returns at once.
//! Every read (`now`, `unix_nanos`) is the wrapped clock's, so virtual and real time behave as
//! they do under the blocking loop.

use std::cell::Cell;
use std::rc::Rc;

use tickstep_kernel::clock::{Clock, Instant};

use crate::RuntimeClock;

/// Where the frame loop leaves the instant it wants to run next.
#[derive(Clone, Default)]
pub(crate) struct FrameWaits(Rc<Cell<Option<Instant>>>);

impl FrameWaits {
    /// The instant the last frame asked to wait until, taken (so a stale one is never reused).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn take(&self) -> Option<Instant> {
        self.0.take()
    }
}

/// The runtime's clock for a kernel whose frame waits are done by the host.
#[derive(Clone)]
pub(crate) struct HostedClock {
    pub(crate) clock: RuntimeClock,
    pub(crate) waits: FrameWaits,
}

impl Clock for HostedClock {
    #[inline]
    fn now(&self) -> Instant {
        self.clock.now()
    }

    #[inline]
    fn unix_nanos(&self) -> u64 {
        self.clock.unix_nanos()
    }

    /// Records the wait for the host instead of blocking (or, on a manual clock, instead of
    /// moving virtual time: the host moves it when its own timer says the time has come).
    fn sleep_until(&self, deadline: Instant) {
        self.waits.0.set(Some(deadline));
    }

    fn is_virtual(&self) -> bool {
        self.clock.is_virtual()
    }
}
