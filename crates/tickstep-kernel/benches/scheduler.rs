//! Criterion benches for the kernel scheduler: the per-task hot path with the profiler off and on,
//! and timer arm+fire and arm+cancel with many pending.
//!
//! ```text
//! cargo bench -p tickstep-kernel --bench scheduler
//! ```
//!
//! The side-by-side ratios against peers live in `tickstep-bench` (`cargo run --release -p
//! tickstep-bench -- kernel`); these benches track our own numbers over time.

use std::cell::Cell;
use std::hint::black_box;
use std::rc::Rc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use tickstep_kernel::{FrameScheduler, ManualClock, Priority, SchedulerConfig, SystemClock};

const TASKS: u64 = 1_000;
const TIMERS: u64 = 10_000;
const UNLIMITED: Duration = Duration::from_secs(3600);

/// Schedule `TASKS` Normal one-shots, then one step runs them all (a real clock, so every task
/// pays its budget check).
fn schedule_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_step");
    group.throughput(Throughput::Elements(TASKS));
    for (name, profile) in [("profiler_off", false), ("profiler_on", true)] {
        let sched = FrameScheduler::new(
            SystemClock::new(),
            SchedulerConfig::server().profile_tasks(profile),
        );
        let counter = Rc::new(Cell::new(0_u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..TASKS {
                    let c = Rc::clone(&counter);
                    let _detached = sched.schedule(move || c.set(c.get() + 1), Priority::Normal);
                }
                sched.step_with_budget(UNLIMITED);
            });
        });
        black_box(counter.get());
    }
    group.finish();
}

/// A deterministic spread of delays in [1 ms, 1 s].
fn delays(n: u64) -> Vec<Duration> {
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Duration::from_micros(1_000 + x % 999_000)
        })
        .collect()
}

/// Arm `TIMERS` `after()` timers with spread deadlines, then one step fires them all.
fn timers_fire(c: &mut Criterion) {
    let mut group = c.benchmark_group("timers");
    group.throughput(Throughput::Elements(TIMERS));
    let delays = delays(TIMERS);
    group.bench_function("after_then_fire_10k", |b| {
        b.iter_batched(
            || {
                let clock = ManualClock::new();
                let sched = FrameScheduler::new(
                    clock.clone(),
                    SchedulerConfig::server().profile_tasks(false),
                );
                (clock, sched)
            },
            |(clock, sched)| {
                let fired = Rc::new(Cell::new(0_u64));
                for &d in &delays {
                    let f = Rc::clone(&fired);
                    let _detached = sched.after(d, move || f.set(f.get() + 1), Priority::Normal);
                }
                clock.advance(Duration::from_millis(1_001));
                sched.step_with_budget(UNLIMITED);
                assert_eq!(fired.get(), TIMERS);
            },
            BatchSize::LargeInput,
        );
    });
    group.bench_function("after_then_cancel_10k", |b| {
        b.iter_batched(
            || {
                FrameScheduler::new(
                    ManualClock::new(),
                    SchedulerConfig::server().profile_tasks(false),
                )
            },
            |sched| {
                let handles: Vec<_> = delays
                    .iter()
                    .map(|&d| {
                        sched
                            .after(d, || {}, Priority::Normal)
                            .expect("valid delay")
                    })
                    .collect();
                for h in handles.iter().rev() {
                    h.cancel();
                }
                assert_eq!(sched.queue_depths().timers, 0);
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, schedule_step, timers_fire);
criterion_main!(benches);
