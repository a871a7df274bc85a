//! Profiler zones: a `tracing` span around every task, behind one process-wide switch.
//!
//! The span is named `tickstep.task` with the task's origin and priority as fields, so any
//! `tracing` subscriber that draws timelines (Tracy, Chrome trace) shows per-task cost. It is a
//! heavier layer than the hot-task profiler (the origin name is formatted per task), so it is on
//! by default only in debug builds.

use std::sync::atomic::{AtomicBool, Ordering};

static ZONES: AtomicBool = AtomicBool::new(cfg!(debug_assertions));

/// Turns profiler zones on or off for every scheduler in the process.
///
/// ```
/// tickstep_kernel::set_profiler_zones(true);
/// assert!(tickstep_kernel::profiler_zones());
/// tickstep_kernel::set_profiler_zones(false);
/// ```
pub fn set_profiler_zones(on: bool) {
    ZONES.store(on, Ordering::Relaxed);
}

/// Whether profiler zones are on (default: on in debug builds only).
///
/// ```
/// let _on: bool = tickstep_kernel::profiler_zones();
/// ```
pub fn profiler_zones() -> bool {
    ZONES.load(Ordering::Relaxed)
}
