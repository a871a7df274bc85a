//! `FrameLoop`: the engine loop schedulers bind to.
//!
//! Each frame runs the phases in order (PreRender on the client, PreSimulation, the simulation
//! callback, PostSimulation, Heartbeat) and steps every bound scheduler of that phase that is
//! attached. It measures its own frames (compute time minus simulation time as the heartbeat time,
//! the simulation callback as physics time) and serves them as [`FrameStats`] to the schedulers
//! bound to it.
//!
//! When no bound scheduler is attached and there is no simulation callback, the loop does not
//! spin through empty frames: it sleeps with [`Clock::sleep_until`] straight to the first frame at
//! or after the earliest scheduler wake (34 ms before the earliest deadline), counting the frames
//! it slept through. With a [`ManualClock`](crate::ManualClock) that sleep moves virtual time at
//! once, so a hundred idle frames cost nothing. A frame that overruns its period starts the next
//! one at once without trying to catch up (no burst of frames).
//!
//! Wakes from other threads (an async task woken by a thread) are noticed at the next frame
//! boundary; while the loop sleeps through idle frames they wait for the sleep to end.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::{FrameLoopError, FramePhase, FrameScheduler, FrameStats, Role, ScheduleError};

/// A frame loop (cheap clonable handle).
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{FrameLoop, ManualClock, Priority, Role, FrameScheduler, SchedulerConfig};
///
/// let clock = ManualClock::new();
/// let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
/// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
/// sched.bind(&fl).unwrap();
/// for _ in 0..1000 {
///     let _t = sched.after(Duration::from_secs(10), || {}, Priority::Low).unwrap();
/// }
/// fl.run_frames(120); // two idle seconds: no steps, no real time
/// assert_eq!(sched.stats().steps, 0);
/// assert_eq!(fl.frame_count(), 120);
/// ```
#[derive(Clone)]
pub struct FrameLoop {
    shared: Rc<LoopShared>,
}

/// What a frame loop handle points at.
pub(crate) struct LoopShared {
    clock: crate::clock_dispatch::AnyClock,
    role: Role,
    period: Duration,
    measured: Rc<MeasuredFrame>,
    state: RefCell<LoopState>,
    /// Frames and idle frames, recorded through the `metrics` facade (docs/observability.md §2).
    metrics: crate::metrics::LoopMetrics,
}

struct LoopState {
    bound: Vec<FrameScheduler>,
    frame_count: u64,
    frames_run: u64,
    steps: u64,
    next_frame_at: Option<Instant>,
    simulation: Option<Simulation>,
}

/// The host's physics step, shared so the loop can call it with nothing borrowed.
type Simulation = Rc<RefCell<dyn FnMut(Duration)>>;

/// The loop's measurements of its last frame, served to bound schedulers.
#[derive(Default)]
struct MeasuredFrame {
    heartbeat: Cell<Duration>,
    physics: Cell<Duration>,
}

impl FrameStats for MeasuredFrame {
    fn heartbeat_time(&self) -> f64 {
        self.heartbeat.get().as_secs_f64()
    }
    fn physics_step_time(&self) -> f64 {
        self.physics.get().as_secs_f64()
    }
}

impl FrameLoop {
    /// A loop for `role` at `fps` frames per second.
    ///
    /// # Panics
    ///
    /// When `fps` is 0 or above 1000 (see [`FrameLoop::try_new`] for the checked form).
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// let fl = FrameLoop::new(ManualClock::new(), Role::Client, 60);
    /// assert_eq!(fl.role(), Role::Client);
    /// ```
    #[track_caller]
    pub fn new(clock: impl Clock + 'static, role: Role, fps: u32) -> Self {
        match Self::try_new(clock, role, fps) {
            Ok(fl) => fl,
            Err(err) => panic!("{err}"),
        }
    }

    /// A loop for `role` at `fps` frames per second.
    ///
    /// # Errors
    ///
    /// [`FrameLoopError::InvalidFrameRate`] when `fps` is 0 or above 1000.
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert!(FrameLoop::try_new(ManualClock::new(), Role::Server, 0).is_err());
    /// ```
    pub fn try_new(
        clock: impl Clock + 'static,
        role: Role,
        fps: u32,
    ) -> Result<Self, FrameLoopError> {
        if !(1..=1000).contains(&fps) {
            return Err(FrameLoopError::InvalidFrameRate { fps });
        }
        Ok(FrameLoop {
            shared: Rc::new(LoopShared {
                clock: crate::clock_dispatch::AnyClock::new(clock),
                role,
                period: Duration::from_secs(1) / fps,
                measured: Rc::default(),
                metrics: crate::metrics::LoopMetrics::register(),
                state: RefCell::new(LoopState {
                    bound: Vec::new(),
                    frame_count: 0,
                    frames_run: 0,
                    steps: 0,
                    next_frame_at: None,
                    simulation: None,
                }),
            }),
        })
    }

    /// The loop's role.
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert_eq!(FrameLoop::new(ManualClock::new(), Role::Server, 30).role(), Role::Server);
    /// ```
    pub fn role(&self) -> Role {
        self.shared.role
    }

    /// The frame period (1 / fps).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert_eq!(FrameLoop::new(ManualClock::new(), Role::Server, 50).period(), Duration::from_millis(20));
    /// ```
    pub fn period(&self) -> Duration {
        self.shared.period
    }

    /// Sets the simulation (physics) callback, run between PreSimulation and PostSimulation with
    /// the frame period. Its time is reported as physics time. A loop with a simulation callback
    /// runs every frame even when its schedulers are idle.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    /// let c = clock.clone();
    /// fl.set_simulation(move |_dt| c.advance(Duration::from_millis(2)));
    /// fl.run_frames(1);
    /// assert_eq!(fl.physics_step(), Duration::from_millis(2));
    /// ```
    pub fn set_simulation(&self, simulate: impl FnMut(Duration) + 'static) {
        self.shared.state.borrow_mut().simulation = Some(Rc::new(RefCell::new(simulate)));
    }

    /// Runs `frames` frames (frames slept through while idle count).
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// let fl = FrameLoop::new(ManualClock::new(), Role::Server, 60);
    /// fl.run_frames(3);
    /// assert_eq!(fl.frame_count(), 3);
    /// ```
    pub fn run_frames(&self, frames: u64) {
        let target = self.shared.state.borrow().frame_count + frames;
        while self.shared.state.borrow().frame_count < target {
            let remaining = target - self.shared.state.borrow().frame_count;
            self.advance(remaining, true);
        }
    }

    /// Runs frames until `duration` has passed on the clock (frames that overrun their period
    /// make this fewer frames than `duration / period`; idle stretches are slept through).
    ///
    /// **The end is inclusive for deadlines** (docs/kernel.md §10.9): a deadline at or before
    /// `now + duration` — one due exactly at the end included — has been served when this
    /// returns. A deadline is served by the first frame at or after it, so when one is due by the
    /// end and that frame has not run
    /// yet (the frame at the end instant, or the first one after an end between two frames), it
    /// runs before the call returns, without sleeping past it: the clock rests at that frame, and
    /// the next call goes on from there with no frame run twice. This is also what
    /// [`ManualClock::advance`](crate::ManualClock::advance) and a manual step do (a timer is due
    /// when `deadline <= now`), and what `run_until` gives when its condition turns true at a
    /// deadline.
    ///
    /// `duration` counts from now; when the end falls between two frames the call ends on the
    /// first frame after it. To cover an exact span in several calls, use [`FrameLoop::run_to`]
    /// with one end computed once (as the runtime's `run_for` does).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{Clock, FrameLoop, ManualClock, Role};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 50);
    /// fl.run_for(Duration::from_secs(1));
    /// assert_eq!(fl.frame_count(), 50);
    /// assert_eq!(clock.now().as_nanos(), 1_000_000_000);
    /// ```
    pub fn run_for(&self, duration: Duration) {
        self.run_to(self.shared.clock.now().saturating_add(duration));
    }

    /// Runs frames until the clock reaches `end`, serving every deadline at or before it (the
    /// end-inclusive rule of [`FrameLoop::run_for`]). Called when the clock has already passed
    /// `end` (an earlier call ended on a frame past it), it runs only the frame that serves a
    /// deadline at or before `end` still pending, if any. So a span cut into slices,
    /// `run_to(slice_end)` then a last `run_to(end)`, serves exactly what one call would.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{Clock, FrameLoop, ManualClock, Role};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 50);
    /// let end = clock.now() + Duration::from_secs(2);
    /// fl.run_to(clock.now() + Duration::from_secs(1));
    /// fl.run_to(end);
    /// assert_eq!(clock.now(), end);
    /// ```
    pub fn run_to(&self, end: Instant) {
        let clock = &self.shared.clock;
        let period = self.shared.period.as_nanos();
        loop {
            let now = clock.now();
            if now >= end {
                break;
            }
            let frames = (end - now).as_nanos().div_ceil(period);
            self.advance(u64::try_from(frames).unwrap_or(u64::MAX).max(1), true);
        }
        let due_by_end = {
            let state = self.shared.state.borrow();
            state
                .bound
                .iter()
                .any(|s| s.next_deadline().is_some_and(|d| d <= end))
        };
        if due_by_end {
            // The boundary frame: the one that serves deadlines up to the end, not slept past.
            self.advance(1, false);
        }
    }

    /// Frames elapsed (run or slept through).
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert_eq!(FrameLoop::new(ManualClock::new(), Role::Server, 60).frame_count(), 0);
    /// ```
    pub fn frame_count(&self) -> u64 {
        self.shared.state.borrow().frame_count
    }

    /// Frames actually run (not slept through).
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// let fl = FrameLoop::new(ManualClock::new(), Role::Server, 60);
    /// fl.run_frames(10); // nothing bound: all slept through
    /// assert_eq!(fl.frames_run(), 0);
    /// ```
    pub fn frames_run(&self) -> u64 {
        self.shared.state.borrow().frames_run
    }

    /// Scheduler steps this loop has taken, over all bound schedulers.
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert_eq!(FrameLoop::new(ManualClock::new(), Role::Server, 60).steps_taken(), 0);
    /// ```
    pub fn steps_taken(&self) -> u64 {
        self.shared.state.borrow().steps
    }

    /// Heartbeat time of the last frame run: compute time minus simulation time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert_eq!(FrameLoop::new(ManualClock::new(), Role::Server, 60).heartbeat_time(), Duration::ZERO);
    /// ```
    pub fn heartbeat_time(&self) -> Duration {
        self.shared.measured.heartbeat.get()
    }

    /// Simulation time of the last frame run.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role};
    /// assert_eq!(FrameLoop::new(ManualClock::new(), Role::Server, 60).physics_step(), Duration::ZERO);
    /// ```
    pub fn physics_step(&self) -> Duration {
        self.shared.measured.physics.get()
    }

    pub(crate) fn frame_stats(&self) -> Rc<dyn FrameStats> {
        self.shared.measured.clone()
    }

    pub(crate) fn downgrade(&self) -> Weak<LoopShared> {
        Rc::downgrade(&self.shared)
    }

    pub(crate) fn register(&self, scheduler: FrameScheduler) {
        self.shared.state.borrow_mut().bound.push(scheduler);
    }

    pub(crate) fn unregister(shared: &Rc<LoopShared>, scheduler: &FrameScheduler) {
        shared
            .state
            .borrow_mut()
            .bound
            .retain(|s| !s.same_as(scheduler));
    }

    /// Runs one frame, or sleeps through idle frames (at most `remaining`).
    fn advance(&self, remaining: u64, sleep_after: bool) {
        let shared = &*self.shared;
        let clock = &shared.clock;
        let scheduled = shared.state.borrow().next_frame_at;
        if let Some(at) = scheduled
            && clock.now() < at
        {
            // The previous frame was a boundary frame that did not sleep after itself.
            clock.sleep_until(at);
        }
        let start = clock.now();
        let (bound, simulation, frame_at) = {
            let mut state = shared.state.borrow_mut();
            let frame_at = *state.next_frame_at.get_or_insert(start);
            (state.bound.clone(), state.simulation.clone(), frame_at)
        };
        let attached = bound
            .iter()
            .fold(false, |any, s| s.poll_attachment(start) | any);
        if !attached && simulation.is_none() {
            // Idle: sleep to the first frame at or after the earliest wake.
            let wake = bound.iter().filter_map(FrameScheduler::wake_at).min();
            let period = shared.period.as_nanos();
            let skip = match wake {
                Some(wake) => u64::try_from((wake - frame_at).as_nanos().div_ceil(period))
                    .unwrap_or(u64::MAX)
                    .clamp(1, remaining),
                None => remaining,
            };
            let next = frame_at.saturating_add(
                shared
                    .period
                    .saturating_mul(u32::try_from(skip).unwrap_or(u32::MAX)),
            );
            {
                let mut state = shared.state.borrow_mut();
                state.frame_count += skip;
                state.next_frame_at = Some(next);
            }
            shared.metrics.frames(skip, true);
            shared.measured.heartbeat.set(Duration::ZERO);
            shared.measured.physics.set(Duration::ZERO);
            clock.sleep_until(next);
            return;
        }
        let mut physics = Duration::ZERO;
        let mut steps = 0;
        for phase in FramePhase::IN_FRAME_ORDER {
            if !shared.role.runs(phase) {
                continue;
            }
            if phase == FramePhase::PostSimulation
                && let Some(simulate) = &simulation
            {
                let before = clock.now();
                (simulate.borrow_mut())(shared.period);
                physics = clock.now() - before;
            }
            for scheduler in bound.iter().filter(|s| s.phase() == phase) {
                if scheduler.poll_attachment(clock.now()) {
                    scheduler.step();
                    steps += 1;
                }
            }
        }
        let end = clock.now();
        shared.measured.physics.set(physics);
        shared
            .measured
            .heartbeat
            .set((end - start).saturating_sub(physics));
        let next = {
            let mut state = shared.state.borrow_mut();
            state.frame_count += 1;
            state.frames_run += 1;
            state.steps += steps;
            // Overran the period: start the next frame at once, never a burst of catch-up frames.
            let next = frame_at.saturating_add(shared.period).max(end);
            state.next_frame_at = Some(next);
            next
        };
        shared.metrics.frames(1, false);
        if sleep_after {
            clock.sleep_until(next);
        }
    }
}

impl FrameStats for FrameLoop {
    /// The last frame's heartbeat time in seconds.
    fn heartbeat_time(&self) -> f64 {
        self.shared.measured.heartbeat_time()
    }
    /// The last frame's simulation time in seconds.
    fn physics_step_time(&self) -> f64 {
        self.shared.measured.physics_step_time()
    }
}

impl std::fmt::Debug for FrameLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameLoop")
            .field("role", &self.shared.role)
            .field("period", &self.shared.period)
            .field("frame_count", &self.frame_count())
            .finish_non_exhaustive()
    }
}

/// Binding lives with the loop: the scheduler keeps only an opaque link to it, so the engine
/// (`scheduler/`) names nothing of this module.
impl FrameScheduler {
    /// Binds the scheduler to its phase on `frame_loop`: from now on the loop steps it every
    /// frame while it has runnable work, and wakes it 34 ms before its earliest deadline
    /// otherwise. The loop's measured frame stats become the frame-aware budget's source.
    /// Binding again moves the scheduler to the new loop.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::PhaseNotRun`] when the loop's role does not run the scheduler's phase
    /// (PreRender on a server).
    ///
    /// # Panics
    ///
    /// With `scheduler is destroyed` after [`FrameScheduler::destroy`].
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Priority, Role, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// sched.bind(&fl)?;
    /// sched.schedule(|| {}, Priority::Normal);
    /// fl.run_frames(1);
    /// assert_eq!(sched.stats().tasks_run, 1);
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    #[track_caller]
    pub fn bind(&self, frame_loop: &FrameLoop) -> Result<(), ScheduleError> {
        let phase = self.live_phase();
        if !frame_loop.role().runs(phase) {
            return Err(ScheduleError::PhaseNotRun { phase });
        }
        self.unbind();
        frame_loop.register(self.clone());
        let link: Weak<dyn Any> = frame_loop.downgrade();
        self.set_loop_link(link, frame_loop.frame_stats());
        Ok(())
    }

    /// Detaches from the frame loop and cancels the idle wake. [`FrameScheduler::step`] still works.
    ///
    /// ```
    /// use tickstep_kernel::{FrameLoop, ManualClock, Role, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    /// let sched = FrameScheduler::new(clock, SchedulerConfig::server());
    /// sched.bind(&fl).unwrap();
    /// sched.unbind();
    /// assert!(!sched.is_bound());
    /// ```
    pub fn unbind(&self) {
        let bound = self.take_loop_link().and_then(|weak| weak.upgrade());
        if let Some(frame_loop) = bound.and_then(|link| link.downcast::<LoopShared>().ok()) {
            FrameLoop::unregister(&frame_loop, self);
        }
    }
}
