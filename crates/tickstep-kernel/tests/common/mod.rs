//! Shared helpers for the kernel's integration tests: a run log and tasks that take time.

#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::{FrameScheduler, ManualClock, SchedulerConfig};

pub const MS: Duration = Duration::from_millis(1);
pub const SECOND: Duration = Duration::from_secs(1);

/// An ordered record of which tasks ran.
#[derive(Clone, Default)]
pub struct Log(Rc<RefCell<Vec<String>>>);

impl Log {
    pub fn new() -> Self {
        Self::default()
    }

    /// A task body that records `name`.
    pub fn task(&self, name: impl Into<String>) -> impl FnOnce() + 'static {
        let log = self.clone();
        let name = name.into();
        move || log.0.borrow_mut().push(name)
    }

    /// A recurring body that records `name` each run.
    pub fn every(&self, name: impl Into<String>) -> impl FnMut() + 'static {
        let log = self.clone();
        let name = name.into();
        move || log.0.borrow_mut().push(name.clone())
    }

    pub fn push(&self, name: impl Into<String>) {
        self.0.borrow_mut().push(name.into());
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.borrow_mut())
    }

    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }

    pub fn count(&self, name: &str) -> usize {
        self.0.borrow().iter().filter(|n| *n == name).count()
    }
}

/// A server scheduler on a fresh manual clock.
pub fn server() -> (ManualClock, FrameScheduler) {
    let clock = ManualClock::new();
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    (clock, sched)
}

/// A scheduler with `config` on a fresh manual clock.
pub fn with_config(config: SchedulerConfig) -> (ManualClock, FrameScheduler) {
    let clock = ManualClock::new();
    let sched = FrameScheduler::new(clock.clone(), config);
    (clock, sched)
}

/// A task body that records `name` and takes `cost` of (virtual) time.
pub fn costly(
    log: &Log,
    clock: &ManualClock,
    name: &str,
    cost: Duration,
) -> impl FnOnce() + 'static {
    let log = log.clone();
    let clock = clock.clone();
    let name = name.to_owned();
    move || {
        log.push(name);
        clock.advance(cost);
    }
}
