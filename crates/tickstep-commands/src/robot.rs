//! The robot's state as the scheduler sees it: enabled or disabled, and the robot mode
//! (docs/commands.md §12). A leaf: the host implements [`RobotState`]; the scheduler reads it once
//! at the start of every `run()` and at every `schedule` from outside `run()`.

use std::cell::Cell;
use std::rc::Rc;

use crate::scope::OpMode;

/// What the host tells the scheduler about the robot: whether it is enabled and which robot mode
/// (an [`OpMode`]) it is in. Install one with
/// [`CommandScheduler::set_robot_state`](crate::CommandScheduler::set_robot_state); without one
/// the robot is always enabled and the opmode is whatever `set_opmode` set (docs/commands.md
/// §12.1).
///
/// Both methods are called with no borrow of the scheduler held, so they may read anything, but
/// they should be cheap: `is_enabled` is read at the start of every cycle.
///
/// ```
/// use tickstep_commands::{CommandScheduler, OpMode, RobotState};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// /// A field that keeps the robot disabled in every mode but test.
/// struct BenchOnly;
/// impl RobotState for BenchOnly {
///     fn is_enabled(&self) -> bool { false }
///     fn mode(&self) -> Option<OpMode> { Some(OpMode::DISABLED) }
/// }
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// scheduler.set_robot_state(BenchOnly);
/// assert!(!scheduler.is_enabled());
/// ```
pub trait RobotState {
    /// Whether the robot is enabled. While it is not, commands that require a mechanism not
    /// controllable while disabled are refused and canceled (docs/commands.md §12.2–§12.4).
    fn is_enabled(&self) -> bool;

    /// The robot mode, if the host wants the scheduler to follow it: a different mode than the
    /// active opmode switches the opmode at the start of the next `run()` (docs/commands.md
    /// §12.5). `None` (the default) leaves the opmode to `set_opmode`.
    ///
    /// ```
    /// use tickstep_commands::RobotState;
    /// struct Enabled;
    /// impl RobotState for Enabled { fn is_enabled(&self) -> bool { true } }
    /// assert_eq!(Enabled.mode(), None);
    /// ```
    fn mode(&self) -> Option<crate::OpMode> {
        None
    }
}

/// A [`RobotState`] the host sets by hand: a shared cell (clones see the same state), for
/// simulators, examples and tests. Starts disabled in [`OpMode::DISABLED`], as a robot does
/// when it boots.
///
/// ```
/// use tickstep_commands::{OpMode, RobotState, RobotStateCell};
/// let state = RobotStateCell::new();
/// assert!(!state.is_enabled());
/// state.set(true, OpMode::AUTONOMOUS);
/// let seen = state.clone();
/// assert!(seen.is_enabled());
/// assert_eq!(seen.mode(), Some(OpMode::AUTONOMOUS));
/// ```
#[derive(Clone, Debug)]
pub struct RobotStateCell(Rc<Cell<(bool, OpMode)>>);

impl RobotStateCell {
    /// A disabled robot in [`OpMode::DISABLED`].
    ///
    /// ```
    /// use tickstep_commands::{OpMode, RobotState, RobotStateCell};
    /// assert_eq!(RobotStateCell::new().mode(), Some(OpMode::DISABLED));
    /// ```
    pub fn new() -> Self {
        RobotStateCell(Rc::new(Cell::new((false, OpMode::DISABLED))))
    }

    /// Sets whether the robot is enabled and its mode; the scheduler sees it at its next
    /// `run()` (or `schedule`).
    ///
    /// ```
    /// use tickstep_commands::{OpMode, RobotState, RobotStateCell};
    /// let state = RobotStateCell::new();
    /// state.set(true, OpMode::TELEOP);
    /// assert!(state.is_enabled());
    /// ```
    pub fn set(&self, enabled: bool, mode: OpMode) {
        self.0.set((enabled, mode));
    }

    /// Disables the robot and puts it in [`OpMode::DISABLED`], as the field does at the end of a
    /// match.
    ///
    /// ```
    /// use tickstep_commands::{OpMode, RobotState, RobotStateCell};
    /// let state = RobotStateCell::new();
    /// state.set(true, OpMode::TELEOP);
    /// state.disable();
    /// assert!(!state.is_enabled());
    /// assert_eq!(state.mode(), Some(OpMode::DISABLED));
    /// ```
    pub fn disable(&self) {
        self.set(false, OpMode::DISABLED);
    }
}

impl Default for RobotStateCell {
    fn default() -> Self {
        Self::new()
    }
}

impl RobotState for RobotStateCell {
    fn is_enabled(&self) -> bool {
        self.0.get().0
    }

    fn mode(&self) -> Option<OpMode> {
        Some(self.0.get().1)
    }
}

/// The state of a robot with no host telling otherwise: always enabled, opmode left alone.
pub(crate) struct AlwaysEnabled;

impl RobotState for AlwaysEnabled {
    fn is_enabled(&self) -> bool {
        true
    }
}
