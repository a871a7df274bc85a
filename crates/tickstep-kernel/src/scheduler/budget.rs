//! The step budget: explicit > frame-aware > fixed, with the formulas of docs/kernel.md §4.
//!
//! ```text
//! first step after reattaching:  Budget = max(Target - HeartbeatTime - PhysicsStepTime, Floor)
//! no earlier step, or late:      Budget = Floor          (last step >= 1.25 x Target ago)
//! otherwise:                     Others = max(HeartbeatTime - StepEma, 0) + PhysicsStepTime
//!                                Budget = max(Target - Others, Floor)
//! ```
//!
//! `StepEma` is the scheduler's own smoothed step cost (alpha 0.1). `HeartbeatTime` already
//! contains the scheduler's previous work, so subtracting the average back out stops a scheduler
//! that fills idle frames from reading its own work as a busy engine and shrinking its budget.

use std::time::Duration;

use crate::clock::Instant;
use crate::{BudgetMode, FrameStats};

/// Smoothing factor of `StepEma`, matched to the engine stat's own smoothing.
pub(crate) const STEP_EMA_ALPHA: f64 = 0.1;

/// A step is late when the previous one started at least this many targets ago (1.25).
const LATE_FRAME_NUMERATOR: u32 = 5;
const LATE_FRAME_DENOMINATOR: u32 = 4;

/// The engine's frame readings, taken once per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrameReading {
    pub(crate) heartbeat: Duration,
    pub(crate) physics: Duration,
}

/// A frame-stats source and the unit it reports, decided once when installed.
#[derive(Clone)]
pub(crate) struct FrameSource {
    source: std::rc::Rc<dyn FrameStats>,
    legacy_ms: bool,
}

impl FrameSource {
    pub(crate) fn new(source: std::rc::Rc<dyn FrameStats>) -> Self {
        let legacy_ms = !source.reports_seconds();
        FrameSource { source, legacy_ms }
    }

    /// Reads both stats (host code: call it without borrowing the scheduler).
    pub(crate) fn read(&self) -> FrameReading {
        let (heartbeat, physics) = if self.legacy_ms {
            (
                self.source.heartbeat_time_ms() / 1000.0,
                self.source.physics_step_time_ms() / 1000.0,
            )
        } else {
            (
                self.source.heartbeat_time(),
                self.source.physics_step_time(),
            )
        };
        FrameReading {
            heartbeat: seconds(heartbeat),
            physics: seconds(physics),
        }
    }
}

/// Engine readings are trusted only as far as they make sense: NaN or negative reads as zero.
fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(if s > 0.0 {
        Duration::MAX
    } else {
        Duration::ZERO
    })
}

/// The budget rule plus the state its formulas need.
pub(crate) struct Budget {
    pub(crate) mode: BudgetMode,
    /// StepEma in nanoseconds.
    ema_nanos: f64,
    last_step_start: Option<Instant>,
}

impl Budget {
    pub(crate) fn new(mode: BudgetMode) -> Self {
        Budget {
            mode,
            ema_nanos: 0.0,
            last_step_start: None,
        }
    }

    /// The budget for a step starting at `now`. `reattached` marks the first step after the
    /// scheduler reattached from idle.
    pub(crate) fn for_step(
        &mut self,
        explicit: Option<Duration>,
        now: Instant,
        frame: FrameReading,
        reattached: bool,
    ) -> Duration {
        let previous = self.last_step_start.replace(now);
        if let Some(budget) = explicit {
            return budget;
        }
        let (target, floor) = match self.mode {
            BudgetMode::Fixed(budget) => return budget,
            BudgetMode::FrameAware { target, floor } => (target, floor),
        };
        if reattached {
            let others = frame.heartbeat.saturating_add(frame.physics);
            return target.saturating_sub(others).max(floor);
        }
        let late_after = target * LATE_FRAME_NUMERATOR / LATE_FRAME_DENOMINATOR;
        match previous {
            None => floor,
            Some(last) if now - last >= late_after => floor,
            Some(_) => {
                let others = frame.heartbeat.saturating_sub(self.ema()) + frame.physics;
                target.saturating_sub(others).max(floor)
            }
        }
    }

    /// Folds a finished step's cost into StepEma.
    pub(crate) fn record_step(&mut self, elapsed: Duration) {
        let sample = elapsed.as_nanos() as f64;
        self.ema_nanos += STEP_EMA_ALPHA * (sample - self.ema_nanos);
    }

    pub(crate) fn ema(&self) -> Duration {
        Duration::from_nanos(self.ema_nanos.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn frame(heartbeat_ms: u64, physics_ms: u64) -> FrameReading {
        FrameReading {
            heartbeat: MS * heartbeat_ms as u32,
            physics: MS * physics_ms as u32,
        }
    }

    fn aware() -> Budget {
        Budget::new(BudgetMode::FrameAware {
            target: MS * 16,
            floor: MS * 2,
        })
    }

    #[test]
    fn explicit_budget_always_wins() {
        let mut b = aware();
        assert_eq!(
            b.for_step(Some(MS * 7), Instant::ZERO, frame(99, 99), true),
            MS * 7
        );
    }

    #[test]
    fn first_step_ever_runs_at_the_floor() {
        let mut b = aware();
        assert_eq!(b.for_step(None, Instant::ZERO, frame(0, 0), false), MS * 2);
    }

    #[test]
    fn steady_step_subtracts_others_and_the_ema_correction() {
        let mut b = aware();
        b.for_step(None, Instant::ZERO, frame(0, 0), false);
        for _ in 0..200 {
            b.record_step(MS * 4);
        }
        // Others = max(10 - 4, 0) + 1 = 7 ms; budget = 16 - 7 = 9 ms.
        let budget = b.for_step(None, Instant::ZERO + MS * 16, frame(10, 1), false);
        assert!(
            budget.abs_diff(MS * 9) < Duration::from_micros(1),
            "{budget:?}"
        );
    }

    #[test]
    fn a_late_step_drops_to_the_floor() {
        let mut b = aware();
        b.for_step(None, Instant::ZERO, frame(0, 0), false);
        assert_eq!(
            b.for_step(None, Instant::ZERO + MS * 20, frame(0, 0), false),
            MS * 2
        );
    }

    #[test]
    fn the_reattach_step_skips_the_late_rule_and_the_ema() {
        let mut b = aware();
        b.for_step(None, Instant::ZERO, frame(0, 0), false);
        b.record_step(MS * 10);
        let budget = b.for_step(None, Instant::ZERO + MS * 5000, frame(3, 1), true);
        assert_eq!(budget, MS * 12);
    }

    #[test]
    fn the_budget_never_drops_below_the_floor() {
        let mut b = aware();
        assert_eq!(b.for_step(None, Instant::ZERO, frame(40, 40), true), MS * 2);
    }

    #[test]
    fn the_ema_moves_a_tenth_of_the_way() {
        let mut b = aware();
        b.record_step(MS * 10);
        assert_eq!(b.ema(), MS);
    }
}
