//! News from a store's own thread for the host core (docs/runtime.md §6.3): the `PostgreSQL`
//! store claims rows, learns of takeovers and reads operator stops on its thread, whatever the
//! engine is doing, and calls the engine's store waker when it has left work for the next tick.
//! An engine with nothing due has no kernel timer armed, so without this it would not tick
//! until something else woke it — a standby node would never take anything over.
//!
//! The waker runs on the store's thread, so it only sets a flag and calls the host's own wake
//! (the tokio driver's, which starts the next frame at its slot). The core reads the flag
//! whenever it re-arms the schedules wake — at the start of every frame the driver runs, every
//! `run_*` call, every command cycle, every Bevy frame — and arms the tick for now. That tick
//! applies the claims and settles the firings they bring themselves (docs/schedules.md §11.39).
//! Cost when nothing arrives: one atomic load per re-arm.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tickstep_schedules::StoreWaker;

/// The flag a store's waker sets and the host wake it calls.
#[derive(Default)]
pub(crate) struct StoreNews {
    pending: AtomicBool,
    host_wake: Mutex<Option<StoreWaker>>,
}

impl StoreNews {
    /// The waker to register on the engine.
    pub(crate) fn waker(self: &Arc<Self>) -> StoreWaker {
        let news = Arc::clone(self);
        Arc::new(move || news.signal())
    }

    /// Also call `wake` whenever the store has news (the driver's wake).
    pub(crate) fn set_host_wake(&self, wake: StoreWaker) {
        *self
            .host_wake
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(wake);
    }

    fn signal(&self) {
        self.pending.store(true, Ordering::Release);
        let wake = self
            .host_wake
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(wake) = wake {
            wake();
        }
    }

    /// Whether news arrived since the last call. A plain load first, so the common case (no
    /// news) writes nothing.
    pub(crate) fn take(&self) -> bool {
        self.pending.load(Ordering::Acquire) && self.pending.swap(false, Ordering::AcqRel)
    }
}
