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

/// `n` commands that each start a child and wait for it to end, every cycle: by command
/// (`await_cmd`, the path main has) or by run (`fork_run` + `await_run`, docs/commands.md §13).
fn forking_every_cycle(scheduler: &CommandScheduler, n: usize, by_run: bool) {
    for i in 0..n {
        let child = Command::no_requirements()
            .executing(|_co| async {})
            .named(format!("child{i}"));
        let parent = Command::no_requirements()
            .executing_fallible(move |co| {
                let child = child.clone();
                async move {
                    loop {
                        if by_run {
                            let run = co.fork_run(&child)?;
                            co.await_run(run).await?;
                        } else {
                            co.await_cmd(&child).await?;
                        }
                        co.yield_now().await;
                    }
                }
            })
            .named(format!("parent{i}"));
        scheduler.schedule(&parent);
    }
    scheduler.run().unwrap();
}

fn fork_await_1000(c: &mut Criterion) {
    let by_command = CommandScheduler::new(ManualClock::new());
    forking_every_cycle(&by_command, 1000, false);
    c.bench_function(
        "run() with 1000 commands each forking and awaiting a child, by command",
        |b| {
            b.iter(|| by_command.run().unwrap());
        },
    );
    let by_run = CommandScheduler::new(ManualClock::new());
    forking_every_cycle(&by_run, 1000, true);
    c.bench_function(
        "run() with 1000 commands each forking and awaiting a child, by run",
        |b| {
            b.iter(|| by_run.run().unwrap());
        },
    );
}

criterion_group!(benches, run_1000, trigger_poll_1000, fork_await_1000);
criterion_main!(benches);
