//! The error a panicking task is reported with (docs/kernel.md §8).

use std::backtrace::Backtrace;

use crate::Priority;

/// A task that panicked, as handed to every [`FrameScheduler::on_error`](crate::FrameScheduler::on_error)
/// handler. The step that ran it went on with the next task.
///
/// ```
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// use std::{cell::RefCell, rc::Rc};
///
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let seen = Rc::new(RefCell::new(String::new()));
/// let sink = seen.clone();
/// sched.on_error(move |err| *sink.borrow_mut() = err.message().to_owned());
/// sched.schedule(|| panic!("boom"), Priority::Normal);
/// sched.step_with_budget(std::time::Duration::from_secs(1));
/// assert_eq!(*seen.borrow(), "boom");
/// ```
#[derive(Debug)]
pub struct TaskError {
    pub(crate) message: String,
    pub(crate) origin: String,
    pub(crate) panic_location: Option<String>,
    pub(crate) priority: Priority,
    pub(crate) backtrace: Backtrace,
}

impl TaskError {
    /// The panic message (`"Box<dyn Any>"` when the payload was not a string).
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.on_error(|err| assert_eq!(err.message(), "bad input 7"));
    /// sched.schedule(|| panic!("bad input {}", 7), Priority::High);
    /// sched.step();
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where the task came from: its label, or the `file:line:column` that scheduled it.
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.on_error(|err| assert_eq!(err.origin(), "Process Lobby"));
    /// sched.with_origin("Process Lobby").schedule(|| panic!("x"), Priority::High);
    /// sched.step();
    /// ```
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Where the panic happened (`file:line:column`), when the scheduler's panic hook saw it.
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.on_error(|err| assert!(err.panic_location().unwrap().contains(".rs:")));
    /// sched.schedule(|| panic!("x"), Priority::High);
    /// sched.step();
    /// ```
    pub fn panic_location(&self) -> Option<&str> {
        self.panic_location.as_deref()
    }

    /// The priority the task ran at.
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.on_error(|err| assert_eq!(err.priority(), Priority::Low));
    /// sched.schedule(|| panic!("x"), Priority::Low);
    /// sched.step_with_budget(std::time::Duration::from_secs(1));
    /// ```
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// The stack at the panic, captured when the host enables backtraces (`RUST_BACKTRACE=1`);
    /// otherwise a disabled backtrace.
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.on_error(|err| { let _ = err.backtrace().status(); });
    /// sched.schedule(|| panic!("x"), Priority::High);
    /// sched.step();
    /// ```
    pub fn backtrace(&self) -> &Backtrace {
        &self.backtrace
    }
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "task {} panicked: {}", self.origin, self.message)?;
        if let Some(at) = &self.panic_location {
            write!(f, " (at {at})")?;
        }
        Ok(())
    }
}

impl std::error::Error for TaskError {}
