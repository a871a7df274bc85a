//! Wakers for async tasks.
//!
//! A waker must be `Send + Sync`, while the scheduler is single-threaded, so a wake only records
//! the task's packed key in a mutex-guarded list the scheduler drains at the start of each step
//! (and checks when deciding whether it is idle). Waker allocations are pooled: when a future
//! finishes and nobody else holds its waker, the `Arc` is reused for the next spawned task, so
//! steady-state spawning allocates only the boxed future.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Wake;

/// Keys of tasks woken since the last drain.
#[derive(Default)]
pub(crate) struct WakeQueue {
    woken: Mutex<Vec<u64>>,
    pending: AtomicBool,
}

impl WakeQueue {
    fn push(&self, key: u64) {
        self.woken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(key);
        self.pending.store(true, Ordering::Release);
    }

    /// Whether anything was woken since the last drain.
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Moves the woken keys into `into` (cleared first), reusing its allocation.
    pub(crate) fn drain_into(&self, into: &mut Vec<u64>) {
        into.clear();
        if !self.is_pending() {
            return;
        }
        let mut woken = self.woken.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::swap(&mut *woken, into);
        self.pending.store(false, Ordering::Release);
    }
}

/// The waker of one async task (its key changes when the allocation is reused).
pub(crate) struct TaskWaker {
    key: AtomicU64,
    queue: Arc<WakeQueue>,
}

impl TaskWaker {
    pub(crate) fn new(key: u64, queue: Arc<WakeQueue>) -> Self {
        TaskWaker {
            key: AtomicU64::new(key),
            queue,
        }
    }

    /// Points a pooled waker at a new task.
    pub(crate) fn retarget(&self, key: u64) {
        self.key.store(key, Ordering::Relaxed);
    }
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.queue.push(self.key.load(Ordering::Relaxed));
    }
}
