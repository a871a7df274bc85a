//! Bevy's own frame timing as the kernel's engine statistics ([`FrameStats`]; docs/bevy.md §3).
//!
//! The kernel's frame-aware budget wants two numbers about the previous frame: the engine's
//! compute time (`HeartbeatTime`, which includes the scheduler's own step, corrected by its
//! `StepEma`) and the physics time (`PhysicsStepTime`, not part of the heartbeat). In a Bevy app
//! the frame starts at `First` (before `TimeSystems`) and, for the kernel, ends right after its
//! step and sync point; the physics is the fixed main loop (`RunFixedMainLoop`, which runs
//! `FixedUpdate` zero or more times, the commands cycle included). So:
//!
//! * `PhysicsStepTime` = time spent in the fixed main loop during the previous frame;
//! * `HeartbeatTime` = (previous frame's start to its kernel sync point) - `PhysicsStepTime`.
//!
//! Both are measured on the [`RealClock`](crate::RealClock), read once each at those four points.

use std::cell::Cell;
use std::time::Duration;

use tickstep_kernel::FrameStats;
use tickstep_kernel::clock::Instant;

/// Measures Bevy frames and serves the last finished one to the kernel as [`FrameStats`].
#[derive(Debug, Default)]
pub(crate) struct FrameMeter {
    frame_start: Cell<Option<Instant>>,
    fixed_start: Cell<Option<Instant>>,
    fixed_this_frame: Cell<Duration>,
    heartbeat: Cell<Duration>,
    physics: Cell<Duration>,
}

impl FrameMeter {
    pub(crate) fn begin_frame(&self, now: Instant) {
        self.frame_start.set(Some(now));
        self.fixed_this_frame.set(Duration::ZERO);
    }

    pub(crate) fn begin_fixed(&self, now: Instant) {
        self.fixed_start.set(Some(now));
    }

    pub(crate) fn end_fixed(&self, now: Instant) {
        if let Some(start) = self.fixed_start.take() {
            self.fixed_this_frame
                .set(self.fixed_this_frame.get() + (now - start));
        }
    }

    /// Closes the frame at the kernel's sync point: what the next step will read.
    pub(crate) fn end_frame(&self, now: Instant) {
        let Some(start) = self.frame_start.take() else {
            return;
        };
        let physics = self.fixed_this_frame.get();
        self.physics.set(physics);
        self.heartbeat.set((now - start).saturating_sub(physics));
    }

    #[cfg(test)]
    pub(crate) fn heartbeat(&self) -> Duration {
        self.heartbeat.get()
    }

    #[cfg(test)]
    pub(crate) fn physics(&self) -> Duration {
        self.physics.get()
    }
}

impl FrameStats for FrameMeter {
    fn heartbeat_time(&self) -> f64 {
        self.heartbeat.get().as_secs_f64()
    }

    fn physics_step_time(&self) -> f64 {
        self.physics.get().as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn heartbeat_is_the_frame_minus_the_fixed_loop() {
        let meter = FrameMeter::default();
        let t = |ms: u64| Instant::ZERO + MS * u32::try_from(ms).unwrap();
        meter.begin_frame(t(100));
        meter.begin_fixed(t(103));
        meter.end_fixed(t(107));
        meter.end_frame(t(112));
        assert_eq!((meter.heartbeat(), meter.physics()), (MS * 8, MS * 4));
    }

    #[test]
    fn a_frame_without_a_start_keeps_the_last_reading() {
        let meter = FrameMeter::default();
        meter.end_frame(Instant::ZERO + MS);
        assert_eq!(meter.heartbeat(), Duration::ZERO);
    }
}
