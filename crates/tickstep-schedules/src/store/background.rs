//! The CPU priority of the store's background threads (docs/schedules.md §11.36).

/// How much nicer than the engine's thread the store's background threads run
/// (docs/schedules.md §11.36).
#[cfg(target_os = "linux")]
const BACKGROUND_NICE_STEPS: i32 = 10;
/// The highest nice value Linux has.
#[cfg(target_os = "linux")]
const NICEST: i32 = 19;

/// Makes the calling thread [`BACKGROUND_NICE_STEPS`] nicer than it was (at most 19;
/// docs/schedules.md §11.36): the store's threads run when the engine's thread leaves a core, and
/// a woken one does not take the core from a frame. Linux keeps a nice value per thread;
/// elsewhere `setpriority` would lower the whole process, so nothing is done.
pub(super) fn yield_cpu_to_the_engine() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::process::getpriority_process(None).and_then(|nice| {
        rustix::process::setpriority_process(None, (nice + BACKGROUND_NICE_STEPS).min(NICEST))
    }) {
        tracing::debug!(%error, "a store thread keeps the engine's CPU priority");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{BACKGROUND_NICE_STEPS, NICEST, yield_cpu_to_the_engine};

    /// docs/schedules.md §11.36: the store's threads lower their own priority, and only theirs.
    #[test]
    fn a_store_thread_lowers_its_own_priority_and_not_the_process() {
        let before = rustix::process::getpriority_process(None).unwrap();
        let lowered = std::thread::spawn(|| {
            yield_cpu_to_the_engine();
            rustix::process::getpriority_process(None).unwrap()
        })
        .join()
        .unwrap();
        // Relative to the engine's: a test run under `nice -n 19` stays at 19, never above it.
        assert_eq!(lowered, (before + BACKGROUND_NICE_STEPS).min(NICEST));
        assert!(lowered >= before);
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
    }
}
