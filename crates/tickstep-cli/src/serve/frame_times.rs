//! What the wizard's `stats` reports about frames (docs/serve.md §3.4, §3.5): each frame's step
//! time on the wall clock, and the server thread's CPU time inside the same step.
//!
//! The two differ when the operating system runs other processes in the middle of a frame: on a
//! machine with more runnable threads than cores a 2 ms frame can take 20 ms of wall time. The
//! CPU time is the frame's own work (its schedules tick, its firings); a frame over the period in
//! CPU time overran because of what the server did, one over it only on the wall clock was
//! preempted. Both are counted; neither replaces the other.
//!
//! Cost: two reads of the thread's CPU clock per frame (a `clock_gettime`, well under a
//! microsecond each).

use std::cell::{Cell, RefCell};
use std::time::Duration;

use tickstep::dashboard::LiveFrames;

/// Step times of the frames run since the last summary, and the frame period they are held
/// against.
#[derive(Default)]
pub(crate) struct FrameTimes {
    wall: RefCell<Vec<u32>>,
    cpu: RefCell<Vec<u32>>,
    overruns: Cell<u64>,
    cpu_overruns: Cell<u64>,
    period_micros: Cell<u32>,
    /// The thread's CPU time when the step being measured began.
    cpu_at_start: Cell<Option<Duration>>,
    /// The frames the dashboard's live view charts (docs/serve.md §13.6), kept only once
    /// someone watches.
    live: LiveFrames,
}

/// Quantiles of one kind of step time, in microseconds, and the frames over the period.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Quantiles {
    pub(crate) p50: u32,
    pub(crate) p99: u32,
    pub(crate) max: u32,
    pub(crate) overruns: u64,
}

/// A summary of the frames since the last one.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) count: usize,
    pub(crate) wall: Quantiles,
    /// All zero where the thread's CPU time cannot be read (not Linux).
    pub(crate) cpu: Quantiles,
}

impl FrameTimes {
    /// At most this many frames are kept between summaries (about 18 minutes at 60 fps).
    const KEPT: usize = 1 << 16;

    /// The frames the dashboard's live view charts (a clone shares them).
    pub(crate) fn live(&self) -> &LiveFrames {
        &self.live
    }

    pub(crate) fn set_period(&self, period: Duration) {
        self.period_micros.set(micros(period));
    }

    /// Called before each step of the frame loop: notes the thread's CPU time.
    pub(crate) fn step_starts(&self) {
        self.cpu_at_start.set(thread_cpu_time());
    }

    /// Records the frame that just ran: its step (heartbeat) time, and the thread's CPU time
    /// since [`step_starts`](Self::step_starts).
    pub(crate) fn record(&self, step: Duration) {
        let cpu = self
            .cpu_at_start
            .take()
            .zip(thread_cpu_time())
            .map(|(start, end)| end.saturating_sub(start));
        self.record_times(step, cpu);
    }

    fn record_times(&self, step: Duration, cpu: Option<Duration>) {
        let period = self.period_micros.get();
        let keep = |kept: &RefCell<Vec<u32>>, overruns: &Cell<u64>, time: Duration| {
            let micros = micros(time);
            if micros > period {
                overruns.set(overruns.get() + 1);
            }
            let mut kept = kept.borrow_mut();
            if kept.len() < Self::KEPT {
                kept.push(micros);
            }
        };
        keep(&self.wall, &self.overruns, step);
        if let Some(cpu) = cpu {
            keep(&self.cpu, &self.cpu_overruns, cpu);
        }
        self.live.record(step, cpu);
    }

    /// The frames since the last summary, and a fresh start.
    pub(crate) fn take_summary(&self) -> Summary {
        let wall = std::mem::take(&mut *self.wall.borrow_mut());
        let cpu = std::mem::take(&mut *self.cpu.borrow_mut());
        Summary {
            count: wall.len(),
            wall: quantiles(wall, self.overruns.replace(0)),
            cpu: quantiles(cpu, self.cpu_overruns.replace(0)),
        }
    }
}

fn quantiles(mut kept: Vec<u32>, overruns: u64) -> Quantiles {
    kept.sort_unstable();
    let at = |q: f64| {
        kept.get(((kept.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0)
    };
    Quantiles {
        p50: at(0.5),
        p99: at(0.99),
        max: at(1.0),
        overruns,
    }
}

fn micros(time: Duration) -> u32 {
    u32::try_from(time.as_micros()).unwrap_or(u32::MAX)
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), or `None` where there is none. Exact to
/// the nanosecond, unlike Linux's `schedstat`, which lags by up to a scheduler tick (4 ms).
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)] // `None` off Unix
fn thread_cpu_time() -> Option<Duration> {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let secs = u64::try_from(now.tv_sec).ok()?;
    let nanos = u32::try_from(now.tv_nsec).ok()?;
    Some(Duration::new(secs, nanos))
}

#[cfg(not(unix))]
fn thread_cpu_time() -> Option<Duration> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_frames_are_kept_apart_from_the_wizards_stats() {
        // docs/serve.md §13.6
        let times = FrameTimes::default();
        times.set_period(Duration::from_micros(16_667));
        let watching = times.live().clone();
        assert!(
            watching.take().is_empty(),
            "the first look starts the keeping"
        );
        for ms in 0..3 {
            times.record_times(Duration::from_millis(ms), Some(Duration::from_micros(5)));
        }
        assert_eq!(watching.take(), [(0, 5), (1_000, 5), (2_000, 5)]);
        assert_eq!(
            times.take_summary().count,
            3,
            "the wizard's stats are untouched"
        );
    }

    #[test]
    fn wall_and_cpu_overruns_are_counted_apart_and_reset_by_a_summary() {
        let times = FrameTimes::default();
        times.set_period(Duration::from_micros(16_667));
        let ms = Duration::from_millis;
        // Preempted: 20 ms on the wall, 2 ms of its own work.
        times.record_times(ms(20), Some(ms(2)));
        // Its own work overran.
        times.record_times(ms(18), Some(ms(17)));
        times.record_times(ms(3), Some(ms(3)));
        times.record_times(ms(4), None); // CPU time unreadable: wall only
        let summary = times.take_summary();
        assert_eq!(summary.count, 4);
        assert_eq!(
            summary.wall,
            Quantiles {
                p50: 4_000,
                p99: 20_000,
                max: 20_000,
                overruns: 2
            }
        );
        assert_eq!(
            summary.cpu,
            Quantiles {
                p50: 3_000,
                p99: 17_000,
                max: 17_000,
                overruns: 1
            }
        );
        assert_eq!(times.take_summary(), Summary::default());
    }

    #[test]
    fn a_frame_is_measured_between_step_starts_and_record() {
        let times = FrameTimes::default();
        times.set_period(Duration::from_secs(1));
        times.step_starts();
        // Some work of the thread's own, so its CPU time moves on.
        let mut x = 0_u64;
        for i in 0..2_000_000_u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        times.record(Duration::from_millis(5));
        let summary = times.take_summary();
        assert_eq!(summary.count, 1);
        if thread_cpu_time().is_some() {
            assert!(summary.cpu.max > 0, "{summary:?}");
        }
        // Recorded without a start: the wall time alone.
        times.record(Duration::from_millis(5));
        assert_eq!(times.take_summary().cpu, Quantiles::default());
    }
}
