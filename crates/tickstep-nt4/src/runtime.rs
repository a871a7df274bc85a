//! Telemetry fed by a tickstep [`Runtime`] (feature `runtime`, docs/nt4.md §5.6).

use std::cell::RefCell;

use tickstep::Runtime;

use crate::telemetry::{ScheduleCounts, SchedulerTelemetry};

impl SchedulerTelemetry {
    /// Publishes after every command cycle of `runtime`, with the kernel's statistics and the
    /// durable schedules' counts read from it each time: the host writes no per-frame code.
    /// The telemetry must be of `runtime.commands()`. It rides on the runtime's own command
    /// cycle ([`Runtime::after_command_cycle`], docs/runtime.md §2.6), so it runs under any
    /// driver of the runtime, inside the frame, and ends with the runtime.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::Runtime;
    /// use tickstep::kernel::ManualClock;
    /// use tickstep_nt4::{Nt4Server, SchedulerTelemetry, Value, topics};
    ///
    /// let rt = Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Default::default()).unwrap();
    /// let mut telemetry = SchedulerTelemetry::new(rt.commands());
    /// telemetry.serve(&server);
    /// telemetry.attach(&rt);
    /// rt.run_for(Duration::from_millis(100))?;
    /// assert_eq!(server.get(topics::SCHEDULES_LIVE), Some(Value::Int(0)));
    /// assert!(server.get(topics::KERNEL_BUDGET_MS).is_some());
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
    pub fn attach(self, runtime: &Runtime) {
        let telemetry = RefCell::new(self);
        runtime.after_command_cycle(move |view| {
            let mut t = telemetry.borrow_mut();
            t.set_kernel_stats(&view.kernel_stats());
            t.set_schedule_counts(ScheduleCounts {
                live: view.schedules_live() as u64,
                running: view.firings_running() as u64,
            });
            t.publish();
        });
    }
}
