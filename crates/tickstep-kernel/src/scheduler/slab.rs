//! Task storage: one slot per pending task, freed slots reused lowest index first.
//!
//! Queues, the deadline heap and the frame list hold `u32` slot indices, never the tasks
//! themselves, so moving a recurring entry between places copies four bytes. A [`TaskKey`] pairs
//! the index with the slot's generation: a handle whose task has finished (and whose slot was
//! reused) no longer matches, which is how "cancelling after the run does nothing" costs one
//! comparison.

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::Priority;
use crate::clock::Instant;

use super::free_set::FreeSet;
use super::wake::TaskWaker;

/// Where a new task starts.
#[derive(Clone, Copy)]
pub(super) enum Start {
    Queued,
    After(Duration),
    EveryFrame,
    Every(Duration),
    Idle,
}

impl Start {
    /// Where an `every(interval)` task starts: the frame list for zero, the heap otherwise.
    pub(super) fn every(interval: Duration) -> Start {
        if interval.is_zero() {
            Start::EveryFrame
        } else {
            Start::Every(interval)
        }
    }
}

/// A boxed, not-`Send` future as the scheduler polls it.
pub(crate) type LocalFuture = Pin<Box<dyn Future<Output = ()>>>;

/// Index plus generation: names one task in one slot's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TaskKey {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl TaskKey {
    /// Packs the key for the (thread-safe) wake queue.
    pub(crate) fn pack(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }

    /// The inverse of [`TaskKey::pack`].
    pub(crate) fn unpack(packed: u64) -> TaskKey {
        TaskKey {
            index: packed as u32,
            generation: (packed >> 32) as u32,
        }
    }
}

/// What a handle names: a slab task, or an inline one-shot by its queue and sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskRef {
    Slot(TaskKey),
    Once { queue: u8, seq: u64 },
}

/// Generations count in 30 bits, so a [`TaskRef`] packs into 63 (see [`TaskRef::pack`]).
const GENERATION_MASK: u32 = (1 << 30) - 1;
/// The packed form's bit that marks a one-shot.
const ONCE_BIT: u64 = 1 << 62;

impl TaskRef {
    /// Packs the reference into the low 63 bits of a `u64` (a handle keeps the top bit), so a
    /// handle is two words: a table of 100k handles then fits in the L2 cache. A slot is its index
    /// and 30-bit generation; a one-shot is its queue (3 bits) and 59-bit sequence number.
    pub(crate) fn pack(self) -> u64 {
        match self {
            TaskRef::Slot(key) => {
                debug_assert!(key.generation <= GENERATION_MASK);
                (u64::from(key.generation) << 32) | u64::from(key.index)
            }
            TaskRef::Once { queue, seq } => {
                debug_assert!(seq < 1 << 59, "one-shot sequence numbers fit in 59 bits");
                ONCE_BIT | (seq << 3) | u64::from(queue)
            }
        }
    }

    /// The inverse of [`TaskRef::pack`] (bit 63 is ignored).
    pub(crate) fn unpack(packed: u64) -> TaskRef {
        if packed & ONCE_BIT == 0 {
            TaskRef::Slot(TaskKey {
                index: packed as u32,
                generation: (packed >> 32) as u32 & GENERATION_MASK,
            })
        } else {
            TaskRef::Once {
                queue: (packed & 0b111) as u8,
                seq: (packed & (ONCE_BIT - 1)) >> 3,
            }
        }
    }
}

/// When a task runs again after it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cadence {
    /// Never: `schedule`, `after`, `spawn`.
    Once,
    /// Every step: `every(0)`.
    EveryFrame,
    /// On the deadline heap, its interval after the previous deadline (the interval lives in a
    /// side table, so a slot stays one cache line).
    Every,
    /// Only when its owner queues it again (`schedule_entry`).
    Entry,
}

/// Where a live task is. A recurring entry is in exactly one place at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Not a task: in the free set.
    Free,
    /// An entry waiting for its owner to queue it.
    Idle,
    /// In its priority queue.
    Queued,
    /// Being run (or polled) right now.
    Running,
    /// On the deadline heap, or queued after coming due: due timers move to their queue without
    /// their slot being written (the heap's position table tells the two apart).
    Heap,
    /// On the every(0) frame list.
    Frame,
    /// A future waiting for its waker.
    Parked,
}

/// The code a task runs.
pub(crate) enum Body {
    /// Nothing (taken out to run, consumed, or dropped on cancel).
    Empty,
    /// A one-shot closure (an `after()` timer) too large (or too small) for a pool.
    Once(Box<dyn FnOnce()>),
    /// A one-shot closure (an `after()` timer) waiting in its type's pool.
    Pooled(super::pool::PooledFn),
    /// A `schedule()` one-shot taken from its queue.
    Inline(Box<dyn super::queues::OnceTask>),
    /// A recurring closure or reusable entry.
    Repeat(Box<dyn FnMut()>),
    /// A one-shot future.
    Future(LocalFuture),
    /// A recurring async job: a factory and the run in progress.
    AsyncRepeat(Box<AsyncJob>),
}

/// A recurring async job. `current` is `Some` while a run is in flight, which is what keeps the
/// job from overlapping itself: the next deadline is set only once it completes.
pub(crate) struct AsyncJob {
    pub(crate) factory: Box<dyn FnMut() -> LocalFuture>,
    pub(crate) current: Option<LocalFuture>,
}

/// One task's bookkeeping: exactly one cache line, so a timer firing out of a large heap touches
/// one line of the slab, not two. Rarely used fields (intervals, wakers) live in side tables.
#[repr(align(64))]
pub(crate) struct Slot {
    pub(crate) body: Body,
    pub(crate) location: &'static Location<'static>,
    pub(crate) deadline: Instant,
    pub(crate) generation: u32,
    /// Profiler origin index, or [`super::profile::NO_ORIGIN`] until first needed.
    pub(crate) origin: u32,
    pub(crate) priority: Priority,
    pub(crate) place: Place,
    pub(crate) cancelled: bool,
    /// An entry queued again by its owner while it was running.
    pub(crate) requeue: bool,
    pub(crate) cadence: Cadence,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// What a new slot holds.
pub(crate) struct NewTask {
    pub(crate) body: Body,
    pub(crate) priority: Priority,
    pub(crate) cadence: Cadence,
    pub(crate) location: &'static Location<'static>,
    pub(crate) origin: u32,
    pub(crate) place: Place,
    /// Interval in nanoseconds for [`Cadence::Every`], else 0.
    pub(crate) interval: u64,
}

/// The slots and their free set.
pub(crate) struct Slab {
    slots: Vec<Slot>,
    /// Interval (ns) per slot index, for `every()` slots; grown on demand.
    intervals: Vec<u64>,
    /// Waker per slot index, for future slots; grown on demand.
    wakers: Vec<Option<Arc<TaskWaker>>>,
    /// Freed slots, reused lowest index first (see [`FreeSet`]); boxed on the first release, so
    /// the scheduler's own allocation stays small.
    free: Option<Box<FreeSet>>,
    live: usize,
}

impl Slab {
    pub(crate) fn new() -> Self {
        Slab {
            slots: Vec::new(),
            intervals: Vec::new(),
            wakers: Vec::new(),
            free: None,
            live: 0,
        }
    }

    /// Stores a task and returns its key. Reuses a free slot when there is one.
    pub(crate) fn insert(&mut self, task: NewTask) -> TaskKey {
        let reused = self.free.as_mut().and_then(|free| free.take_lowest());
        if task.cadence == Cadence::Every {
            let index = reused.map_or(self.slots.len(), |i| i as usize);
            if index >= self.intervals.len() {
                self.intervals.resize(index + 1, 0);
            }
            self.intervals[index] = task.interval;
        }
        self.live += 1;
        if let Some(index) = reused {
            let slot = &mut self.slots[index as usize];
            slot.origin = task.origin;
            slot.priority = task.priority;
            slot.place = task.place;
            slot.cancelled = false;
            slot.requeue = false;
            slot.cadence = task.cadence;
            slot.location = task.location;
            slot.body = task.body;
            return TaskKey {
                index,
                generation: slot.generation,
            };
        }
        let index = u32::try_from(self.slots.len()).expect("more than 4 billion pending tasks");
        self.slots.push(Slot {
            generation: 0,
            origin: task.origin,
            priority: task.priority,
            place: task.place,
            cancelled: false,
            requeue: false,
            cadence: task.cadence,
            location: task.location,
            deadline: Instant::ZERO,
            body: task.body,
        });
        TaskKey {
            index,
            generation: 0,
        }
    }

    /// The slot `key` names, if that task is still live.
    pub(crate) fn get(&self, key: TaskKey) -> Option<&Slot> {
        self.slots
            .get(key.index as usize)
            .filter(|s| s.generation == key.generation && s.place != Place::Free)
    }

    /// Mutable form of [`Slab::get`].
    pub(crate) fn get_mut(&mut self, key: TaskKey) -> Option<&mut Slot> {
        self.slots
            .get_mut(key.index as usize)
            .filter(|s| s.generation == key.generation && s.place != Place::Free)
    }

    /// The slot at `index`, live or not (indices from queues and the heap are always live).
    pub(crate) fn at(&mut self, index: u32) -> &mut Slot {
        &mut self.slots[index as usize]
    }

    /// Shared form of [`Slab::at`].
    pub(crate) fn peek(&self, index: u32) -> &Slot {
        &self.slots[index as usize]
    }

    /// The key of the live slot at `index`.
    pub(crate) fn key_at(&self, index: u32) -> TaskKey {
        TaskKey {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    /// Frees the slot at `index`: bumps its generation so old handles stop matching and hands back
    /// the body and waker for the caller to drop once it no longer borrows the scheduler (dropping
    /// user captures may run user code).
    ///
    /// A slot whose generation is exhausted is retired instead of reused: wrapping to zero would
    /// let a handle kept for 2^30 reuses of its slot cancel a stranger's task. Retiring costs one
    /// 64-byte slot per 2^30 tasks that slot served.
    pub(crate) fn release(&mut self, index: u32) -> (Body, Option<Arc<TaskWaker>>) {
        let slot = &mut self.slots[index as usize];
        debug_assert!(slot.place != Place::Free, "slot released twice");
        slot.place = Place::Free;
        if slot.generation < GENERATION_MASK {
            slot.generation += 1;
            self.free.get_or_insert_with(Box::default).insert(index);
        }
        self.live -= 1;
        let body = std::mem::replace(&mut slot.body, Body::Empty);
        let waker = self.wakers.get_mut(index as usize).and_then(Option::take);
        (body, waker)
    }

    /// The interval of an `every()` slot, in nanoseconds.
    pub(crate) fn interval(&self, index: u32) -> u64 {
        self.intervals.get(index as usize).copied().unwrap_or(0)
    }

    /// The waker place of a future slot.
    pub(crate) fn waker(&mut self, index: u32) -> &mut Option<Arc<TaskWaker>> {
        let index = index as usize;
        if index >= self.wakers.len() {
            self.wakers.resize_with(index + 1, || None);
        }
        &mut self.wakers[index]
    }

    /// Drops every waker (destroy).
    pub(crate) fn clear_wakers(&mut self) {
        self.wakers.clear();
    }

    /// Live tasks.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Every slot, for destroy.
    pub(crate) fn slots_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        self.slots.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_ref_survives_packing_at_the_edges_of_its_fields() {
        for task in [
            TaskRef::Slot(TaskKey {
                index: 0,
                generation: 0,
            }),
            TaskRef::Slot(TaskKey {
                index: u32::MAX,
                generation: GENERATION_MASK,
            }),
            TaskRef::Once { queue: 0, seq: 0 },
            TaskRef::Once {
                queue: 4,
                seq: (1 << 59) - 1,
            },
        ] {
            assert_eq!(TaskRef::unpack(task.pack()), task);
            assert_eq!(
                TaskRef::unpack(task.pack() | 1 << 63),
                task,
                "bit 63 is the handle's"
            );
        }
    }

    #[test]
    fn freed_slots_are_reused_lowest_index_first() {
        let mut slab = Slab::new();
        let task = || NewTask {
            body: Body::Empty,
            priority: Priority::Normal,
            cadence: Cadence::Once,
            location: Location::caller(),
            origin: 0,
            place: Place::Idle,
            interval: 0,
        };
        let keys: Vec<TaskKey> = (0..6).map(|_| slab.insert(task())).collect();
        for index in [4, 1, 5, 2] {
            let _ = slab.release(keys[index].index);
        }
        let reused: Vec<u32> = (0..5).map(|_| slab.insert(task()).index).collect();
        assert_eq!(reused, [1, 2, 4, 5, 6], "lowest first, then a new slot");
    }

    #[test]
    fn a_slot_whose_generation_is_exhausted_is_retired_not_reused() {
        let mut slab = Slab::new();
        let task = || NewTask {
            body: Body::Empty,
            priority: Priority::Normal,
            cadence: Cadence::Once,
            location: Location::caller(),
            origin: 0,
            place: Place::Idle,
            interval: 0,
        };
        let key = slab.insert(task());
        slab.at(key.index).generation = GENERATION_MASK;
        let stale = slab.key_at(key.index);
        let _ = slab.release(key.index);
        let again = slab.insert(task());
        assert_ne!(
            again.index, key.index,
            "the exhausted slot is never handed out again"
        );
        assert!(
            slab.get(stale).is_none(),
            "no handle matches a retired slot"
        );
    }
}
