//! Chaining methods on [`Command`]: `and_then`, `along_with`, `race_with`, `with_timeout`, `until`.

use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use super::group::{group, parallel, race, race_of, sequence_of, wait};
use crate::error::CompositionError;
use crate::scheduler::command::{BodyFn, BodyFuture, Command};

impl Command {
    /// `self`, then `next` (a [`sequence`](super::sequence)). Named `A -> B`.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// let a = Command::no_requirements().executing(|_co| async {}).named("A");
    /// let b = Command::no_requirements().executing(|_co| async {}).named("B");
    /// assert_eq!(a.and_then(&b).name(), "A -> B");
    /// ```
    #[must_use]
    pub fn and_then(&self, next: &Command) -> Command {
        sequence_of(&Rc::from([self.clone(), next.clone()]))
    }

    /// `self` and `other` side by side until both end (a [`parallel`](super::parallel)).
    ///
    /// # Errors
    ///
    /// [`CompositionError`] when they share a mechanism or are the same command.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// let a = Command::no_requirements().executing(|_co| async {}).named("A");
    /// let b = Command::no_requirements().executing(|_co| async {}).named("B");
    /// assert_eq!(a.along_with(&b).unwrap().name(), "(A & B)");
    /// ```
    pub fn along_with(&self, other: &Command) -> Result<Command, CompositionError> {
        parallel([self, other])
    }

    /// `self` and `other` side by side until either ends (a [`race`](super::race)).
    ///
    /// # Errors
    ///
    /// [`CompositionError`] when they share a mechanism or are the same command.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// let a = Command::no_requirements().executing(|_co| async {}).named("A");
    /// let b = Command::no_requirements().executing(|_co| async {}).named("B");
    /// assert_eq!(a.race_with(&b).unwrap().name(), "(A | B)");
    /// ```
    pub fn race_with(&self, other: &Command) -> Result<Command, CompositionError> {
        race([self, other])
    }

    /// `self`, canceled if it has not ended after `timeout` (a race with
    /// [`wait`](super::wait)). Named `(A | wait 1s)`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_commands::{Command, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// let scheduler = CommandScheduler::new(clock.clone());
    /// let forever = Command::no_requirements().executing(|co| async move { co.park().await; }).named("A");
    /// let bounded = forever.with_timeout(Duration::from_secs(1));
    /// assert_eq!(bounded.name(), "(A | wait 1s)");
    /// scheduler.schedule(&bounded);
    /// scheduler.run().unwrap();
    /// clock.advance(Duration::from_secs(1));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&bounded) && !scheduler.is_running(&forever));
    /// ```
    #[must_use]
    pub fn with_timeout(&self, timeout: Duration) -> Command {
        // A fresh wait requires nothing, so the race needs no conflict check.
        race_of(&Rc::from([self.clone(), wait(timeout)]))
    }

    /// `self`, ended (as completed) at the first cycle `condition` is true. Named
    /// `(A | Until Condition)`, as the reference names it.
    /// The condition is checked each cycle after `self` has run.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_commands::{Command, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let stop = Rc::new(Cell::new(false));
    /// let flag = stop.clone();
    /// let spin = Command::no_requirements().executing(|co| async move { co.park().await; }).named("spin");
    /// let bounded = spin.until(move || flag.get());
    /// assert_eq!(bounded.name(), "(spin | Until Condition)");
    /// scheduler.schedule(&bounded);
    /// scheduler.run().unwrap();
    /// stop.set(true);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&bounded) && !scheduler.is_running(&spin));
    /// ```
    #[must_use]
    pub fn until(&self, condition: impl Fn() -> bool + 'static) -> Command {
        let condition: Rc<dyn Fn() -> bool> = Rc::new(condition);
        let child = self.clone();
        let body: BodyFn = Rc::new(move |co| -> BodyFuture {
            let (child, condition) = (child.clone(), condition.clone());
            BodyFuture::fallible(async move {
                let done = co.await_any([&child]);
                let stop = co.wait_until(move || condition());
                race2(done, stop).await.map_err(Into::into)
            })
        });
        group(
            format!("({} | Until Condition)", self.name()),
            std::slice::from_ref(self),
            body,
        )
    }
}

/// Resolves with the first of a join and a condition wait (the join wins a tie).
async fn race2(
    join: crate::scheduler::awaitables::Join,
    stop: impl std::future::Future<Output = ()> + Unpin,
) -> Result<(), crate::error::ForkError> {
    let mut join = join;
    let mut stop = stop;
    std::future::poll_fn(move |cx| {
        if let std::task::Poll::Ready(r) = std::pin::Pin::new(&mut join).poll(cx) {
            return std::task::Poll::Ready(r);
        }
        std::pin::Pin::new(&mut stop).poll(cx).map(Ok)
    })
    .await
}
