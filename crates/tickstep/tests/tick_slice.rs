//! The runtime's schedules tick fits the frame (docs/runtime.md §3.4), on virtual time: a host
//! runner whose every start takes 100 µs of the manual clock meets the default 1.5 ms slice, so a
//! backlog of due firings is started fifteen a tick, one tick a frame, in deadline order.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::time::Duration;

use tickstep::kernel::ManualClock;
use tickstep::schedules::{Firing, ObjId, Options, Refused, Runner, ScheduleId};
use tickstep::{DEFAULT_SCHEDULES_TICK_TIME, Runtime};

const START_COST: Duration = Duration::from_micros(100);

/// Records each firing's (schedule, nominal deadline) and charges the clock for the start.
#[derive(Clone)]
struct SlowStarts {
    clock: ManualClock,
    started: Rc<RefCell<Vec<(u64, u64)>>>,
}

impl Runner for SlowStarts {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        self.clock.advance(START_COST);
        let mut started = self.started.borrow_mut();
        started.push((firing.schedule.get(), firing.nominal_unix_nanos));
        Ok(())
    }
}

fn runtime(slice: Option<Duration>) -> (Runtime, SlowStarts) {
    let clock = ManualClock::new();
    let runner = SlowStarts {
        clock: clock.clone(),
        started: Rc::default(),
    };
    let mut builder = Runtime::builder()
        .manual_clock(clock)
        .without_commands()
        .in_memory_store()
        .runner(runner.clone());
    if slice != Some(DEFAULT_SCHEDULES_TICK_TIME) {
        builder = builder.schedules_tick_time(slice);
    }
    (builder.build().unwrap(), runner)
}

/// `n` one-shots due 1 s from now, 1 ms apart, created out of deadline order; then the clock
/// jumps 2 s, so all of them are due when the runtime next looks.
fn backlog(rt: &Runtime, runner: &SlowStarts, n: usize) -> Vec<u64> {
    let start = rt.schedules().now_unix_seconds();
    let mut txn = rt.schedules().begin(ObjId(1));
    let ids = (0..n)
        .map(|i| {
            let rank = (i * 7_919) % n;
            let at = start + 1.0 + rank as f64 * 0.001;
            txn.schedule_at(ObjId(1), "work", at, vec![], Options::new())
                .unwrap()
                .get()
        })
        .collect();
    txn.commit().unwrap();
    runner.clock.advance(Duration::from_secs(2));
    ids
}

/// Steps frames until the first firing has started; how many the first tick started.
fn first_tick(rt: &Runtime, runner: &SlowStarts) -> usize {
    for _ in 0..10 {
        rt.step_frame().unwrap();
        let started = runner.started.borrow().len();
        if started > 0 {
            return started;
        }
    }
    panic!("no firing started within ten frames of the backlog coming due");
}

#[test]
fn a_backlog_is_started_a_slice_per_frame_in_deadline_order() {
    let (rt, runner) = runtime(Some(DEFAULT_SCHEDULES_TICK_TIME));
    let ids = backlog(&rt, &runner, 900);
    // 15 starts of 100 µs fill the 1.5 ms slice.
    assert_eq!(first_tick(&rt, &runner), 15);
    let (ticks_before, frames_before) = (rt.stats().schedule_ticks, rt.stats().frames);
    while runner.started.borrow().len() < 900 {
        rt.step_frame().unwrap();
        assert!(
            rt.stats().frames < frames_before + 200,
            "the backlog drains"
        );
        // Meanwhile every schedule stays visible.
        let txn = rt.schedules().begin(ObjId(1));
        assert!(
            ids.iter()
                .all(|&id| txn.schedule_info(ScheduleId::from_raw(id)).is_ok())
        );
    }
    let stats = rt.stats();
    // A tick runs at most once per 10 ms: once a frame at 60 fps, fifteen firings each.
    assert_eq!(stats.schedule_ticks - ticks_before, 59);
    assert!(stats.frames - frames_before >= 59);
    let started = runner.started.borrow();
    let fired: HashSet<u64> = started.iter().map(|&(id, _)| id).collect();
    assert_eq!(
        fired,
        ids.into_iter().collect(),
        "every schedule started, none twice"
    );
    assert_eq!(started.len(), 900);
    assert!(
        started.windows(2).all(|w| w[0].1 <= w[1].1),
        "started in deadline order across ticks"
    );
}

#[test]
fn without_a_slice_one_tick_starts_the_whole_backlog() {
    let (rt, runner) = runtime(None);
    backlog(&rt, &runner, 900);
    assert_eq!(first_tick(&rt, &runner), 900, "bounded by count alone");
}
