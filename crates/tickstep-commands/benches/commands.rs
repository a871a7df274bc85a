//! Criterion benches for the command scheduler hot paths.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tickstep_commands::{Command, CommandScheduler, Mechanism, Trigger};
use tickstep_kernel::clock::{ManualClock, SystemClock};

fn yielding_forever(scheduler: &CommandScheduler, n: usize) {
    for i in 0..n {
        let mechanism = Mechanism::new(scheduler, format!("m{i}"));
        let cmd = mechanism
            .run(|co| async move {
                loop {
                    co.yield_now().await;
                }
            })
            .named(format!("c{i}"));
        scheduler.schedule(&cmd);
    }
    scheduler.run().unwrap();
}

fn run_1000(c: &mut Criterion) {
    let scheduler = CommandScheduler::new(ManualClock::new());
    yielding_forever(&scheduler, 1000);
    c.bench_function("run() with 1000 yielding commands, ManualClock", |b| {
        b.iter(|| scheduler.run().unwrap());
    });
    let real = CommandScheduler::new(SystemClock::new());
    yielding_forever(&real, 1000);
    c.bench_function("run() with 1000 yielding commands, SystemClock", |b| {
        b.iter(|| real.run().unwrap());
    });
    real.set_mount_timing(false);
    c.bench_function(
        "run() with 1000 yielding commands, SystemClock, no mount timing",
        |b| {
            b.iter(|| real.run().unwrap());
        },
    );
}

fn trigger_poll_1000(c: &mut Criterion) {
    let scheduler = CommandScheduler::new(ManualClock::new());
    let cmd = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named("never");
    for i in 0..1000u32 {
        Trigger::new(&scheduler, move || black_box(i) == u32::MAX).on_true(&cmd);
    }
    c.bench_function("run() with 1000 bound triggers (idle)", |b| {
        b.iter(|| scheduler.run().unwrap());
    });
}

criterion_group!(benches, run_1000, trigger_poll_1000);
criterion_main!(benches);
