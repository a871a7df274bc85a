//! The `kernel` section: the frame-budgeted scheduler against the limit baseline and its peers.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `schedule_step` | schedule N Normal tasks, one step runs them (profiler off), per task | `VecDeque<Box<dyn FnOnce()>>` push/pop/call with one `Instant::now()` budget check per task |
//! | `profiler_overhead` | the same with the profiler on, minus profiler off, per task | goal ≤ 15 ns |
//! | `timer_fire_100k` / `timer_fire_1m` | N `after()` with spread deadlines, then one step fires them all, per timer | tokio-util `DelayQueue` insert + `poll_expired` under a paused tokio clock |
//! | `timer_cancel_100k` | N `after()` then cancel every handle in shuffled order, per timer | `DelayQueue` insert + `remove` |
//! | `spawn_run` | N trivial futures spawned, one step polls them, per future | async-executor `LocalExecutor` spawn + `try_tick` |
//! | `idle_steps` | 1,000 future timers, 120 frames of a server `FrameLoop` | steps taken (goal 0) |
//! | `overrun_backlog_100k` / `_off` | worst overrun past a 2 ms budget over 600 steps with a 100,000-task backlog, profiler on / off ([`overrun`]) | goal ≤ 10,000 ns |
//!
//! The timer measures keep both structures alive across rounds: each round arms N timers on a
//! scheduler (or `DelayQueue`) that already served the previous rounds, which is a long-lived
//! server's steady state. Starting both empty each round instead charges first-touch page faults
//! to whichever side allocates more fresh memory, and gave the peer's `with_capacity` a head start.

use std::cell::Cell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tickstep_kernel::clock::{ManualClock, SystemClock};
use tickstep_kernel::{FrameLoop, FrameScheduler, Priority, Role, SchedulerConfig};
use tokio_util::time::DelayQueue;

use crate::harness::{Measure, Opts, Row, Section, interleave, ns_per_op};

mod overrun;

/// A budget no benchmark batch can exhaust: the measured step must drain everything.
const UNLIMITED: Duration = Duration::from_secs(3600);

pub(crate) fn run(opts: &Opts) -> Section {
    let rounds = opts.rounds();
    let mut rows = vec![
        schedule_step(rounds),
        profiler_overhead(rounds),
        timer_fire("timer_fire_100k", 100_000, 0.5, rounds),
        timer_fire("timer_fire_1m", 1_000_000, 0.75, rounds.min(5)),
        timer_cancel(100_000, rounds),
        spawn_run(rounds),
        Row {
            name: "idle_steps",
            measure: Measure::Value {
                value: idle_steps() as f64,
                unit: "steps",
                goal: 0.0,
            },
            note:
                "1,000 timers 10-60 s out, 120 frames of a 60 fps server FrameLoop on a ManualClock"
                    .to_owned(),
        },
    ];
    rows.extend(overrun::rows());
    rows
}

/// Tasks per batch in the schedule/step and spawn/run measures.
const TASKS: usize = 1_000;

fn schedule_step(rounds: usize) -> Row {
    let (ours, baseline) = interleave(
        rounds * 3,
        || ours_schedule_step(TASKS, false),
        || baseline_schedule_step(TASKS),
    );
    Row {
        name: "schedule_step",
        measure: Measure::Ratio {
            ours_ns: ours,
            peer: "VecDeque<Box<dyn FnOnce>>+Instant",
            peer_ns: baseline,
            goal_ratio: 1.0,
        },
        note: format!(
            "{TASKS} Normal tasks scheduled then one SystemClock step, profiler off; per task"
        ),
    }
}

fn profiler_overhead(rounds: usize) -> Row {
    let (on, off) = interleave(
        rounds * 3,
        || ours_schedule_step(TASKS, true),
        || ours_schedule_step(TASKS, false),
    );
    Row {
        name: "profiler_overhead",
        measure: Measure::Ns {
            ours_ns: on - off,
            goal_ns: 15.0,
        },
        note: format!("profiler on {on:.1} ns - off {off:.1} ns per task, same run"),
    }
}

fn timer_fire(name: &'static str, pending: usize, goal_ratio: f64, rounds: usize) -> Row {
    // Both sides keep their structure across rounds (a long-lived server's steady state: no
    // first-touch page faults on either side), and are measured on the same deadlines.
    let mut ours = OursTimers::new();
    let mut peer = PeerTimers::new(pending);
    let (ours_ns, peer_ns) = interleave(rounds, || ours.fire(pending), || peer.fire(pending));
    Row {
        name,
        measure: Measure::Ratio {
            ours_ns,
            peer: "tokio-util DelayQueue (paused)",
            peer_ns,
            goal_ratio,
        },
        note: format!(
            "{pending} after() with deadlines spread over 1 s, then fired; per timer; both warm"
        ),
    }
}

fn timer_cancel(pending: usize, rounds: usize) -> Row {
    let mut ours = OursTimers::new();
    let mut peer = PeerTimers::new(pending);
    let (ours_ns, peer_ns) = interleave(rounds, || ours.cancel(pending), || peer.cancel(pending));
    Row {
        name: "timer_cancel_100k",
        measure: Measure::Ratio {
            ours_ns,
            peer: "tokio-util DelayQueue (paused)",
            peer_ns,
            goal_ratio: 1.0,
        },
        note: format!(
            "{pending} after() then every handle cancelled in shuffled order; per timer; both warm"
        ),
    }
}

fn spawn_run(rounds: usize) -> Row {
    let (ours, peer) = interleave(
        rounds * 3,
        || ours_spawn_run(TASKS),
        || executor_spawn_run(TASKS),
    );
    Row {
        name: "spawn_run",
        measure: Measure::Ratio {
            ours_ns: ours,
            peer: "async-executor LocalExecutor",
            peer_ns: peer,
            goal_ratio: 1.0,
        },
        note: format!("{TASKS} trivial futures spawned then run to completion; per future"),
    }
}

/// A deterministic xorshift generator: the same delays and cancel order for ours and the peer.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A delay in [1 ms, 1 s].
    fn delay(&mut self) -> Duration {
        Duration::from_micros(1_000 + self.next() % 999_000)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

fn ours_schedule_step(tasks: usize, profile: bool) -> f64 {
    let sched = FrameScheduler::new(
        SystemClock::new(),
        SchedulerConfig::server().profile_tasks(profile),
    );
    let counter = Rc::new(Cell::new(0_u64));
    let per_task = ns_per_op(tasks, || {
        for _ in 0..tasks {
            let c = Rc::clone(&counter);
            let _detached = sched.schedule(move || c.set(c.get() + 1), Priority::Normal);
        }
        sched.step_with_budget(UNLIMITED);
    });
    assert_eq!(counter.get(), tasks as u64, "every task ran");
    sched.destroy();
    per_task
}

fn baseline_schedule_step(tasks: usize) -> f64 {
    let mut queue: VecDeque<Box<dyn FnOnce()>> = VecDeque::new();
    let counter = Rc::new(Cell::new(0_u64));
    let per_task = ns_per_op(tasks, || {
        for _ in 0..tasks {
            let c = Rc::clone(&counter);
            queue.push_back(Box::new(move || c.set(c.get() + 1)));
        }
        let deadline = Instant::now() + UNLIMITED;
        while let Some(task) = queue.pop_front() {
            if Instant::now() >= deadline {
                break;
            }
            task();
        }
    });
    assert_eq!(counter.get(), tasks as u64, "every task ran");
    per_task
}

/// Our scheduler, kept across rounds, with the seeds both sides share.
struct OursTimers {
    clock: ManualClock,
    sched: FrameScheduler,
    fired: Rc<Cell<usize>>,
}

impl OursTimers {
    fn new() -> Self {
        let clock = ManualClock::new();
        let sched = FrameScheduler::new(
            clock.clone(),
            SchedulerConfig::server().profile_tasks(false),
        );
        OursTimers {
            clock,
            sched,
            fired: Rc::new(Cell::new(0)),
        }
    }

    fn fire(&mut self, pending: usize) -> f64 {
        let mut rng = Rng(FIRE_SEED);
        let (sched, clock, fired) = (&self.sched, &self.clock, &self.fired);
        fired.set(0);
        let per_timer = ns_per_op(pending, || {
            for _ in 0..pending {
                let f = Rc::clone(fired);
                let _detached = sched
                    .after(rng.delay(), move || f.set(f.get() + 1), Priority::Normal)
                    .expect("a valid delay");
            }
            clock.advance(Duration::from_millis(1_001));
            sched.step_with_budget(UNLIMITED);
        });
        assert_eq!(fired.get(), pending, "every timer fired");
        per_timer
    }

    fn cancel(&mut self, pending: usize) -> f64 {
        let mut rng = Rng(CANCEL_SEED);
        let order = shuffled(pending);
        let sched = &self.sched;
        let per_timer = ns_per_op(pending, || {
            let handles: Vec<_> = (0..pending)
                .map(|_| {
                    sched
                        .after(rng.delay(), || {}, Priority::Normal)
                        .expect("a valid delay")
                })
                .collect();
            for &i in &order {
                handles[i].cancel();
            }
        });
        assert_eq!(sched.queue_depths().timers, 0, "every timer removed");
        per_timer
    }
}

impl Drop for OursTimers {
    fn drop(&mut self) {
        self.sched.destroy();
    }
}

const FIRE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
const CANCEL_SEED: u64 = 0xD1B5_4A32_D192_ED03;

/// The cancel order both sides use: a fixed shuffle of `0..pending`.
fn shuffled(pending: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pending).collect();
    Rng(CANCEL_SEED ^ 1).shuffle(&mut order);
    order
}

/// tokio-util's `DelayQueue` under a paused tokio clock, kept across rounds.
struct PeerTimers {
    runtime: tokio::runtime::Runtime,
    queue: DelayQueue<usize>,
}

impl PeerTimers {
    fn new(pending: usize) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread tokio runtime");
        // A DelayQueue binds to the runtime's timer when created inside it.
        let queue = runtime.block_on(async { DelayQueue::with_capacity(pending) });
        PeerTimers { runtime, queue }
    }

    fn fire(&mut self, pending: usize) -> f64 {
        let mut rng = Rng(FIRE_SEED);
        let queue = &mut self.queue;
        self.runtime.block_on(async {
            let start = Instant::now();
            for i in 0..pending {
                queue.insert(i, rng.delay());
            }
            tokio::time::advance(Duration::from_millis(1_001)).await;
            let mut fired = 0;
            while let Some(expired) = poll_fn(|cx| queue.poll_expired(cx)).await {
                black_box(expired.into_inner());
                fired += 1;
            }
            let per_timer = start.elapsed().as_nanos() as f64 / pending as f64;
            assert_eq!(fired, pending, "every timer fired");
            per_timer
        })
    }

    fn cancel(&mut self, pending: usize) -> f64 {
        let mut rng = Rng(CANCEL_SEED);
        let order = shuffled(pending);
        let queue = &mut self.queue;
        self.runtime.block_on(async {
            let start = Instant::now();
            let keys: Vec<_> = (0..pending).map(|i| queue.insert(i, rng.delay())).collect();
            for &i in &order {
                black_box(queue.remove(&keys[i]));
            }
            let per_timer = start.elapsed().as_nanos() as f64 / pending as f64;
            assert!(queue.is_empty(), "every timer removed");
            per_timer
        })
    }
}

fn ours_spawn_run(futures: usize) -> f64 {
    let sched = FrameScheduler::new(
        SystemClock::new(),
        SchedulerConfig::server().profile_tasks(false),
    );
    let done = Rc::new(Cell::new(0_usize));
    let per_future = ns_per_op(futures, || {
        for _ in 0..futures {
            let d = Rc::clone(&done);
            let _detached = sched.spawn(async move { d.set(d.get() + 1) }, Priority::Normal);
        }
        sched.step_with_budget(UNLIMITED);
    });
    assert_eq!(done.get(), futures, "every future ran");
    sched.destroy();
    per_future
}

fn executor_spawn_run(futures: usize) -> f64 {
    let executor = async_executor::LocalExecutor::new();
    let done = Rc::new(Cell::new(0_usize));
    let per_future = ns_per_op(futures, || {
        for _ in 0..futures {
            let d = Rc::clone(&done);
            executor.spawn(async move { d.set(d.get() + 1) }).detach();
        }
        while executor.try_tick() {}
    });
    assert_eq!(done.get(), futures, "every future ran");
    per_future
}

/// Steps the main scheduler took over 120 frames with 1,000 timers 10–60 s in the future.
fn idle_steps() -> u64 {
    let clock = ManualClock::new();
    let frames = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&frames).expect("a live scheduler binds");
    let mut rng = Rng(42);
    for _ in 0..1_000 {
        let delay = Duration::from_secs(10) + rng.delay() * 50;
        let _detached = sched
            .after(delay, || {}, Priority::Normal)
            .expect("a valid delay");
    }
    frames.run_frames(120);
    let steps = sched.stats().steps;
    sched.destroy();
    steps
}
