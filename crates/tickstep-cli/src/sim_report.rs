//! What `tickstep sim` measured, frame by frame: the records the simulator fills in and the
//! plot draws (a leaf, so the plot names nothing of the simulator).

use std::time::Duration;

/// What one frame did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FrameRecord {
    pub(crate) budget: Duration,
    pub(crate) step: Duration,
    /// `StepEma` after the frame: the scheduler's smoothed step cost, which the frame-aware
    /// budget subtracts back out of the heartbeat time.
    pub(crate) step_ema: Duration,
    /// Tasks run, per priority (Kernel first).
    pub(crate) ran: [u64; 5],
    /// Tasks waiting after the frame (deferred), per priority.
    pub(crate) deferred: [u64; 5],
}

/// A published Kernel.Overload.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OverloadRecord {
    pub(crate) frame: u64,
    pub(crate) deferred: u64,
    pub(crate) longest_task: Duration,
    pub(crate) origin: Option<String>,
    pub(crate) top_deferred: String,
}

/// A finished simulation.
#[derive(Debug, Default)]
pub(crate) struct SimReport {
    pub(crate) frames: Vec<FrameRecord>,
    pub(crate) overloads: Vec<OverloadRecord>,
}
