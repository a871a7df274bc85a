//! Catching task panics with the panic's own location and backtrace.
//!
//! `catch_unwind` hands back only the payload; the location and the stack at the panic are gone
//! by then. So the scheduler installs (once per process) a panic hook that, while a task runs on
//! this thread, stores the location and a [`Backtrace::capture`] in a thread-local instead of
//! printing: the panic is reported through `on_error` (or a `tracing` error when no handler is
//! connected). Panics outside tasks go to the previous hook unchanged. If the host replaces the
//! hook later, task errors simply carry no location and a disabled backtrace.

use std::any::Any;
use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::sync::Once;

thread_local! {
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
    static CAUGHT: RefCell<Option<(String, Backtrace)>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();

/// Installs the task-aware panic hook (idempotent).
pub(crate) fn install_hook() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_TASK.with(Cell::get) {
                let location = info.location().map(ToString::to_string);
                CAUGHT.with(|c| {
                    *c.borrow_mut() = Some((location.unwrap_or_default(), Backtrace::capture()));
                });
            } else {
                previous(info);
            }
        }));
    });
}

/// Marks this thread as running task code for as long as it lives (one step): a panic in that
/// time is captured by the hook instead of printed. Set once per step, not per task, to keep
/// thread-local traffic off the per-task path. Between tasks only the scheduler's own code runs.
pub(crate) struct TaskScope {
    outer: bool,
}

impl TaskScope {
    pub(crate) fn enter() -> Self {
        TaskScope {
            outer: IN_TASK.with(|t| t.replace(true)),
        }
    }
}

impl Drop for TaskScope {
    fn drop(&mut self) {
        IN_TASK.with(|t| t.set(self.outer));
    }
}

/// Runs `f` as task code (inside a [`TaskScope`]): panics are caught.
#[inline]
pub(crate) fn run_task<R>(f: impl FnOnce() -> R) -> Result<R, Box<dyn Any + Send>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
}

/// The panic location and backtrace the hook captured for the last caught panic.
pub(crate) fn take_caught() -> (Option<String>, Backtrace) {
    match CAUGHT.with(|c| c.borrow_mut().take()) {
        Some((location, backtrace)) => ((!location.is_empty()).then_some(location), backtrace),
        None => (None, Backtrace::disabled()),
    }
}
