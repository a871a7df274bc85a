//! The robot's state in the scheduler (docs/commands.md §12): reading the host's
//! [`RobotState`](crate::RobotState), sweeping what a disabled robot may not run, and following
//! the robot mode — switching the opmode and running what the new mode sets up.

use std::rc::Rc;

use super::inner::RestoreMounted;
use super::{CommandScheduler, Inner};
use crate::id::Mounted;
use crate::scope::OpMode;

/// What a robot mode sets up when it starts (`CommandScheduler::on_mode`).
#[derive(Clone)]
pub(crate) struct ModeSetup {
    pub(crate) mode: OpMode,
    pub(crate) setup: Rc<dyn Fn(&CommandScheduler)>,
}

impl Inner {
    /// Reads whether the robot is enabled; a change to disabled makes the next cleanup phase
    /// sweep (docs/commands.md §12.3). The host's code runs with no borrow held.
    pub(crate) fn read_enabled(&self) -> bool {
        let robot = self.robot.borrow().clone();
        let enabled = robot.is_enabled();
        let mut s = self.state.borrow_mut();
        s.robot = s.robot.read(enabled);
        enabled
    }

    /// The start of a cycle: whether the robot is enabled, then its mode (docs/commands.md
    /// §12.1, §12.5).
    pub(crate) fn read_robot_state(self: &Rc<Self>) {
        self.read_enabled();
        let robot = self.robot.borrow().clone();
        if let Some(mode) = robot.mode() {
            self.enter_opmode(Some(mode));
        }
    }

    /// Whether the host's robot mode differs from the active opmode: the next `run()` enters it
    /// (docs/commands.md §12.8).
    pub(crate) fn mode_pending(&self) -> bool {
        let robot = self.robot.borrow().clone();
        robot
            .mode()
            .is_some_and(|mode| self.state.borrow().opmode != Some(mode))
    }

    /// Cancels what a disabled robot may not run, if it just became disabled.
    pub(crate) fn sweep_disabled(&self) {
        self.state.borrow_mut().sweep_disabled();
        self.settle();
    }

    /// Makes `opmode` the active one; when it changed, everything scoped to the old one dies at
    /// the next cleanup (docs/commands.md §8.1, §8.5) and the new mode's setups run now, outside
    /// any command, so what they make belongs to the new mode (docs/commands.md §12.6).
    pub(crate) fn enter_opmode(self: &Rc<Self>, opmode: Option<OpMode>) {
        let epoch = {
            let mut s = self.state.borrow_mut();
            if s.opmode == opmode {
                return;
            }
            s.opmode = opmode;
            s.opmode_epoch += 1;
            s.opmode_epoch
        };
        let Some(mode) = opmode else { return };
        let setups = self.mode_setups.borrow().clone();
        if !setups.iter().any(|m| m.mode == mode) {
            return;
        }
        let scheduler = CommandScheduler {
            inner: self.clone(),
        };
        let _unmount = RestoreMounted(&self.mounted, self.mounted.replace(Mounted::NOTHING));
        for m in setups.iter().filter(|m| m.mode == mode) {
            // A setup that changed the mode again stops the rest of the old mode's setups.
            if self.state.borrow().opmode_epoch != epoch {
                break;
            }
            (m.setup)(&scheduler);
        }
    }
}
