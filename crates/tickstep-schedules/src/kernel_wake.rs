//! [`KernelWake`]: ticking an engine from a `tickstep-kernel` scheduler without a blind periodic
//! timer — the one wake both the `tickstep` runtime and the Bevy plugin arm.
//!
//! A host that runs the engine on the kernel arms one kernel `after()` timer for the engine's
//! earliest deadline, never sooner than one engine tick after the previous tick, and re-arms it
//! wherever a new, earlier deadline can appear (after a tick, a settled firing, a transaction).
//! While no schedule is due, no timer fires. Re-arming when the armed wake is already early enough
//! costs one comparison, with no clock read and no allocation.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::{FrameScheduler, Priority, ScheduleError, TaskHandle};

/// The armed kernel timer that ticks an engine at its next deadline.
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
/// use std::time::Duration;
/// use tickstep_schedules::kernel::clock::ManualClock;
/// use tickstep_schedules::kernel::{FrameScheduler, SchedulerConfig};
/// use tickstep_schedules::KernelWake;
///
/// let clock = ManualClock::starting_at_unix_nanos(1_000);
/// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
/// let wake = KernelWake::new(Duration::from_millis(10));
/// // The host: what the timer ticks, held weakly by the timer.
/// let fired = Rc::new(Cell::new(false));
/// // The engine's next deadline is 2 s from now (Unix nanoseconds).
/// wake.rearm(Some(2_000_001_000), || 1_000, &kernel, "tick", &fired, |f| f.set(true))?;
/// assert_eq!(wake.armed_for(), Some(2_000_001_000));
/// clock.advance(Duration::from_secs(2));
/// kernel.step();
/// assert!(fired.get());
/// # Ok::<(), tickstep_schedules::kernel::ScheduleError>(())
/// ```
#[derive(Debug)]
pub struct KernelWake {
    /// The armed timer: (Unix nanoseconds it serves, its kernel task).
    armed: RefCell<Option<(u64, TaskHandle)>>,
    /// When the engine was last ticked, Unix nanoseconds.
    last_tick: Cell<Option<u64>>,
    tick_nanos: u64,
}

impl KernelWake {
    /// A wake that never arms sooner than `tick` after the previous tick (the engine's own tick,
    /// [`Config::tick`](crate::Config::tick)).
    ///
    /// ```
    /// let wake = tickstep_schedules::KernelWake::new(tickstep_schedules::DEFAULT_TICK);
    /// assert_eq!(wake.armed_for(), None);
    /// ```
    pub fn new(tick: Duration) -> Self {
        KernelWake {
            armed: RefCell::new(None),
            last_tick: Cell::new(None),
            tick_nanos: u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX),
        }
    }

    /// Arms (or moves earlier) the timer for `next`, the engine's next deadline in Unix
    /// nanoseconds (`None` cancels it). `now` is read only when a timer is armed. The timer runs
    /// on `kernel` at High priority under `origin` and calls `tick(host)` if `host` is still
    /// alive (it holds `host` weakly, so an armed wake never keeps its host alive); `tick`
    /// typically calls [`KernelWake::fired`], ticks the engine and re-arms.
    ///
    /// # Errors
    ///
    /// The kernel's refusal of the timer (a delay past the end of its clock: such a deadline
    /// never comes); nothing is armed then.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use tickstep_schedules::kernel::{clock::ManualClock, FrameScheduler, SchedulerConfig};
    /// let kernel = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let wake = tickstep_schedules::KernelWake::new(Duration::from_millis(10));
    /// wake.rearm(None, || 0, &kernel, "tick", &std::rc::Rc::new(()), |_| {})?;
    /// assert_eq!(wake.armed_for(), None);
    /// # Ok::<(), tickstep_schedules::kernel::ScheduleError>(())
    /// ```
    pub fn rearm<H: 'static>(
        &self,
        next: Option<u64>,
        now: impl FnOnce() -> u64,
        kernel: &FrameScheduler,
        origin: impl Into<Cow<'static, str>>,
        host: &Rc<H>,
        tick: fn(&Rc<H>),
    ) -> Result<(), ScheduleError> {
        let Some(next) = next else {
            self.cancel();
            return Ok(());
        };
        let floor = self
            .last_tick
            .get()
            .map_or(0, |t| t.saturating_add(self.tick_nanos));
        let at = next.max(floor);
        if self.armed_for().is_some_and(|armed| armed <= at) {
            return Ok(());
        }
        self.cancel();
        let delay = Duration::from_nanos(at.saturating_sub(now()));
        let host = Rc::downgrade(host);
        let fire = move || {
            if let Some(host) = host.upgrade() {
                tick(&host);
            }
        };
        let handle = kernel
            .with_origin(origin)
            .after(delay, fire, Priority::High)?;
        *self.armed.borrow_mut() = Some((at, handle));
        Ok(())
    }

    /// Records that the timer fired and the engine is being ticked at `now_unix_nanos`: the next
    /// wake is armed no sooner than one tick after it.
    ///
    /// ```
    /// let wake = tickstep_schedules::KernelWake::new(std::time::Duration::from_millis(10));
    /// wake.fired(5);
    /// assert_eq!(wake.armed_for(), None);
    /// ```
    pub fn fired(&self, now_unix_nanos: u64) {
        drop(self.armed.borrow_mut().take());
        self.last_tick.set(Some(now_unix_nanos));
    }

    /// Cancels the armed timer, if any.
    ///
    /// ```
    /// tickstep_schedules::KernelWake::new(std::time::Duration::from_millis(10)).cancel();
    /// ```
    pub fn cancel(&self) {
        if let Some((_, wake)) = self.armed.borrow_mut().take() {
            wake.cancel();
        }
    }

    /// The Unix nanoseconds the armed timer serves, if one is armed.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::KernelWake::new(std::time::Duration::ZERO).armed_for(), None);
    /// ```
    pub fn armed_for(&self) -> Option<u64> {
        self.armed.borrow().as_ref().map(|(at, _)| *at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickstep_kernel::SchedulerConfig;
    use tickstep_kernel::clock::ManualClock;

    fn kernel() -> FrameScheduler {
        FrameScheduler::new(ManualClock::new(), SchedulerConfig::server())
    }

    #[test]
    fn never_sooner_than_one_tick_after_the_last_and_an_earlier_wake_is_kept() {
        let kernel = kernel();
        let host = Rc::new(());
        let wake = KernelWake::new(Duration::from_nanos(10));
        wake.fired(100);
        wake.rearm(Some(105), || 100, &kernel, "t", &host, |_| {})
            .unwrap();
        assert_eq!(wake.armed_for(), Some(110), "floored at the last tick + 10");
        wake.rearm(Some(500), || 100, &kernel, "t", &host, |_| {})
            .unwrap();
        assert_eq!(
            wake.armed_for(),
            Some(110),
            "a later deadline keeps the armed wake"
        );
        wake.fired(110);
        wake.rearm(Some(500), || 110, &kernel, "t", &host, |_| {})
            .unwrap();
        assert_eq!(wake.armed_for(), Some(500));
        wake.rearm(Some(200), || 110, &kernel, "t", &host, |_| {})
            .unwrap();
        assert_eq!(wake.armed_for(), Some(200), "an earlier deadline moves it");
        wake.rearm(None, || 110, &kernel, "t", &host, |_| {})
            .unwrap();
        assert_eq!(wake.armed_for(), None, "nothing due: no timer");
    }

    #[test]
    fn an_armed_wake_does_not_keep_its_host_alive() {
        let kernel = kernel();
        let host = Rc::new(());
        let wake = KernelWake::new(Duration::ZERO);
        wake.rearm(Some(1_000), || 0, &kernel, "t", &host, |_| {})
            .unwrap();
        assert_eq!(Rc::strong_count(&host), 1);
        assert_eq!(Rc::weak_count(&host), 1);
    }
}
