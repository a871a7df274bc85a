//! [`CycleView`]: what an observer of the command cycle reads, right after each cycle
//! ([`Runtime::after_command_cycle`](crate::Runtime::after_command_cycle)).

use tickstep_kernel::{FrameScheduler, Stats};

use crate::RuntimeClock;
use crate::host::HostCore;

/// The runtime as an observer of its command cycle sees it, right after a cycle: the command
/// scheduler, the kernel's statistics and the durable schedules' counts. Every read is cheap
/// (no list is built), so telemetry can read it every cycle (docs/runtime.md §2.6).
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use tickstep::kernel::ManualClock;
/// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
/// let seen = Rc::new(Cell::new((0, 0)));
/// let s = seen.clone();
/// rt.after_command_cycle(move |view| s.set((view.commands().running().len(), view.schedules_live())));
/// rt.run_for(Duration::from_millis(100))?;
/// assert_eq!(seen.get(), (0, 0));
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
pub struct CycleView<'a> {
    pub(crate) commands: &'a tickstep_commands::CommandScheduler,
    pub(crate) kernel: &'a FrameScheduler,
    pub(crate) core: &'a HostCore<RuntimeClock>,
}

impl CycleView<'_> {
    /// The command scheduler, whose `run()` just returned.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # let rt = tickstep::Runtime::builder().manual_clock(tickstep::kernel::ManualClock::new()).in_memory_store().build()?;
    /// rt.after_command_cycle(|view| assert!(view.commands().telemetry().cycle > 0));
    /// rt.run_for(Duration::from_millis(40))?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn commands(&self) -> &tickstep_commands::CommandScheduler {
        self.commands
    }

    /// The kernel main scheduler's statistics: its last completed step's time, budget and
    /// deferrals, and the tasks waiting in each priority queue now.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # let rt = tickstep::Runtime::builder().manual_clock(tickstep::kernel::ManualClock::new()).in_memory_store().build()?;
    /// rt.after_command_cycle(|view| assert!(view.kernel_stats().last_budget > Duration::ZERO));
    /// rt.run_for(Duration::from_millis(40))?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn kernel_stats(&self) -> Stats {
        self.kernel.stats()
    }

    /// Durable schedules that will fire again.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # let rt = tickstep::Runtime::builder().manual_clock(tickstep::kernel::ManualClock::new()).in_memory_store().build()?;
    /// rt.after_command_cycle(|view| assert_eq!(view.schedules_live(), 0));
    /// rt.run_for(Duration::from_millis(40))?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn schedules_live(&self) -> usize {
        self.core.engine().live_count()
    }

    /// Firings of durable schedules running now (the runtime's own, run as kernel tasks).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # let rt = tickstep::Runtime::builder().manual_clock(tickstep::kernel::ManualClock::new()).in_memory_store().build()?;
    /// rt.after_command_cycle(|view| assert_eq!(view.firings_running(), 0));
    /// rt.run_for(Duration::from_millis(40))?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn firings_running(&self) -> usize {
        self.core.running_count()
    }
}

impl std::fmt::Debug for CycleView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleView")
            .field("firings_running", &self.firings_running())
            .finish_non_exhaustive()
    }
}
