//! `FrameLoop`: phases, roles, measured frame stats.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{Log, MS, SECOND};
use tickstep_kernel::{
    Clock, FrameLoop, FrameLoopError, FramePhase, FrameScheduler, FrameStats, Instant, ManualClock,
    Priority, Role, ScheduleError, SchedulerConfig,
};

fn phased(clock: &ManualClock, fl: &FrameLoop, phase: FramePhase, log: &Log) -> FrameScheduler {
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::client().phase(phase));
    sched.bind(fl).unwrap();
    let _h = sched
        .every(
            Duration::ZERO,
            log.every(format!("{phase:?}")),
            Priority::Normal,
        )
        .unwrap();
    sched
}

#[test]
fn a_client_frame_runs_prerender_presimulation_postsimulation_then_heartbeat() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Client, 60);
    let log = Log::new();
    let _keep: Vec<FrameScheduler> = [
        FramePhase::Heartbeat,
        FramePhase::PostSimulation,
        FramePhase::PreSimulation,
        FramePhase::PreRender,
    ]
    .into_iter()
    .map(|p| phased(&clock, &fl, p, &log))
    .collect();
    let l = log.clone();
    fl.set_simulation(move |_| l.push("simulate"));
    fl.run_frames(1);
    assert_eq!(
        log.take(),
        [
            "PreRender",
            "PreSimulation",
            "simulate",
            "PostSimulation",
            "Heartbeat"
        ]
    );
}

#[test]
fn a_server_frame_has_no_prerender_phase() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(
        clock,
        SchedulerConfig::server().phase(FramePhase::PreRender),
    );
    assert_eq!(
        sched.bind(&fl),
        Err(ScheduleError::PhaseNotRun {
            phase: FramePhase::PreRender
        })
    );
    assert!(!sched.is_bound());
}

#[test]
fn frames_run_at_the_target_rate_in_virtual_time() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 50);
    let log = Log::new();
    let _s = phased(&clock, &fl, FramePhase::Heartbeat, &log);
    fl.run_frames(50);
    assert_eq!(clock.now().as_nanos(), 1_000_000_000);
    assert_eq!(
        (fl.frame_count(), fl.frames_run(), fl.steps_taken()),
        (50, 50, 50)
    );
}

#[test]
fn a_frame_that_overruns_starts_the_next_at_once_without_a_burst() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 50); // 20 ms frames
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&fl).unwrap();
    let c = clock.clone();
    let _h = sched
        .every(Duration::ZERO, move || c.advance(50 * MS), Priority::Kernel)
        .unwrap();
    fl.run_frames(3);
    assert_eq!(
        clock.now().as_nanos(),
        150_000_000,
        "three 50 ms frames back to back, no sleeps"
    );
}

#[test]
fn the_loop_measures_heartbeat_and_physics_time_for_bound_schedulers() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    let c = clock.clone();
    fl.set_simulation(move |_| c.advance(2 * MS));
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&fl).unwrap();
    let c = clock.clone();
    let _h = sched
        .every(Duration::ZERO, move || c.advance(3 * MS), Priority::Kernel)
        .unwrap();
    fl.run_frames(2);
    assert_eq!((fl.heartbeat_time(), fl.physics_step()), (3 * MS, 2 * MS));
    assert!((fl.heartbeat_time_secs() - 0.003).abs() < 1e-12);
    // The second step read the first frame's stats.
    let stats = sched.stats();
    assert_eq!(
        (stats.last_frame_busy, stats.last_physics),
        (3 * MS, 2 * MS)
    );
}

trait Secs {
    fn heartbeat_time_secs(&self) -> f64;
}

impl Secs for FrameLoop {
    fn heartbeat_time_secs(&self) -> f64 {
        FrameStats::heartbeat_time(self)
    }
}

#[test]
fn invalid_frame_rates_are_refused_with_the_value() {
    let err = FrameLoop::try_new(ManualClock::new(), Role::Server, 0).unwrap_err();
    assert_eq!(err, FrameLoopError::InvalidFrameRate { fps: 0 });
    assert!(err.to_string().contains("(got 0)"));
    assert!(FrameLoop::try_new(ManualClock::new(), Role::Server, 1001).is_err());
}

#[test]
#[should_panic(expected = "FrameLoop target frame rate must be 1 to 1000 fps (got 0)")]
fn new_panics_on_a_zero_frame_rate() {
    let _ = FrameLoop::new(ManualClock::new(), Role::Server, 0);
}

#[test]
fn binding_to_a_second_loop_moves_the_scheduler() {
    let clock = ManualClock::new();
    let a = FrameLoop::new(clock.clone(), Role::Server, 60);
    let b = FrameLoop::new(clock.clone(), Role::Server, 60);
    let log = Log::new();
    let sched = phased(&clock, &a, FramePhase::Heartbeat, &log);
    sched.bind(&b).unwrap();
    a.run_frames(3);
    assert_eq!(a.steps_taken(), 0);
    b.run_frames(3);
    assert_eq!(b.steps_taken(), 3);
}

/// `run_for`'s end is inclusive for deadlines, at a frame rate whose frames land on the end
/// (50 fps) and at one whose frames straddle it (60 fps: 16.666666 ms frames).
#[test]
fn run_for_serves_a_deadline_due_exactly_at_its_end() {
    for fps in [50, 60] {
        let clock = ManualClock::new();
        let frames = FrameLoop::new(clock.clone(), Role::Server, fps);
        let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
        sched.bind(&frames).unwrap();
        let runs = Rc::new(Cell::new(0));
        let r = runs.clone();
        let _job = sched
            .every(SECOND, move || r.set(r.get() + 1), Priority::Normal)
            .unwrap();
        frames.run_for(3 * SECOND);
        assert_eq!(runs.get(), 3, "{fps} fps: the firing due at 3 s ran");
        let at_three = clock.now();
        assert!(at_three >= Instant::ZERO + 3 * SECOND);
        assert!(
            at_three < Instant::ZERO + 3 * SECOND + frames.period(),
            "{fps} fps"
        );
        // Going on from there runs no frame twice and keeps the cadence.
        let before = frames.frame_count();
        frames.run_for(SECOND);
        assert_eq!(runs.get(), 4, "{fps} fps");
        assert!(frames.frame_count() - before <= u64::from(fps) + 1);
    }
}

#[test]
fn run_for_in_slices_serves_what_one_long_run_serves() {
    let run = |slices: u32| {
        let clock = ManualClock::new();
        let frames = FrameLoop::new(clock.clone(), Role::Server, 60);
        let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
        sched.bind(&frames).unwrap();
        let runs = Rc::new(Cell::new(0));
        let r = runs.clone();
        let _job = sched
            .every(
                Duration::from_millis(250),
                move || r.set(r.get() + 1),
                Priority::Normal,
            )
            .unwrap();
        // One end, slices up to it, and a last call for the end itself (as Runtime::run_for
        // does): a slice ends on a frame, which may be just past the end.
        let end = clock.now() + 6 * SECOND;
        while clock.now() < end {
            frames.run_to((clock.now() + 6 * SECOND / slices).min(end));
        }
        frames.run_to(end);
        runs.get()
    };
    assert_eq!(run(1), 24);
    assert_eq!(run(6), 24);
    assert_eq!(run(24), 24);
}

#[test]
fn a_manual_step_serves_a_deadline_equal_to_now() {
    let clock = ManualClock::new();
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let _t = sched
        .after(SECOND, move || r.set(true), Priority::Normal)
        .unwrap();
    clock.advance(SECOND);
    sched.step();
    assert!(ran.get(), "deadline <= now is due");
}

/// The case that needs the last `run_to(end)`: a one-second slice ends on the frame just past the
/// hour, and the hourly deadline lies between that slice's end and the hour.
#[test]
fn an_hour_in_one_second_slices_serves_the_deadline_at_the_hour() {
    let clock = ManualClock::new();
    let frames = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&frames).unwrap();
    let ran = Rc::new(Cell::new(0));
    let r = ran.clone();
    let _sweep = sched
        .every(600 * SECOND, move || r.set(r.get() + 1), Priority::High)
        .unwrap();
    let _busy = sched.every(100 * MS, || {}, Priority::Low).unwrap();
    let end = clock.now() + 3600 * SECOND;
    while clock.now() < end {
        frames.run_to((clock.now() + SECOND).min(end));
    }
    frames.run_to(end);
    assert_eq!(ran.get(), 6);
    assert_eq!(sched.next_deadline(), Some(end + 100 * MS));
}
