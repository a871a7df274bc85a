//! The `commands` section: the coroutine command scheduler against the limit baseline.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `run_1000` | one `run()` with 1,000 running commands on disjoint mechanisms, each yielding every cycle, `SystemClock`, default settings (mount timing and watchdog on); per command | the same 1,000 yielding futures polled from a `Vec` with a no-op waker |
//! | `run_1000_untimed` | the same with `set_mount_timing(false)` (no clock read per mount) | the same baseline |
//! | `run_1000_vs_tokio` | `run_1000` (default settings: mount timing on) | 1,000 tasks looping on `tokio::task::yield_now` on a current-thread runtime's `LocalSet`, per task poll; goal ≤ 0.5× |
//! | `run_1000_untimed_vs_tokio` | `run_1000_untimed` | the same tokio `LocalSet`; goal ≤ 0.25× |
//! | `run_1000_vs_async_executor` | `run_1000` | 1,000 tasks yielding (wake self, `Pending` once) on `async_executor::LocalExecutor` driven by `try_tick`, per task poll; goal ≤ 0.5× |
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
        run_1000_vs_peer("run_1000_vs_tokio", true, Peer::Tokio, 0.5, rounds),
        run_1000_vs_peer(
            "run_1000_untimed_vs_tokio",
            false,
            Peer::Tokio,
            0.25,
            rounds,
        ),
        run_1000_vs_peer(
            "run_1000_vs_async_executor",
            true,
            Peer::AsyncExecutor,
            0.5,
            rounds,
        ),
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

/// The executors a Rust user would otherwise pick for 1,000 coroutines that yield every cycle.
#[derive(Clone, Copy)]
enum Peer {
    Tokio,
    AsyncExecutor,
}

/// Yields each peer task makes per measured batch; the per-poll cost is the batch time divided
/// by `COMMANDS * (PEER_YIELDS + 1)` polls. Spawning is outside the timed part.
const PEER_YIELDS: usize = 50;

/// A yield for executors that re-poll woken tasks: wakes itself and returns `Pending` once
/// (what `futures_lite::future::yield_now` does).
struct WakeAndYield(bool);

impl Future for WakeAndYield {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Nanoseconds per task poll of one tokio `LocalSet` batch: `COMMANDS` tasks each yielding
/// `PEER_YIELDS` times through `tokio::task::yield_now`.
fn tokio_batch(runtime: &tokio::runtime::Runtime) -> f64 {
    let local = tokio::task::LocalSet::new();
    for _ in 0..COMMANDS {
        local.spawn_local(async {
            for _ in 0..PEER_YIELDS {
                tokio::task::yield_now().await;
            }
        });
    }
    ns_per_op(COMMANDS * (PEER_YIELDS + 1), || runtime.block_on(local))
}

/// The same batch on `async_executor::LocalExecutor`, ticked until idle.
fn executor_batch() -> f64 {
    let executor = async_executor::LocalExecutor::new();
    for _ in 0..COMMANDS {
        executor
            .spawn(async {
                for _ in 0..PEER_YIELDS {
                    WakeAndYield(false).await;
                }
            })
            .detach();
    }
    ns_per_op(
        COMMANDS * (PEER_YIELDS + 1),
        || {
            while executor.try_tick() {}
        },
    )
}

fn run_1000_vs_peer(
    name: &'static str,
    timing: bool,
    peer: Peer,
    goal_ratio: f64,
    rounds: usize,
) -> Row {
    let scheduler = scheduler_with_yielding_commands(timing);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime builds");
    let (ours, peer_ns) = interleave(
        rounds,
        || ns_per_op(COMMANDS, || scheduler.run().expect("no failures")),
        || match peer {
            Peer::Tokio => tokio_batch(&runtime),
            Peer::AsyncExecutor => executor_batch(),
        },
    );
    assert_eq!(scheduler.running().len(), COMMANDS);
    let (peer_name, how) = match peer {
        Peer::Tokio => (
            "tokio LocalSet + task::yield_now",
            "tokio current-thread runtime, LocalSet, tasks looping on task::yield_now",
        ),
        Peer::AsyncExecutor => (
            "async_executor::LocalExecutor",
            "async_executor::LocalExecutor driven by try_tick, tasks waking themselves and yielding",
        ),
    };
    Row {
        name,
        measure: Measure::Ratio {
            ours_ns: ours,
            peer: peer_name,
            peer_ns,
            goal_ratio,
        },
        note: format!(
            "ours: {COMMANDS} commands yielding every cycle, SystemClock, mount timing {}, per command per run(); peer: {how}, {COMMANDS} tasks x {PEER_YIELDS} yields, per task poll (spawning not timed)",
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
