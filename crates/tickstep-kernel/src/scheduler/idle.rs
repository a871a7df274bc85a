//! Sleeping while idle: a bound scheduler is attached to its phase only while it has work.
//!
//! After every step, schedule, cancel and wake, a bound scheduler asks whether it has runnable
//! work: a live queued task, an every(0) job waiting in the frame list (one that is mid-run is
//! queued or running, not in the list), a woken future, or a deadline at most
//! [`WAKE_WINDOW`] away. With work it attaches and the frame loop steps it every frame. Without,
//! it detaches and arms one wake at the earliest deadline minus the window. The wake runs no
//! tasks: when the loop reaches it, the scheduler reattaches and the deadline is served by a
//! normal budgeted step. Because the wake is recomputed from the heap top each time, scheduling
//! earlier work replaces it and cancelling the last timer clears it.
//!
//! The window works both ways: a short-interval job (every 20 ms) stays attached instead of
//! detaching and re-arming around every run, and a long deadline reattaches one window early so
//! the phase is attached when it comes due.

use std::time::Duration;

use crate::clock::Instant;

use super::places::Core;

/// How far ahead a deadline keeps a scheduler attached, and how early the idle wake fires.
///
/// ```
/// assert_eq!(tickstep_kernel::WAKE_WINDOW.as_millis(), 34);
/// ```
pub const WAKE_WINDOW: Duration = Duration::from_millis(34);

impl Core {
    /// Whether there is work for the next step (see the module docs).
    pub(crate) fn has_runnable_work(&self, now: Instant, wakes_pending: bool) -> bool {
        self.queues.any_live()
            || !self.frame.is_empty()
            || wakes_pending
            || self
                .timers
                .peek_deadline()
                .is_some_and(|d| d <= now.saturating_add(WAKE_WINDOW))
    }

    /// After new work arrived or a task was cancelled: a bound scheduler that is detached may need
    /// to reattach or move its wake. One flag test on the hot path (an attached or unbound
    /// scheduler has nothing to refresh); the clock is read only on the cold path.
    #[inline]
    pub(crate) fn refresh_if_detached(
        &mut self,
        clock: &crate::clock_dispatch::AnyClock,
        wakes: &super::wake::WakeQueue,
    ) {
        if !self.attach.attached && self.attach.bound.is_some() {
            self.refresh_cold(clock, wakes);
        }
    }

    #[cold]
    fn refresh_cold(
        &mut self,
        clock: &crate::clock_dispatch::AnyClock,
        wakes: &super::wake::WakeQueue,
    ) {
        use crate::clock::Clock;
        self.refresh_attachment(clock.now(), wakes.is_pending());
    }

    /// Attaches or detaches a bound scheduler by the runnable-work rule, rearming the wake.
    pub(crate) fn refresh_attachment(&mut self, now: Instant, wakes_pending: bool) {
        if self.attach.bound.is_none() || self.destroyed {
            return;
        }
        if self.has_runnable_work(now, wakes_pending) {
            if !self.attach.attached {
                self.attach.attached = true;
                // Binding a scheduler that never stepped is not a reattach: its first step has
                // no earlier step and runs at the floor.
                self.attach.reattached = self.counters.steps > 0;
            }
            self.attach.wake_at = None;
        } else {
            self.attach.attached = false;
            self.attach.reattached = false;
            self.attach.wake_at = self
                .timers
                .peek_deadline()
                .map(|d| d.saturating_sub(WAKE_WINDOW));
        }
    }
}
