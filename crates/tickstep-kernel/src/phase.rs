//! Engine roles and the phases a frame runs.

/// Which side of the game a loop, scheduler or kernel runs on. It picks the budget defaults and
/// whether the PreRender phase exists.
///
/// ```
/// use tickstep_kernel::{FramePhase, Role};
/// assert!(Role::Client.runs(FramePhase::PreRender));
/// assert!(!Role::Server.runs(FramePhase::PreRender));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Authoritative simulation: frame-aware budgets, no rendering, overload diagnostics.
    Server,
    /// Renders: a fixed small budget so task work never starves rendering.
    Client,
}

impl Role {
    /// Whether a frame in this role runs `phase` (every phase but PreRender runs on both).
    ///
    /// ```
    /// use tickstep_kernel::{FramePhase, Role};
    /// assert!(Role::Server.runs(FramePhase::Heartbeat));
    /// ```
    pub fn runs(self, phase: FramePhase) -> bool {
        phase != FramePhase::PreRender || self == Role::Client
    }
}

/// A point in the frame where bound schedulers step.
///
/// A frame runs [`FramePhase::PreRender`] (client only), then [`FramePhase::PreSimulation`], the physics
/// step, [`FramePhase::PostSimulation`], and finally [`FramePhase::Heartbeat`].
///
/// ```
/// use tickstep_kernel::FramePhase;
/// assert_eq!(FramePhase::default(), FramePhase::Heartbeat);
/// assert_eq!(FramePhase::IN_FRAME_ORDER.len(), 4);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FramePhase {
    /// Before each simulation (physics) step: physics-coupled work.
    PreSimulation,
    /// After each simulation step.
    PostSimulation,
    /// After simulation, once per frame: the kernel's main scheduler.
    #[default]
    Heartbeat,
    /// Before each render, client only: camera work.
    PreRender,
}

impl FramePhase {
    /// The phases in the order a frame runs them.
    ///
    /// ```
    /// use tickstep_kernel::FramePhase;
    /// assert_eq!(FramePhase::IN_FRAME_ORDER[0], FramePhase::PreRender);
    /// ```
    pub const IN_FRAME_ORDER: [FramePhase; 4] = [
        FramePhase::PreRender,
        FramePhase::PreSimulation,
        FramePhase::PostSimulation,
        FramePhase::Heartbeat,
    ];
}
