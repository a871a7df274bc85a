//! The `commands` section: the coroutine command scheduler against the limit baseline.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `run_1000` | one `run()` with 1,000 running commands on disjoint mechanisms, each yielding every cycle, `SystemClock`, default settings (mount timing and watchdog on); per command | the same 1,000 yielding futures polled from a `Vec` with a no-op waker |
//! | `run_1000_untimed` | the same with `set_mount_timing(false)` (no clock read per mount) | the same baseline |
//! | `trigger_poll_1000` | one `run()` with 1,000 bound triggers whose signals stay false; per trigger | goal ≤ 50 ns (1,000 triggers in under 0.05 ms, 0.25 % of a 20 ms cycle) |

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tickstep_commands::{Command, Mechanism, Scheduler, Trigger};
use tickstep_kernel::clock::SystemClock;

use crate::harness::{Measure, Opts, Row, Section, interleave, ns_per_op};

/// Running commands (and bound triggers) per measured cycle.
const COMMANDS: usize = 1_000;

pub(crate) fn run(opts: &Opts) -> Section {
    let rounds = opts.rounds() * 3;
    vec![
        run_1000("run_1000", true, rounds),
        run_1000("run_1000_untimed", false, rounds),
        trigger_poll_1000(rounds),
    ]
}

/// A future that returns `Pending` once, then `Ready`: one coroutine yield.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// The baseline's body: the same loop a command runs, yielding every poll.
async fn yield_forever() {
    loop {
        YieldOnce(false).await;
    }
}

fn scheduler_with_yielding_commands(timing: bool) -> Scheduler {
    let scheduler = Scheduler::new(SystemClock::new());
    scheduler.set_mount_timing(timing);
    for i in 0..COMMANDS {
        let mechanism = Mechanism::new(&scheduler, format!("m{i}"));
        let cmd = mechanism
            .run(|co| async move {
                loop {
                    co.yield_now().await;
                }
            })
            .named(format!("c{i}"));
        scheduler.schedule(&cmd);
    }
    scheduler.run().expect("yielding commands do not fail");
    scheduler
}

fn run_1000(name: &'static str, timing: bool, rounds: usize) -> Row {
    let scheduler = scheduler_with_yielding_commands(timing);
    let mut futures: Vec<Pin<Box<dyn Future<Output = ()>>>> = (0..COMMANDS)
        .map(|_| Box::pin(yield_forever()) as Pin<Box<dyn Future<Output = ()>>>)
        .collect();
    let mut cx = Context::from_waker(Waker::noop());
    let (ours, peer) = interleave(
        rounds,
        || ns_per_op(COMMANDS, || scheduler.run().expect("no failures")),
        || {
            ns_per_op(COMMANDS, || {
                for future in &mut futures {
                    let _ = black_box(future.as_mut().poll(&mut cx));
                }
            })
        },
    );
    assert_eq!(scheduler.running().len(), COMMANDS);
    Row {
        name,
        measure: Measure::Ratio {
            ours_ns: ours,
            peer: "Vec<Pin<Box<dyn Future>>> + noop waker",
            peer_ns: peer,
            goal_ratio: 1.5,
        },
        note: format!(
            "{COMMANDS} commands on disjoint mechanisms yielding every cycle, SystemClock, mount timing {}; per command per run()",
            if timing { "on" } else { "off" }
        ),
    }
}

fn trigger_poll_1000(rounds: usize) -> Row {
    let scheduler = Scheduler::new(SystemClock::new());
    let never = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named("never");
    for i in 0..COMMANDS {
        Trigger::new(&scheduler, move || black_box(i) == usize::MAX).on_true(&never);
    }
    let (ours, _) = interleave(
        rounds,
        || ns_per_op(COMMANDS, || scheduler.run().expect("no failures")),
        || 0.0,
    );
    assert!(scheduler.running().is_empty());
    Row {
        name: "trigger_poll_1000",
        measure: Measure::Ns {
            ours_ns: ours,
            goal_ns: 50.0,
        },
        note: format!(
            "{COMMANDS} on_true bindings on signals that stay false, SystemClock; per trigger per run()"
        ),
    }
}
