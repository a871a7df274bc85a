//! The `commands` section: the coroutine command scheduler against the limit baseline.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `run_1000` | one `run()` with 1,000 running commands on disjoint mechanisms, each yielding every cycle, `SystemClock`, default settings (mount timing and watchdog on); per command | the same 1,000 yielding futures polled from a `Vec` with a no-op waker: the floor no scheduler reaches, reported with no goal |
//! | `run_1000_untimed` | the same with `set_mount_timing(false)` (no clock read per mount) | the same floor, no goal |
//! | `run_1000_vs_tokio` | `run_1000` (default settings: mount timing on) | 1,000 tasks looping on `tokio::task::yield_now` on a current-thread runtime's `LocalSet`, per task poll; goal ≤ 0.5× |
//! | `run_1000_untimed_vs_tokio` | `run_1000_untimed` | the same tokio `LocalSet`; goal ≤ 0.25× |
//! | `run_1000_vs_async_executor` | `run_1000` | 1,000 tasks yielding (wake self, `Pending` once) on `async_executor::LocalExecutor` driven by `try_tick`, per task poll; goal ≤ 0.5× |
//! | `fork_await_run` | one `run()` with 1,000 commands each starting a child that ends at once and awaiting it by run (`fork_run` + `await_run`), `SystemClock`; per command | the same by command (`await_cmd`), in the same run; goal ≤ 1.05× (docs/commands.md §13.5) |
//! | `trigger_poll_1000` | one `run()` with 1,000 bound triggers whose signals stay false; per trigger | goal ≤ 50 ns (1,000 triggers in under 0.05 ms, 0.25 % of a 20 ms cycle) |

use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tickstep_commands::{Command, CommandScheduler, Mechanism, Trigger};
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
        fork_await_run(rounds),
        trigger_poll_1000(rounds),
    ]
}

/// 1,000 commands that each start a child ending at once and wait for it, every cycle: by run
/// or by command (docs/commands.md §13).
fn scheduler_forking_every_cycle(by_run: bool) -> CommandScheduler {
    let scheduler = CommandScheduler::new(SystemClock::new());
    for i in 0..COMMANDS {
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
    scheduler.run().expect("forking commands do not fail");
    scheduler
}

fn fork_await_run(rounds: usize) -> Row {
    let by_run = scheduler_forking_every_cycle(true);
    let by_command = scheduler_forking_every_cycle(false);
    let (ours, peer) = interleave(
        rounds,
        || ns_per_op(COMMANDS, || by_run.run().expect("no failures")),
        || ns_per_op(COMMANDS, || by_command.run().expect("no failures")),
    );
    assert_eq!(by_run.running().len(), COMMANDS);
    assert_eq!(by_command.running().len(), COMMANDS);
    Row {
        name: "fork_await_run",
        measure: Measure::Ratio {
            ours_ns: ours,
            peer: "fork + await by command (await_cmd)",
            peer_ns: peer,
            goal_ratio: 1.05,
        },
        note: format!(
            "{COMMANDS} commands each starting a child that ends at once and awaiting it, then yielding, SystemClock, mount timing on; per command per run()"
        ),
    }
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

fn scheduler_with_yielding_commands(timing: bool) -> CommandScheduler {
    let scheduler = CommandScheduler::new(SystemClock::new());
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
            // The floor no scheduler reaches (a bare poll of a boxed future, ~3 ns): reported
            // beside the real peers, with no goal of its own (issue 10 set the goals against
            // tokio's `LocalSet` and `async_executor`).
            goal_ratio: f64::INFINITY,
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

/// Task polls per measured peer batch: one poll of each task, the same sample as one of our
/// `run()`s, so both sides' medians filter the machine's preemptions alike (a long peer batch
/// would carry every stall of its milliseconds while our short samples dodge them).
const PEER_POLLS: u64 = COMMANDS as u64;

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

/// `COMMANDS` tasks on a tokio current-thread runtime's `LocalSet`, each looping on
/// `tokio::task::yield_now` and counting its polls: the steady state, as our commands are
/// measured (no spawning or task teardown inside the timed part).
struct TokioPeer {
    runtime: tokio::runtime::Runtime,
    local: tokio::task::LocalSet,
    polls: Rc<Cell<u64>>,
}

impl TokioPeer {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime builds");
        let local = tokio::task::LocalSet::new();
        let polls = Rc::new(Cell::new(0));
        for _ in 0..COMMANDS {
            let polls = Rc::clone(&polls);
            local.spawn_local(async move {
                loop {
                    polls.set(polls.get() + 1);
                    tokio::task::yield_now().await;
                }
            });
        }
        TokioPeer {
            runtime,
            local,
            polls,
        }
    }

    /// Nanoseconds per task poll over one batch of `PEER_POLLS` polls.
    fn batch(&self) -> f64 {
        let (start_polls, start) = (self.polls.get(), std::time::Instant::now());
        let target = start_polls + PEER_POLLS;
        let polls = Rc::clone(&self.polls);
        self.local.block_on(&self.runtime, async move {
            while polls.get() < target {
                tokio::task::yield_now().await;
            }
        });
        start.elapsed().as_nanos() as f64 / (self.polls.get() - start_polls) as f64
    }
}

/// The same on `async_executor::LocalExecutor`, ticked until the batch is done.
struct ExecutorPeer {
    executor: async_executor::LocalExecutor<'static>,
    polls: Rc<Cell<u64>>,
}

impl ExecutorPeer {
    fn new() -> Self {
        let executor = async_executor::LocalExecutor::new();
        let polls = Rc::new(Cell::new(0));
        for _ in 0..COMMANDS {
            let polls = Rc::clone(&polls);
            executor
                .spawn(async move {
                    loop {
                        polls.set(polls.get() + 1);
                        WakeAndYield(false).await;
                    }
                })
                .detach();
        }
        ExecutorPeer { executor, polls }
    }

    fn batch(&self) -> f64 {
        let (start_polls, start) = (self.polls.get(), std::time::Instant::now());
        let target = start_polls + PEER_POLLS;
        while self.polls.get() < target {
            self.executor.try_tick();
        }
        start.elapsed().as_nanos() as f64 / (self.polls.get() - start_polls) as f64
    }
}

fn run_1000_vs_peer(
    name: &'static str,
    timing: bool,
    peer: Peer,
    goal_ratio: f64,
    rounds: usize,
) -> Row {
    let scheduler = scheduler_with_yielding_commands(timing);
    let (tokio_peer, executor_peer) = match peer {
        Peer::Tokio => (Some(TokioPeer::new()), None),
        Peer::AsyncExecutor => (None, Some(ExecutorPeer::new())),
    };
    let (ours, peer_ns) = interleave(
        rounds,
        || ns_per_op(COMMANDS, || scheduler.run().expect("no failures")),
        || {
            tokio_peer
                .as_ref()
                .map(TokioPeer::batch)
                .or_else(|| executor_peer.as_ref().map(ExecutorPeer::batch))
                .expect("one peer")
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
            "ours: {COMMANDS} commands yielding every cycle, SystemClock, mount timing {}, per command per run(); peer: {how}, {COMMANDS} long-lived tasks, per task poll over {PEER_POLLS} polls",
            if timing { "on" } else { "off" }
        ),
    }
}

fn trigger_poll_1000(rounds: usize) -> Row {
    let scheduler = CommandScheduler::new(SystemClock::new());
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
