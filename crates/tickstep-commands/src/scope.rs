//! Scopes: how long a binding, sideload, default command or top-level command lives
//! (docs/commands.md §8).
//!
//! * **Global** — made outside any command with no opmode active: lives as long as the scheduler.
//! * **Opmode** — made outside any command while an opmode is active: dies when the opmode changes.
//! * **Command** — made inside a running command's body: dies when that command ends.
//!
//! Dead scopes are swept in the cleanup phase at the start of the next `run()`; the commands their
//! bindings scheduled, and top-level commands scheduled in a dead opmode, are canceled there. What
//! a command-scoped binding or default schedules runs as that command's child.

use crate::id::Key;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Scope {
    Global,
    /// The opmode epoch (bumped at every opmode change) when the scope was made.
    OpMode(u64),
    Command(Key),
}

/// An opmode identifier set by the host with
/// [`CommandScheduler::set_opmode`](crate::CommandScheduler::set_opmode) or followed from its
/// [`RobotState`](crate::RobotState) (autonomous, teleop, test, …). The robot modes are
/// constants; any other number is an opmode of the host's own.
///
/// ```
/// use tickstep_commands::OpMode;
/// let teleop = OpMode::new(2);
/// assert_eq!(teleop.get(), 2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct OpMode(u32);

impl OpMode {
    /// The robot mode of a disabled robot (docs/commands.md §12.5).
    ///
    /// ```
    /// assert_eq!(tickstep_commands::OpMode::DISABLED.get(), 0);
    /// ```
    pub const DISABLED: OpMode = OpMode(0);
    /// The autonomous robot mode.
    ///
    /// ```
    /// assert_eq!(tickstep_commands::OpMode::AUTONOMOUS.get(), 1);
    /// ```
    pub const AUTONOMOUS: OpMode = OpMode(1);
    /// The teleoperated robot mode.
    ///
    /// ```
    /// assert_eq!(tickstep_commands::OpMode::TELEOP.get(), 2);
    /// ```
    pub const TELEOP: OpMode = OpMode(2);
    /// The test robot mode.
    ///
    /// ```
    /// assert_eq!(tickstep_commands::OpMode::TEST.get(), 3);
    /// ```
    pub const TEST: OpMode = OpMode(3);

    /// The opmode numbered `id`.
    ///
    /// ```
    /// assert_eq!(tickstep_commands::OpMode::new(7), tickstep_commands::OpMode::new(7));
    /// ```
    pub const fn new(id: u32) -> Self {
        OpMode(id)
    }

    /// Its number.
    ///
    /// ```
    /// assert_eq!(tickstep_commands::OpMode::new(1).get(), 1);
    /// ```
    pub const fn get(self) -> u32 {
        self.0
    }
}
