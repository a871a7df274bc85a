//! Engine roles and the phases a frame runs.

/// Which side of the game a loop, scheduler or kernel runs on. It picks the budget defaults and
/// whether the PreRender phase exists.
///
/// ```
/// use tickstep_kernel::{Phase, Role};
/// assert!(Role::Client.runs(Phase::PreRender));
/// assert!(!Role::Server.runs(Phase::PreRender));
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
    /// use tickstep_kernel::{Phase, Role};
    /// assert!(Role::Server.runs(Phase::Heartbeat));
    /// ```
    pub fn runs(self, phase: Phase) -> bool {
        phase != Phase::PreRender || self == Role::Client
    }
}

/// A point in the frame where bound schedulers step.
///
/// A frame runs [`Phase::PreRender`] (client only), then [`Phase::PreSimulation`], the physics
/// step, [`Phase::PostSimulation`], and finally [`Phase::Heartbeat`].
///
/// ```
/// use tickstep_kernel::Phase;
/// assert_eq!(Phase::default(), Phase::Heartbeat);
/// assert_eq!(Phase::IN_FRAME_ORDER.len(), 4);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Phase {
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

impl Phase {
    /// The phases in the order a frame runs them.
    ///
    /// ```
    /// use tickstep_kernel::Phase;
    /// assert_eq!(Phase::IN_FRAME_ORDER[0], Phase::PreRender);
    /// ```
    pub const IN_FRAME_ORDER: [Phase; 4] = [
        Phase::PreRender,
        Phase::PreSimulation,
        Phase::PostSimulation,
        Phase::Heartbeat,
    ];
}
