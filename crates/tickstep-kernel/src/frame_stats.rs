//! The engine's per-frame statistics, as the frame-aware budget reads them.

/// What the host engine measured for its last frame. The frame-aware budget reads it once per
/// step, so the budget and the diagnostics describe the same frame.
///
/// An engine reports seconds ([`FrameStats::heartbeat_time`], [`FrameStats::physics_step_time`]).
/// An older engine or a test double may only have the legacy millisecond readings; it returns
/// `false` from [`FrameStats::reports_seconds`] and the scheduler divides the `*_ms` readings by
/// 1000. The choice is read **once**, when the source is installed, as docs/kernel.md §4.6
/// requires.
///
/// [`FrameLoop`](crate::FrameLoop) implements this by measuring its own frames.
///
/// ```
/// use tickstep_kernel::FrameStats;
///
/// struct LegacyEngine;
/// impl FrameStats for LegacyEngine {
///     fn reports_seconds(&self) -> bool { false }
///     fn heartbeat_time_ms(&self) -> f64 { 4.0 }
///     fn physics_step_time_ms(&self) -> f64 { 1.0 }
/// }
/// assert_eq!(LegacyEngine.heartbeat_time(), 0.0);
/// ```
pub trait FrameStats {
    /// Whether [`FrameStats::heartbeat_time`] exists on this source (the default). Read once.
    ///
    /// ```
    /// struct Modern;
    /// impl tickstep_kernel::FrameStats for Modern {}
    /// assert!(tickstep_kernel::FrameStats::reports_seconds(&Modern));
    /// ```
    fn reports_seconds(&self) -> bool {
        true
    }
    /// The engine's compute share of the last frame, in seconds. Includes the scheduler's own work.
    ///
    /// ```
    /// struct Engine;
    /// impl tickstep_kernel::FrameStats for Engine {
    ///     fn heartbeat_time(&self) -> f64 { 0.004 }
    /// }
    /// assert_eq!(tickstep_kernel::FrameStats::heartbeat_time(&Engine), 0.004);
    /// ```
    fn heartbeat_time(&self) -> f64 {
        0.0
    }
    /// Physics time of the last frame, in seconds (not part of the heartbeat time).
    ///
    /// ```
    /// struct Engine;
    /// impl tickstep_kernel::FrameStats for Engine {
    ///     fn physics_step_time(&self) -> f64 { 0.002 }
    /// }
    /// assert_eq!(tickstep_kernel::FrameStats::physics_step_time(&Engine), 0.002);
    /// ```
    fn physics_step_time(&self) -> f64 {
        0.0
    }
    /// Legacy: the heartbeat time in milliseconds.
    ///
    /// ```
    /// struct Old;
    /// impl tickstep_kernel::FrameStats for Old {
    ///     fn reports_seconds(&self) -> bool { false }
    ///     fn heartbeat_time_ms(&self) -> f64 { 4.0 }
    /// }
    /// assert_eq!(tickstep_kernel::FrameStats::heartbeat_time_ms(&Old), 4.0);
    /// ```
    fn heartbeat_time_ms(&self) -> f64 {
        0.0
    }
    /// Legacy: the physics time in milliseconds.
    ///
    /// ```
    /// struct Old;
    /// impl tickstep_kernel::FrameStats for Old {
    ///     fn reports_seconds(&self) -> bool { false }
    ///     fn physics_step_time_ms(&self) -> f64 { 1.5 }
    /// }
    /// assert_eq!(tickstep_kernel::FrameStats::physics_step_time_ms(&Old), 1.5);
    /// ```
    fn physics_step_time_ms(&self) -> f64 {
        0.0
    }
}
