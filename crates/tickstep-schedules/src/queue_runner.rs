//! [`QueueRunner`]: the [`Runner`] for a host with its own task system (docs/schedules.md §7.7).
//!
//! The engine calls [`Runner::start`] from inside [`Schedules::tick`](crate::Schedules::tick),
//! and [`Schedules::report`](crate::Schedules::report) may not be called from inside `start` (the
//! engine is busy handing out that very firing). So a host whose tasks run elsewhere — its own
//! job system, a thread pool's results channel, a game's entity jobs — needs a hand-off: `start`
//! queues the firing under its run id; the host takes the queue after the tick, runs each
//! firing its own way, and reports each outcome by run id when it ends (that frame or later).
//!
//! Costs: one `VecDeque` push per started firing (the firing is reference-counted, not deep
//! copied), one borrow per call. A capacity limit makes `start` refuse past it, which the engine
//! records as a `start_failed` fault of that schedule rather than letting the queue grow without
//! bound while the host is stalled.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::{Firing, Refused, RunId, Runner};

struct Queue {
    started: VecDeque<(RunId, Firing)>,
    limit: Option<usize>,
}

/// A [`Runner`] that queues started firings, with their run ids, for the host to take.
///
/// Clone it: one clone goes to the engine, the host keeps another and calls
/// [`QueueRunner::take_started`] after each tick.
///
/// ```
/// use std::time::Duration;
/// use tickstep_schedules::kernel::clock::ManualClock;
/// use tickstep_schedules::OpenWorld;
/// use tickstep_schedules::{ObjId, Options, Outcome, QueueRunner, Schedules, Value};
///
/// let clock = ManualClock::new();
/// let runner = QueueRunner::new();
/// let engine = Schedules::in_memory(clock.clone(), OpenWorld, runner.clone(), Default::default());
/// let mut txn = engine.begin(ObjId(1));
/// txn.schedule_every(ObjId(1), "sweep", 1.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
///
/// clock.advance(Duration::from_secs(1));
/// engine.tick().unwrap();
/// for (run, firing) in runner.take_started() {
///     assert_eq!(&*firing.verb, "sweep"); // the host runs it its own way...
///     engine.report(run, Outcome::Returned(Value::Int(0))); // ...and reports when it ends
/// }
/// assert_eq!(runner.pending(), 0);
/// ```
#[derive(Clone)]
pub struct QueueRunner {
    queue: Rc<RefCell<Queue>>,
}

impl Default for QueueRunner {
    fn default() -> Self {
        Self::new()
    }
}

impl QueueRunner {
    /// An unbounded queue.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::QueueRunner::new().pending(), 0);
    /// ```
    pub fn new() -> Self {
        QueueRunner {
            queue: Rc::new(RefCell::new(Queue {
                started: VecDeque::new(),
                limit: None,
            })),
        }
    }

    /// A queue that refuses to start a firing while `limit` firings wait to be taken.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use tickstep_schedules::{Firing, ObjId, QueueRunner, RunId, Runner, ScheduleId};
    /// let runner = QueueRunner::with_limit(1);
    /// let f = Firing { schedule: ScheduleId::from_raw(1), run: RunId(1), target: ObjId(1), verb: Rc::from("v"),
    ///     args: Rc::from(Vec::new()), state: None, elapsed: None, player: ObjId(1),
    ///     authority: ObjId(1), nominal_unix_nanos: 0, time_limit: None, tick_limit: None };
    /// assert!(runner.start(&f).is_ok());
    /// let refused = runner.start(&f).unwrap_err();
    /// assert_eq!(refused.to_string(), "runner refused: 1 started firings wait to be taken (limit 1)");
    /// ```
    pub fn with_limit(limit: usize) -> Self {
        let runner = Self::new();
        runner.queue.borrow_mut().limit = Some(limit);
        runner
    }

    /// Takes every firing started since the last take, oldest first, with its run id.
    ///
    /// ```
    /// assert!(tickstep_schedules::QueueRunner::new().take_started().is_empty());
    /// ```
    pub fn take_started(&self) -> Vec<(RunId, Firing)> {
        self.queue.borrow_mut().started.drain(..).collect()
    }

    /// Firings started and not yet taken.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::QueueRunner::new().pending(), 0);
    /// ```
    pub fn pending(&self) -> usize {
        self.queue.borrow().started.len()
    }
}

impl Runner for QueueRunner {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        let mut queue = self.queue.borrow_mut();
        if let Some(limit) = queue.limit
            && queue.started.len() >= limit
        {
            return Err(Refused(format!(
                "{} started firings wait to be taken (limit {limit})",
                queue.started.len()
            )));
        }
        queue.started.push_back((firing.run, firing.clone()));
        Ok(())
    }
}

impl std::fmt::Debug for QueueRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueRunner")
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}
