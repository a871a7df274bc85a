//! The `runtime` section: what the `tickstep` facade's `Runtime` adds on top of its three layers.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `firing` | 1,000 due schedules fired through a `Runtime`: one engine tick, one kernel task per firing under `catch_unwind`, the outcome reported, the wake re-armed; per firing | the bare engine: the same tick with a runner that only remembers the last run, outcomes reported in a loop (no kernel, no isolation); goal ratio ≤ 3 |
//! | `frame` | one 60 fps frame of a runtime whose 20 ms command cycle runs 10 mechanisms' default commands; per frame | a bare kernel frame loop with an `every(20 ms)` job calling the command scheduler's `run()` on the same world; goal ratio ≤ 1.5 |
//! | `empty_command_cycle` | one virtual second of an otherwise idle 60 fps runtime whose 20 ms command cycle has no command, mechanism or trigger, minus the same runtime built `without_commands()`; per second | goal ≤ 200 µs (0.02% of a core) |
//! | `idle_day` | real milliseconds to simulate 24 h of a runtime with an hourly bell and no command cycle (virtual time: it sleeps from deadline to deadline) | goal ≤ 50 ms |
//!
//! Every runtime here runs on a `ManualClock`, so no budget runs out and no frame waits: the
//! numbers are the CPU cost of the wiring, measured in real time by the harness.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tickstep::Runtime;
use tickstep::commands::Mechanism;
use tickstep::kernel::{Kernel, KernelConfig, ManualClock, Priority, Role};
use tickstep::schedules::OpenWorld;
use tickstep::schedules::{
    Config, Firing, ObjId, Options, Outcome, Refused, RunId, Runner, Schedules, Value,
};

use crate::harness::{Measure, Opts, Row, Section, interleave, median, ns_per_op};

const WIZARD: ObjId = ObjId(1);
/// Firings per tick: under the engine's default per-tick bound (1,024), so one tick fires all.
const DUE: usize = 1_000;
const MECHANISMS: usize = 10;

pub(crate) fn run(opts: &Opts) -> Section {
    let rounds = opts.rounds();
    vec![
        firing(rounds),
        frame(rounds),
        empty_command_cycle(rounds),
        idle_day(rounds.min(5)),
    ]
}

fn firing(rounds: usize) -> Row {
    let mut ours = RuntimeFiring::new();
    let mut peer = BareFiring::new();
    let (ours_ns, peer_ns) = interleave(rounds, || ours.fire_all(), || peer.fire_all());
    Row {
        name: "firing",
        measure: Measure::Ratio {
            ours_ns,
            peer: "bare engine + no-op runner",
            peer_ns,
            goal_ratio: 3.0,
        },
        note: format!(
            "{DUE} due every-1s schedules, one tick; ours runs each as an isolated kernel task and reports its outcome"
        ),
    }
}

/// A runtime with `DUE` recurring schedules of a verb that returns at once.
struct RuntimeFiring {
    rt: Runtime,
    clock: ManualClock,
    fired: Rc<Cell<u64>>,
}

impl RuntimeFiring {
    fn new() -> Self {
        let clock = ManualClock::new();
        let rt = Runtime::builder()
            .manual_clock(clock.clone())
            .frame_rate(1000)
            .without_commands()
            .diagnostics(false)
            .in_memory_store()
            .rng_seed(7)
            .build()
            .expect("runtime");
        let fired = Rc::new(Cell::new(0));
        let f = Rc::clone(&fired);
        rt.verb("tick", move |_| {
            f.set(f.get() + 1);
            Ok(Value::Int(0))
        });
        let mut txn = rt.schedules().begin(WIZARD);
        for _ in 0..DUE {
            txn.schedule_every(ObjId(2), "tick", 1.0, vec![], Options::new())
                .expect("create");
        }
        txn.commit().expect("commit");
        RuntimeFiring { rt, clock, fired }
    }

    fn fire_all(&mut self) -> f64 {
        self.clock.advance(Duration::from_secs(1));
        let before = self.fired.get();
        let ns = ns_per_op(DUE, || self.rt.step_frame().expect("frame"));
        assert_eq!(
            self.fired.get() - before,
            DUE as u64,
            "every schedule fired once"
        );
        ns
    }
}

/// Remembers the last run started (the engine counts them up); the bench reports their
/// outcomes after the tick.
#[derive(Clone, Default)]
struct NumberingRunner {
    next: Rc<Cell<u64>>,
}

impl Runner for NumberingRunner {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        self.next.set(firing.run.0);
        Ok(())
    }
}

/// The engine alone with the same schedules.
struct BareFiring {
    engine: Schedules,
    clock: ManualClock,
    runner: NumberingRunner,
}

impl BareFiring {
    fn new() -> Self {
        let clock = ManualClock::new();
        let runner = NumberingRunner::default();
        let mut config = Config::default();
        config.rng_seed = Some(7);
        let engine = Schedules::in_memory(clock.clone(), OpenWorld, runner.clone(), config);
        let mut txn = engine.begin(WIZARD);
        for _ in 0..DUE {
            txn.schedule_every(ObjId(2), "tick", 1.0, vec![], Options::new())
                .expect("create");
        }
        txn.commit().expect("commit");
        BareFiring {
            engine,
            clock,
            runner,
        }
    }

    fn fire_all(&mut self) -> f64 {
        self.clock.advance(Duration::from_secs(1));
        let first = self.runner.next.get() + 1;
        ns_per_op(DUE, || {
            let report = self.engine.tick().expect("tick");
            assert_eq!(report.started, DUE);
            for run in first..=self.runner.next.get() {
                self.engine
                    .report(RunId(run), Outcome::Returned(Value::Int(0)));
            }
        })
    }
}

fn frame(rounds: usize) -> Row {
    let frames = 600; // ten seconds at 60 fps
    let mut ours = {
        let clock = ManualClock::new();
        let rt = Runtime::builder()
            .manual_clock(clock)
            .frame_rate(60)
            .diagnostics(false)
            .in_memory_store()
            .build()
            .expect("runtime");
        let world = keepers(rt.commands());
        move || {
            let _world = &world;
            ns_per_op(frames, || rt.frame_loop().run_frames(frames as u64))
        }
    };
    let mut peer = {
        let clock = ManualClock::new();
        let kernel = Kernel::boot(clock.clone(), Role::Server, KernelConfig::default().fps(60));
        let commands = tickstep::commands::CommandScheduler::new(clock);
        let world = keepers(&commands);
        let job = kernel
            .scheduler()
            .every(
                Duration::from_millis(20),
                move || commands.run().expect("commands"),
                Priority::High,
            )
            .expect("job");
        move || {
            let _keep = (&world, &job);
            ns_per_op(frames, || kernel.frame_loop().run_frames(frames as u64))
        }
    };
    let (ours_ns, peer_ns) = interleave(rounds, &mut ours, &mut peer);
    Row {
        name: "frame",
        measure: Measure::Ratio {
            ours_ns,
            peer: "kernel loop + every(20ms) run()",
            peer_ns,
            goal_ratio: 1.5,
        },
        note: format!(
            "per 60 fps frame, {MECHANISMS} mechanisms with running default commands; ours adds the schedules wake check per cycle"
        ),
    }
}

/// `MECHANISMS` mechanisms, each with a default command that runs every cycle.
fn keepers(commands: &tickstep::commands::CommandScheduler) -> Vec<Mechanism> {
    (0..MECHANISMS)
        .map(|i| {
            let m = Mechanism::new(commands, format!("door {i}"));
            let count = Rc::new(Cell::new(0u64));
            let keeper = m
                .run_repeatedly(move || count.set(count.get() + 1))
                .named(format!("keeper {i}"));
            m.set_default_command(&keeper).expect("default");
            m
        })
        .collect()
}

fn idle_day(rounds: usize) -> Row {
    let mut samples: Vec<f64> = (0..rounds.max(1))
        .map(|_| {
            let rt = Runtime::builder()
                .manual_clock(ManualClock::new())
                .without_commands()
                .diagnostics(false)
                .in_memory_store()
                .build()
                .expect("runtime");
            let rings = Rc::new(Cell::new(0));
            let r = Rc::clone(&rings);
            rt.verb("ring", move |_| {
                r.set(r.get() + 1);
                Ok(Value::Int(0))
            });
            let mut txn = rt.schedules().begin(WIZARD);
            txn.schedule_every(ObjId(2), "ring", 3600.0, vec![], Options::new())
                .expect("create");
            txn.commit().expect("commit");
            let start = Instant::now();
            // The end is inclusive: the bell due at exactly 24 h rings.
            rt.run_for(Duration::from_secs(24 * 3600)).expect("day");
            let ms = start.elapsed().as_secs_f64() * 1e3;
            assert_eq!(rings.get(), 24);
            ms
        })
        .collect();
    Row {
        name: "idle_day",
        measure: Measure::Value {
            value: median(&mut samples),
            unit: "ms",
            goal: 50.0,
        },
        note: "real time to simulate 24 h with an hourly bell (24 firings), no command cycle"
            .into(),
    }
}

/// What an empty command cycle costs an idle server: the cycle is a kernel job every 20 ms,
/// which also keeps the kernel attached (20 ms is inside the 34 ms wake window), so the frame
/// loop steps every frame instead of sleeping to the next deadline.
fn empty_command_cycle(rounds: usize) -> Row {
    const SECONDS: u64 = 10;
    let idle = |commands: bool| {
        let builder = Runtime::builder()
            .manual_clock(ManualClock::new())
            .diagnostics(false)
            .in_memory_store();
        let rt = if commands {
            builder.build()
        } else {
            builder.without_commands().build()
        }
        .expect("runtime");
        move || {
            ns_per_op(SECONDS as usize, || {
                rt.run_for(Duration::from_secs(SECONDS)).expect("idle");
            })
        }
    };
    let (with, without) = interleave(rounds, idle(true), idle(false));
    Row {
        name: "empty_command_cycle",
        measure: Measure::Ns {
            ours_ns: with - without,
            goal_ns: 200_000.0,
        },
        note: format!(
            "per virtual second of an idle 60 fps server: with an empty 20 ms command cycle \
             {with:.0} ns, built without_commands() {without:.0} ns"
        ),
    }
}
