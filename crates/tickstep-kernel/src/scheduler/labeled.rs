//! `Labeled`: creating tasks under a fixed origin label instead of their call site.

use std::borrow::Cow;
use std::future::Future;
use std::time::Duration;

use crate::{FrameScheduler, Priority, ReusableTask, ScheduleError, TaskHandle};

use super::slab::{Body, Start};

/// Creates tasks under a fixed origin label ([`FrameScheduler::with_origin`]).
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// let labeled = sched.with_origin("Health");
/// let _a = labeled.every(Duration::from_secs(1), || {}, Priority::Kernel).unwrap();
/// let _b = labeled.schedule(|| {}, Priority::Kernel);
/// ```
#[derive(Debug)]
pub struct Labeled<'a> {
    scheduler: &'a FrameScheduler,
    label: Option<Cow<'static, str>>,
}

impl<'a> Labeled<'a> {
    /// The builder [`FrameScheduler::with_origin`] returns (`label: None` names tasks by their
    /// call site).
    pub(super) fn new(scheduler: &'a FrameScheduler, label: Option<Cow<'static, str>>) -> Self {
        Labeled { scheduler, label }
    }

    /// [`FrameScheduler::schedule`] under this label.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let _h = sched.with_origin("job").schedule(|| {}, Priority::Low);
    /// ```
    #[track_caller]
    pub fn schedule(&self, f: impl FnOnce() + 'static, priority: Priority) -> TaskHandle {
        let key = self
            .scheduler
            .submit_once(f, priority, self.label.as_deref());
        self.scheduler.handle(key)
    }

    /// [`FrameScheduler::schedule_detached`] under this label.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.with_origin("job").schedule_detached(|| {}, Priority::Low);
    /// ```
    #[track_caller]
    pub fn schedule_detached(&self, f: impl FnOnce() + 'static, priority: Priority) {
        self.scheduler
            .submit_once(f, priority, self.label.as_deref());
    }

    /// [`FrameScheduler::after`] under this label.
    ///
    /// # Errors
    ///
    /// As [`FrameScheduler::after`].
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let _h = sched.with_origin("job").after(std::time::Duration::from_secs(1), || {}, Priority::Low)?;
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    #[track_caller]
    pub fn after(
        &self,
        delay: Duration,
        f: impl FnOnce() + 'static,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError> {
        let key = self.scheduler.submit(
            self.scheduler.once_body(f),
            priority,
            Start::After(delay),
            self.label.as_deref(),
        )?;
        Ok(self.scheduler.handle(key))
    }

    /// [`FrameScheduler::every`] under this label.
    ///
    /// # Errors
    ///
    /// As [`FrameScheduler::every`].
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let _h = sched.with_origin("job").every(std::time::Duration::ZERO, || {}, Priority::Low)?;
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    #[track_caller]
    pub fn every(
        &self,
        interval: Duration,
        f: impl FnMut() + 'static,
        priority: Priority,
    ) -> Result<TaskHandle, ScheduleError> {
        let key = self.scheduler.submit(
            Body::Repeat(Box::new(f)),
            priority,
            Start::every(interval),
            self.label.as_deref(),
        )?;
        Ok(self.scheduler.handle(key))
    }

    /// [`FrameScheduler::spawn`] under this label.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let _h = sched.with_origin("upload").spawn(async {}, Priority::Background);
    /// ```
    #[track_caller]
    pub fn spawn(
        &self,
        future: impl Future<Output = ()> + 'static,
        priority: Priority,
    ) -> TaskHandle {
        let key = self
            .scheduler
            .submit(
                Body::Future(Box::pin(future)),
                priority,
                Start::Queued,
                self.label.as_deref(),
            )
            .expect("queued tasks have no deadline to overflow");
        self.scheduler.handle(key)
    }

    /// [`FrameScheduler::entry`] under this label.
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// # use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// # let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let entry = sched.with_origin("Process Lobby").entry(|| {}, Priority::Normal);
    /// sched.schedule_entry(&entry).unwrap();
    /// ```
    #[track_caller]
    pub fn entry(&self, f: impl FnMut() + 'static, priority: Priority) -> ReusableTask {
        let key = self
            .scheduler
            .submit(
                Body::Repeat(Box::new(f)),
                priority,
                Start::Idle,
                self.label.as_deref(),
            )
            .expect("entries have no deadline to overflow");
        ReusableTask {
            handle: self.scheduler.handle(key),
        }
    }
}
