//! The host core on its own (docs/runtime.md §8): what a host that is neither the `Runtime` nor
//! the Bevy plugin gets, and the settlement call a host makes whenever rows arrive (docs/runtime.md §8.2).

use std::rc::Rc;
use std::time::Duration;

use tickstep_host::HostError;
use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
use tickstep_host::schedules::{FaultKind, ObjId, OpenWorld, Options, ScheduleId, Value};
use tickstep_host::{HostCore, HostSettings};

const WIZARD: ObjId = ObjId(1);

/// A core on a fresh kernel, its engine opened on `path`, with one async verb that sleeps an hour.
fn host(
    clock: &ManualClock,
    path: &std::path::Path,
) -> (Rc<HostCore<ManualClock>>, FrameScheduler, usize) {
    let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    let settings = HostSettings::default();
    let core = HostCore::new(clock.clone(), kernel.clone(), &settings, None);
    let settled = core.open(Some(path), Box::new(OpenWorld), None).unwrap();
    core.async_verb("long_job", |call| async move {
        call.sleep(Duration::from_secs(3_600)).await; // an hour
        Ok(Value::Int(0))
    });
    (core, kernel, settled)
}

/// Steps the kernel through `d` of virtual time, 10 ms at a time.
fn run(core: &Rc<HostCore<ManualClock>>, kernel: &FrameScheduler, clock: &ManualClock, d: u64) {
    core.rearm();
    for _ in 0..d / 10 {
        clock.advance(Duration::from_millis(10));
        kernel.step();
    }
}

fn every(core: &HostCore<ManualClock>, seconds: f64) -> ScheduleId {
    let mut txn = core.engine().begin(WIZARD);
    let id = txn
        .schedule_every(ObjId(7), "long_job", seconds, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    id
}

#[test]
fn settling_interrupted_firings_abandons_the_restored_ones_and_never_a_running_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.db");
    let clock = ManualClock::new();

    let (core, kernel, settled) = host(&clock, &path);
    assert_eq!(settled, 0);
    let old = every(&core, 1.0);
    run(&core, &kernel, &clock, 1_050);
    assert_eq!(
        core.running_firings().len(),
        1,
        "in flight when the host goes"
    );
    drop((core, kernel));

    // The next host settles the firing it found in flight, once, at open...
    let (core, kernel, settled) = host(&clock, &path);
    assert_eq!(settled, 1);
    let info = core.engine().begin(WIZARD).schedule_info(old).unwrap();
    assert_eq!(
        info.last_fault.map(|f| f.kind),
        Some(FaultKind::Interrupted)
    );
    // ...and calling it again while its own firings run touches none of them.
    run(&core, &kernel, &clock, 1_050);
    let running = core.running_firings();
    assert!(!running.is_empty(), "a new firing runs here");
    assert_eq!(core.settle_interrupted(), 0);
    assert_eq!(core.running_firings(), running);
    let info = core.engine().begin(WIZARD).schedule_info(old).unwrap();
    assert_eq!(info.fault_count, 1, "settled once, not again");
}

#[test]
fn a_core_opens_its_engine_once() {
    let clock = ManualClock::new();
    let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    let settings = HostSettings::default();
    let core = HostCore::new(clock, kernel, &settings, None);
    core.open(None, Box::new(OpenWorld), None).unwrap();
    let again = core.open(None, Box::new(OpenWorld), None);
    assert!(matches!(again, Err(HostError::AlreadyOpen)), "{again:?}");
}
