//! The scheduler's state and the moves between places.
//!
//! `Core` lives in a `RefCell` inside the shared scheduler. Every method here runs with that borrow
//! held and never calls user code; anything that might (dropping a task's captures, running a
//! task, calling a hook) is handed back to the caller to do after the borrow is released. That is
//! the whole re-entrancy story: a task can schedule, cancel or inspect its own scheduler freely.

use std::any::Any;
use std::rc::Weak;
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::{FramePhase, Priority, Role, SchedulerConfig, StepWindow};

use super::budget::{Budget, FrameReading, FrameSource};
use super::profile::{NO_ORIGIN, Profiler};
use super::queues::{OnceTask, QueueEntry, Queues};
use super::slab::{Body, Cadence, NewTask, Place, Slab, TaskKey, TaskRef};
use super::timers::TimerHeap;
use super::wake::{TaskWaker, WakeQueue};
use crate::metrics::SchedulerMetrics;

/// What a finished run asks for next.
pub(crate) enum Outcome {
    /// Finished for good (one-shot ran, future completed, or the run panicked).
    Done,
    /// Recurring: put the body back and rearm by cadence.
    Again(Body),
    /// A future returned `Pending`: park it until woken.
    Pending(Body),
}

/// A task taken out of its slot to run with no borrow held.
pub(crate) struct Running {
    pub(crate) index: u32,
    pub(crate) body: Body,
    pub(crate) waker: Option<Waker>,
    pub(crate) origin: u32,
    pub(crate) priority: Priority,
    pub(crate) location: &'static std::panic::Location<'static>,
    /// A one-shot whose slot was freed before it ran: nothing to put back afterwards.
    pub(crate) settled: bool,
}

/// The task the drain runs next.
pub(crate) enum Next {
    /// A `schedule()` one-shot: run straight from its box, nothing to put back.
    Inline(Box<dyn OnceTask>),
    /// A slab task, taken out of its slot.
    Slot(Running),
}

/// What the front of a queue holds for the drain.
pub(crate) enum Front {
    /// The scheduler was destroyed: stop the step.
    Stop,
    /// This queue is empty.
    Empty,
    /// A cancelled task was skipped; drop this once unborrowed.
    Skipped((Option<QueueEntry>, Garbage)),
    /// A live task is next.
    Ready,
}

/// Things to drop once the scheduler is no longer borrowed (their destructors are user code).
#[must_use]
pub(crate) struct Garbage(Option<Body>);

impl Garbage {
    pub(crate) const NONE: Garbage = Garbage(None);
}

/// Step and window counters behind [`crate::Stats`].
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) last_step: Duration,
    pub(crate) last_budget: Duration,
    pub(crate) last_frame: FrameReading,
    pub(crate) tasks_run: u64,
    pub(crate) tasks_deferred: u64,
    pub(crate) steps: u64,
    pub(crate) window_time: Duration,
    pub(crate) window_steps: u64,
    pub(crate) window_max: Duration,
    pub(crate) window_deferred: u64,
    /// Queued entries the last step's deferral attribution looked at.
    pub(crate) attribution_visits: u64,
    /// A sampled deferral attribution still to be made: the queue the budget ran out before and
    /// the exact live count from there (see [`Core::defer_from`]).
    pub(crate) pending_attribution: Option<(usize, u64)>,
    /// The handles each step records through (docs/observability.md §2), kept here, behind
    /// the box, so the scheduler's own allocation stays small.
    pub(crate) metrics: SchedulerMetrics,
}

/// A scheduler's link to its frame loop.
#[derive(Default)]
pub(crate) struct Attachment {
    /// The loop this scheduler is bound to (`None` = unbound: only manual steps run it). Opaque
    /// here so the engine names nothing of the frame loop; `frame_loop.rs` downcasts it.
    pub(crate) bound: Option<Weak<dyn Any>>,
    /// Stepped by the loop every frame.
    pub(crate) attached: bool,
    /// The next step is the first after reattaching from idle (the budget's special case).
    pub(crate) reattached: bool,
    /// When a detached scheduler wants to be reattached.
    pub(crate) wake_at: Option<Instant>,
}

#[allow(clippy::struct_excessive_bools)] // independent flags, not a state machine
pub(crate) struct Core {
    pub(crate) slab: Slab,
    pub(crate) queues: Queues,
    pub(crate) timers: TimerHeap,
    /// every(0) jobs waiting for the next step, in the order they will be queued.
    pub(crate) frame: Vec<u32>,
    pub(crate) budget: Budget,
    pub(crate) profiler: Profiler,
    pub(crate) profiling: bool,
    pub(crate) stagger: bool,
    /// `every()` calls so far: the `n` of the stagger offset.
    pub(crate) every_calls: u64,
    pub(crate) phase: FramePhase,
    pub(crate) role: Role,
    pub(crate) destroyed: bool,
    pub(crate) stepping: bool,
    /// Boxed: touched once per step, and it keeps the scheduler's own allocation small.
    pub(crate) counters: Box<Counters>,
    pub(crate) frame_source: Option<FrameSource>,
    pub(crate) attach: Attachment,
    waker_pool: Vec<Arc<TaskWaker>>,
    woken: Vec<u64>,
}

/// Deferred entries a step's origin attribution looks at, at most (see [`Core::defer_from`]).
pub(crate) const DEFER_SAMPLES: usize = 8;

/// Due timers in one step past which the drain warms the cache ahead of itself.
const BURST: usize = 1_024;
/// Tasks one warm-up covers.
pub(crate) const WARM_AHEAD: usize = 32;

/// The golden-ratio fraction the stagger offset steps by.
const GOLDEN_FRACTION: f64 = 0.618_033_988_749_894_9;

impl Core {
    pub(crate) fn new(config: &SchedulerConfig) -> Self {
        Core {
            slab: Slab::new(),
            queues: Queues::new(),
            timers: TimerHeap::new(),
            frame: Vec::new(),
            budget: Budget::new(config.budget_mode()),
            profiler: Profiler::new(),
            profiling: config.profiles_tasks(),
            stagger: config.staggers_recurring(),
            every_calls: 0,
            phase: config.phase_of(),
            role: config.role(),
            destroyed: false,
            stepping: false,
            counters: Box::default(),
            frame_source: None,
            attach: Attachment::default(),
            waker_pool: Vec::new(),
            woken: Vec::new(),
        }
    }

    /// The origin index for a new task: a label always, a call site only while profiling.
    #[inline]
    pub(crate) fn origin_for(
        &mut self,
        location: &'static std::panic::Location<'static>,
        label: Option<&str>,
    ) -> u32 {
        match label {
            Some(label) => self.profiler.intern_label(label),
            None if self.profiling => self.profiler.intern_location(location),
            None => NO_ORIGIN,
        }
    }

    /// Stores a task and puts it in `place`; `deadline` is used for [`Place::Heap`].
    #[inline]
    pub(crate) fn insert(&mut self, task: NewTask, deadline: Instant) -> TaskKey {
        let place = task.place;
        let priority = task.priority;
        let key = self.slab.insert(task);
        match place {
            Place::Queued => self.queues.push(priority, key.index),
            Place::Heap => {
                self.slab.at(key.index).deadline = deadline;
                self.timers.push(key.index, deadline, priority);
            }
            Place::Frame => self.frame.push(key.index),
            _ => {}
        }
        key
    }

    /// The first deadline of a positive-interval `every()`, staggered when configured:
    /// `now + interval + ((n * 0.618...) mod 1) * interval` with `n` counting `every()` calls.
    pub(crate) fn first_every_deadline(&self, now: Instant, interval: Duration) -> Option<Instant> {
        let base = now.checked_add(interval)?;
        if !self.stagger {
            return Some(base);
        }
        let fraction = (self.every_calls as f64 * GOLDEN_FRACTION).fract();
        base.checked_add(interval.mul_f64(fraction))
    }

    /// Cancels `key`. Returns whether the cancel took effect (false when the task already ran,
    /// was already cancelled, or the key is stale).
    pub(crate) fn cancel(&mut self, task: TaskRef) -> (bool, Garbage) {
        let key = match task {
            TaskRef::Slot(key) => key,
            TaskRef::Once { queue, seq } => {
                let took_effect = !self.destroyed && self.queues.cancel_once(queue.into(), seq);
                return (took_effect, Garbage::NONE);
            }
        };
        let Some(slot) = self.slab.get_mut(key) else {
            return (false, Garbage::NONE);
        };
        if slot.cancelled {
            return (false, Garbage::NONE);
        }
        slot.cancelled = true;
        match slot.place {
            Place::Queued => {
                // Skipped when its turn comes; the captures go now.
                let priority = slot.priority;
                let body = std::mem::replace(&mut slot.body, Body::Empty);
                self.queues.note_cancelled(priority);
                (true, Garbage(Some(body)))
            }
            // Not re-armed when the run returns.
            Place::Running => (true, Garbage::NONE),
            // A due timer moves to its queue without its slot being touched (the heap node carries
            // the priority), so "Heap" means "heap, or queued after coming due": the heap's
            // position table tells which.
            Place::Heap if self.timers.remove(key.index) => (true, self.release(key.index)),
            Place::Heap => {
                let priority = slot.priority;
                let body = std::mem::replace(&mut slot.body, Body::Empty);
                self.queues.note_cancelled(priority);
                (true, Garbage(Some(body)))
            }
            Place::Frame => {
                self.frame.retain(|&i| i != key.index);
                (true, self.release(key.index))
            }
            Place::Parked | Place::Idle => (true, self.release(key.index)),
            Place::Free => unreachable!("get_mut never returns a free slot"),
        }
    }

    /// Whether `key` names a live task that was cancelled (by its handle or by destroy).
    pub(crate) fn is_cancelled(&self, task: TaskRef) -> bool {
        match task {
            TaskRef::Slot(key) => self.slab.get(key).is_some_and(|s| s.cancelled),
            TaskRef::Once { queue, seq } => {
                self.destroyed && self.queues.once_never_left(queue.into(), seq)
            }
        }
    }

    /// Frees a slot, pooling its waker when nobody else holds it.
    pub(crate) fn release(&mut self, index: u32) -> Garbage {
        let (body, waker) = self.slab.release(index);
        if let Some(waker) = waker
            && Arc::strong_count(&waker) == 1
        {
            self.waker_pool.push(waker);
        }
        Garbage(Some(body))
    }

    /// Step stage 2: woken futures, due timers and every(0) jobs move into their queues. Returns
    /// whether so many timers came due that the drain should warm the cache ahead of itself.
    pub(crate) fn release_ready(&mut self, now: Instant, wakes: &WakeQueue) -> bool {
        let mut woken = std::mem::take(&mut self.woken);
        wakes.drain_into(&mut woken);
        for &packed in &woken {
            if let Some(slot) = self.slab.get_mut(TaskKey::unpack(packed))
                && slot.place == Place::Parked
            {
                slot.place = Place::Queued;
                let priority = slot.priority;
                self.queues.push(priority, TaskKey::unpack(packed).index);
            }
        }
        self.woken = woken;
        let Core {
            timers,
            slab,
            queues,
            ..
        } = self;
        // No slot access here: with 100k timers that is one cache miss per timer saved.
        let _ = slab;
        let mut released = 0;
        timers.drain_due(now, |index, priority| {
            queues.push(priority, index);
            released += 1;
        });
        let burst = released > BURST;
        for i in 0..self.frame.len() {
            let index = self.frame[i];
            let slot = self.slab.at(index);
            slot.place = Place::Queued;
            let priority = slot.priority;
            self.queues.push(priority, index);
        }
        self.frame.clear();
        burst
    }

    /// Takes the task at `index` out of its slot to run it.
    #[inline]
    pub(crate) fn begin_run(&mut self, index: u32, wakes: &Arc<WakeQueue>) -> Running {
        let generation = self.slab.key_at(index).generation;
        let slot = self.slab.at(index);
        slot.place = Place::Running;
        let body = std::mem::replace(&mut slot.body, Body::Empty);
        if self.profiling && slot.origin == NO_ORIGIN {
            slot.origin = self.profiler.intern_location(slot.location);
        }
        let (origin, priority, location) = (slot.origin, slot.priority, slot.location);
        if let Body::Once(_) | Body::Pooled(_) = body {
            // A one-shot closure never goes back into its slot: free it now, so finishing the
            // run needs no second borrow. Cancelling it from inside itself does nothing, as for
            // any task that already ran.
            let garbage = self.release(index);
            debug_assert!(matches!(garbage.0, Some(Body::Empty)));
            return Running {
                index,
                body,
                waker: None,
                origin,
                priority,
                location,
                settled: true,
            };
        }
        let waker = match body {
            Body::Future(_) | Body::AsyncRepeat(_) => {
                let key = TaskKey { index, generation }.pack();
                let pool = &mut self.waker_pool;
                let waker = self
                    .slab
                    .waker(index)
                    .get_or_insert_with(|| match pool.pop() {
                        Some(pooled) => {
                            pooled.retarget(key);
                            pooled
                        }
                        None => Arc::new(TaskWaker::new(key, Arc::clone(wakes))),
                    });
                Some(Waker::from(Arc::clone(waker)))
            }
            _ => None,
        };
        Running {
            index,
            body,
            waker,
            origin,
            priority,
            location,
            settled: false,
        }
    }

    /// Loads the slots and pooled closures of the next [`WARM_AHEAD`] tasks of `queue` in one
    /// tight loop. A burst of timers fires in deadline order, which is random in memory, so each
    /// task would otherwise wait for its own cache misses one after another behind a task call;
    /// here the loads are independent and the core overlaps them. Returns a value only so the
    /// loads are kept.
    pub(crate) fn warm(&self, queue: usize) -> u64 {
        let mut touched = 0;
        for entry in self.queues.ahead(queue, WARM_AHEAD) {
            if let QueueEntry::Slot(index) = entry {
                let slot = self.slab.peek(*index);
                touched += u64::from(slot.cancelled);
                if let Body::Pooled(f) = &slot.body {
                    touched += f.touch();
                }
            }
        }
        touched
    }

    /// Looks at the front of `queue`, skipping (and freeing) a cancelled task.
    #[inline]
    pub(crate) fn front(&mut self, queue: usize) -> Front {
        if self.destroyed {
            return Front::Stop;
        }
        let skip = match self.queues.front(queue) {
            None => return Front::Empty,
            Some(QueueEntry::Slot(index)) => self.slab.at(*index).cancelled,
            Some(QueueEntry::Once(_)) => self.queues.front_once_cancelled(queue),
        };
        if !skip {
            return Front::Ready;
        }
        let skipped = self.queues.pop_cancelled(queue);
        let garbage = match skipped {
            Some(QueueEntry::Slot(index)) => self.release(index),
            _ => Garbage::NONE,
        };
        Front::Skipped((skipped, garbage))
    }

    /// Pops the (live) front task of `queue` to run it.
    #[inline]
    pub(crate) fn pop_to_run(&mut self, queue: usize, wakes: &Arc<WakeQueue>) -> Next {
        match self.queues.pop(queue) {
            Some(QueueEntry::Slot(index)) => Next::Slot(self.begin_run(index, wakes)),
            Some(QueueEntry::Once(task)) => Next::Inline(task),
            None => unreachable!("pop_to_run follows a Ready front"),
        }
    }

    /// Puts a run's task back where its cadence says (or frees it).
    pub(crate) fn finish_run(
        &mut self,
        index: u32,
        outcome: Outcome,
        clock: &dyn Clock,
    ) -> Garbage {
        let interval = match self.slab.at(index).cadence {
            Cadence::Every => Duration::from_nanos(self.slab.interval(index)),
            _ => Duration::ZERO,
        };
        let slot = self.slab.at(index);
        if slot.place != Place::Running {
            // Destroy ran while the task did; the slot is already dead.
            return match outcome {
                Outcome::Done => Garbage::NONE,
                Outcome::Again(body) | Outcome::Pending(body) => Garbage(Some(body)),
            };
        }
        let body = match outcome {
            Outcome::Done => return self.release(index),
            Outcome::Again(body) | Outcome::Pending(body) if slot.cancelled => {
                let garbage = self.release(index);
                drop(garbage);
                return Garbage(Some(body));
            }
            Outcome::Pending(body) => {
                slot.body = body;
                slot.place = Place::Parked;
                return Garbage::NONE;
            }
            Outcome::Again(body) => body,
        };
        slot.body = body;
        match slot.cadence {
            Cadence::Every => {
                // Drift-free: previous deadline + interval, unless a whole interval was missed.
                let now = clock.now();
                let mut next = slot.deadline.saturating_add(interval);
                if next <= now {
                    next = now.saturating_add(interval);
                }
                slot.deadline = next;
                slot.place = Place::Heap;
                let priority = slot.priority;
                self.timers.push(index, next, priority);
            }
            Cadence::EveryFrame => {
                slot.place = Place::Frame;
                self.frame.push(index);
            }
            Cadence::Entry if slot.requeue => {
                slot.requeue = false;
                slot.place = Place::Queued;
                let priority = slot.priority;
                self.queues.push(priority, index);
            }
            Cadence::Entry => slot.place = Place::Idle,
            Cadence::Once => return self.release(index),
        }
        Garbage::NONE
    }

    /// Budget spent before `queue`: counts what waits there and after it, attributing it to
    /// origins when profiling. Returns the live count and how many queued entries the
    /// attribution looked at now.
    ///
    /// The attribution is capped so that its cost does not grow with the backlog: up to
    /// [`DEFER_SAMPLES`] waiting entries it is exact and made at once (at most that many entries
    /// looked at past the budget); beyond that it is sampled ([`Core::attribute_pending`]), and
    /// the sampling is left for the start of the next step, inside that step's budget, or for
    /// whoever reads the statistics or the window first. Sampling reads entries spread over the
    /// whole backlog, cold in the cache: done here it ran past the budget every overloaded step.
    pub(crate) fn defer_from(&mut self, queue: usize) -> (u64, u64) {
        let live = self.queues.live_from(queue) as u64;
        if !self.profiling || live == 0 {
            return (live, 0);
        }
        if live > DEFER_SAMPLES as u64 || self.queues.len_from(queue) > DEFER_SAMPLES {
            self.counters.pending_attribution = Some((queue, live));
            return (live, 0);
        }
        let Core {
            queues,
            slab,
            profiler,
            ..
        } = self;
        let mut visited = 0;
        for entry in queues.live_entries_from(queue) {
            attribute(slab, profiler, entry, 1);
            visited += 1;
        }
        (live, visited)
    }

    /// Makes the sampled attribution a budget-stopped step left pending (docs/kernel.md §11.7):
    /// [`DEFER_SAMPLES`] entries evenly spaced over the backlog from the queue the budget ran
    /// out before, front to back (at a phase that moves each step), each standing for its stretch
    /// of the backlog. The counts are an estimate whose total is the exact deferred count of that
    /// step (a sampled entry that was cancelled meanwhile gives its share to nobody).
    pub(crate) fn attribute_pending(&mut self) {
        let Some((queue, live)) = self.counters.pending_attribution.take() else {
            return;
        };
        if !self.profiling {
            return;
        }
        let steps = self.counters.steps;
        let Core {
            queues,
            slab,
            profiler,
            counters,
            ..
        } = self;
        let raw = queues.len_from(queue) as u64;
        let samples = DEFER_SAMPLES as u64;
        // Where in its stretch each sample sits moves from step to step (by the golden ratio), so
        // a backlog with a period of its own (origins alternating) is not seen through one phase.
        let stride = (raw / samples).max(1);
        let offset = (steps.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % stride;
        // Two passes: first the samples' queue entries are loaded (independent cache misses the
        // core overlaps), then each is attributed (its closure or slot: more independent misses).
        // One pass would wait for two misses per sample, one after the other.
        let mut picked: [Option<(&QueueEntry, u64)>; DEFER_SAMPLES] = [None; DEFER_SAMPLES];
        let mut touched = 0_usize;
        for (j, pick) in (0..samples).zip(picked.iter_mut()) {
            // Sample j stands for the j-th of `samples` equal shares of the live count, and sits
            // in the j-th equal stretch of the (raw) backlog.
            let weight = (j + 1) * live / samples - j * live / samples;
            let position = j * raw / samples + offset;
            *pick = queues
                .entry_from(queue, position as usize)
                .filter(|_| weight > 0)
                .map(|entry| (entry, weight));
            if let Some((QueueEntry::Slot(index), _)) = pick {
                touched ^= *index as usize;
            } else if let Some((QueueEntry::Once(task), _)) = pick {
                touched ^= std::ptr::from_ref::<dyn OnceTask>(&**task).cast::<u8>() as usize;
            }
        }
        std::hint::black_box(touched);
        for (entry, weight) in picked.into_iter().flatten() {
            attribute(slab, profiler, entry, weight);
        }
        counters.attribution_visits = samples;
    }

    /// Step stages 1 and 2: marks the step running, computes its budget and releases ready work.
    /// Returns the budget, whether the profiler is on, whether a burst of timers came due, and
    /// the deadline the profiled drain checks (the budget's end). The last step's pending
    /// deferral attribution is made first, so its cost is inside this step's budget.
    pub(crate) fn begin_step(
        &mut self,
        explicit: Option<Duration>,
        start: Instant,
        frame: FrameReading,
        wakes: &WakeQueue,
    ) -> (Duration, bool, bool, Instant) {
        self.stepping = true;
        // The last step's sampled deferral attribution, inside this step's budget.
        self.attribute_pending();
        let reattached = std::mem::take(&mut self.attach.reattached);
        let budget = self.budget.for_step(explicit, start, frame, reattached);
        let burst = self.release_ready(start, wakes);
        (budget, self.profiling, burst, start.saturating_add(budget))
    }

    /// Step stage 4: records the finished step.
    pub(crate) fn finish_step(
        &mut self,
        elapsed: Duration,
        budget: Duration,
        frame: FrameReading,
        deferred: u64,
    ) {
        let c = &mut self.counters;
        c.last_step = elapsed;
        c.last_budget = budget;
        c.last_frame = frame;
        c.tasks_deferred = deferred;
        c.steps += 1;
        c.window_time += elapsed;
        c.window_steps += 1;
        c.window_max = c.window_max.max(elapsed);
        c.window_deferred += deferred;
        let pending = std::array::from_fn(|q| self.queues.live(q));
        c.metrics.step(elapsed, budget, deferred, pending);
        self.budget.record_step(elapsed);
    }

    /// Drains the diagnostics window.
    pub(crate) fn take_window(&mut self) -> StepWindow {
        self.attribute_pending();
        let c = &mut self.counters;
        let (longest_task, longest_task_origin) = self.profiler.window_task();
        let window = StepWindow {
            total_time: std::mem::take(&mut c.window_time),
            steps: std::mem::take(&mut c.window_steps),
            longest_step: std::mem::take(&mut c.window_max),
            deferred: std::mem::take(&mut c.window_deferred),
            longest_task,
            longest_task_origin,
            top_deferred: self.profiler.window_deferred(5),
            pending: std::array::from_fn(|q| self.queues.live(q)),
        };
        self.profiler.clear_window();
        window
    }

    /// Cancels everything and empties every place. Returns the bodies to drop.
    pub(crate) fn destroy(&mut self) -> Vec<Body> {
        self.destroyed = true;
        self.counters.pending_attribution = None;
        let mut bodies: Vec<Body> = self
            .queues
            .clear()
            .into_iter()
            .filter_map(|entry| match entry {
                QueueEntry::Once(task) => Some(Body::Inline(task)),
                QueueEntry::Slot(_) => None,
            })
            .collect();
        self.timers.clear();
        self.frame.clear();
        self.slab.clear_wakers();
        self.attach = Attachment::default();
        for slot in self.slab.slots_mut() {
            if slot.place != Place::Free {
                slot.cancelled = true;
                bodies.push(std::mem::replace(&mut slot.body, Body::Empty));
            }
        }
        bodies
    }
}

/// Counts `weight` deferrals of one queued entry against its origin (interning its call site if
/// needed); a cancelled slot counts for nobody.
fn attribute(slab: &mut Slab, profiler: &mut Profiler, entry: &QueueEntry, weight: u64) {
    let origin = match entry {
        QueueEntry::Slot(index) => {
            let slot = slab.at(*index);
            if slot.cancelled {
                return;
            }
            if slot.origin == NO_ORIGIN {
                slot.origin = profiler.intern_location(slot.location);
            }
            slot.origin
        }
        QueueEntry::Once(task) => match task.meta() {
            (location, NO_ORIGIN) => profiler.intern_location(location),
            (_, origin) => origin,
        },
    };
    profiler.note_deferred(origin, weight);
}
