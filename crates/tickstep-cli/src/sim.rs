//! `tickstep sim`: the kernel's frame-budget model as a command (docs/runtime.md §7.4).
//!
//! Every frame the same thing happens: the frame's load is queued (a number of tasks per
//! priority, each costing a fixed time), the engine's physics step runs, and the Heartbeat
//! scheduler drains its queues Kernel first under the frame budget, checking the deadline before
//! each task below Kernel priority. Deferred work stays queued for the next frame. Time is
//! virtual: a task "costs" 150 µs by advancing a `ManualClock`, so ten thousand frames take a
//! moment and every run is exactly reproducible. On the server, deferred work in three
//! consecutive one-second windows publishes a Kernel.Overload; the client runs the fixed 1.5 ms
//! slice and, like the default client boot, no diagnostics.

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use tickstep::kernel::{Kernel, KernelConfig, ManualClock, Priority, Role};

use crate::console::{say, usage_error};
use crate::plot;
use crate::progress;
use crate::sim_report::{FrameRecord, OverloadRecord, SimReport};
use crate::units::{Load, MAX_TASK_COST, ms, parse_duration, parse_load};

/// The most frames one run simulates (each frame's record is kept for the table and the plot).
const MAX_FRAMES: u64 = 1_000_000;

fn parse_long_task(text: &str) -> Result<Duration, String> {
    let d = crate::units::parse_positive_duration(text)?;
    if d > MAX_TASK_COST {
        return Err(format!("{text:?}: a task may cost at most 1s"));
    }
    Ok(d)
}

/// `tickstep sim` options.
#[derive(Args, Debug)]
pub(crate) struct SimArgs {
    /// Frames to simulate.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=MAX_FRAMES))]
    frames: u64,
    /// Server (frame-aware budget, Overload diagnostics) or client (fixed 1.5 ms slice).
    #[arg(long, value_enum, default_value_t = SimRole::Server)]
    role: SimRole,
    /// Per-frame load of one priority, PRIORITY=COUNTxCOST (repeat for several priorities).
    /// Default: a load that fits the role's budget.
    #[arg(long = "load", value_parser = parse_load)]
    loads: Vec<Load>,
    /// One long task (e.g. 12ms) queued once, at Normal priority, to watch it overrun a frame.
    #[arg(long, value_parser = parse_long_task)]
    long_task: Option<Duration>,
    /// The frame the long task is queued on (default: the middle frame).
    #[arg(long)]
    long_task_frame: Option<u64>,
    /// The engine's physics step per frame (counted as physics time, not heartbeat time).
    #[arg(long, value_parser = parse_duration, default_value = "2ms")]
    physics: Duration,
    /// Target frame rate.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=1000))]
    fps: u32,
    /// Print every Nth frame (default: about 30 rows; 1 prints every frame).
    #[arg(long)]
    every: Option<u64>,
    /// Draw budget, step time, run and deferred counts per frame to this SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// The role of the simulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SimRole {
    /// Frame-aware budget against 16.5 ms, Overload diagnostics on.
    Server,
    /// Fixed 1.5 ms slice, no diagnostics.
    Client,
}

const PRIORITY_NAMES: [&str; 5] = ["kernel", "high", "normal", "low", "background"];
const ORIGINS: [&str; 5] = [
    "sim kernel",
    "sim high",
    "sim normal",
    "sim low",
    "sim background",
];

/// The default loads: they fit the role's budget with a little room to raise them.
fn default_loads(role: SimRole) -> Vec<Load> {
    let load = |priority, count, micros| Load {
        priority,
        count,
        cost: Duration::from_micros(micros),
    };
    match role {
        SimRole::Server => vec![
            load(Priority::High, 5, 200),
            load(Priority::Normal, 10, 300),
            load(Priority::Low, 5, 300),
            load(Priority::Background, 5, 200),
        ],
        SimRole::Client => vec![
            load(Priority::High, 2, 100),
            load(Priority::Normal, 4, 150),
            load(Priority::Low, 2, 150),
            load(Priority::Background, 2, 100),
        ],
    }
}

pub(crate) fn run(args: &SimArgs) -> Result<(), String> {
    if let Some(frame) = args.long_task_frame
        && frame >= args.frames
    {
        usage_error(&format!(
            "--long-task-frame {frame} is past the last frame ({} frames are simulated)",
            args.frames
        ));
    }
    let loads = if args.loads.is_empty() {
        default_loads(args.role)
    } else {
        args.loads.clone()
    };
    let long_task_frame = args.long_task_frame.unwrap_or(args.frames / 2);
    let report = simulate(&Setup {
        frames: args.frames,
        role: args.role,
        loads: &loads,
        long_task: args.long_task.map(|d| (long_task_frame, d)),
        physics: args.physics,
        fps: args.fps,
    });
    print_report(args, &loads, &report);
    if let Some(path) = &args.plot {
        plot::draw(path, &report).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        say(format!("plot written to {}", path.display()));
    }
    Ok(())
}

pub(crate) struct Setup<'a> {
    pub(crate) frames: u64,
    pub(crate) role: SimRole,
    pub(crate) loads: &'a [Load],
    pub(crate) long_task: Option<(u64, Duration)>,
    pub(crate) physics: Duration,
    pub(crate) fps: u32,
}

/// Runs the model and records every frame.
pub(crate) fn simulate(setup: &Setup<'_>) -> SimReport {
    let clock = ManualClock::new();
    let role = match setup.role {
        SimRole::Server => Role::Server,
        SimRole::Client => Role::Client,
    };
    let kernel = Kernel::boot(clock.clone(), role, KernelConfig::default().fps(setup.fps));
    let sched = kernel.scheduler().clone();
    let overloads = Rc::new(std::cell::RefCell::new(Vec::new()));
    let frame_no = Rc::new(Cell::new(0u64));
    if role == Role::Server {
        let (sink, at) = (Rc::clone(&overloads), Rc::clone(&frame_no));
        kernel
            .enable_diagnostics(move |o| {
                sink.borrow_mut().push(OverloadRecord {
                    frame: at.get(),
                    deferred: o.window.deferred,
                    longest_task: o.window.longest_task,
                    origin: o.window.longest_task_origin.clone(),
                    top_deferred: o.window.top_deferred_summary(),
                });
            })
            .expect("diagnostics are available on a server");
    }
    let ran: Rc<[Cell<u64>; 5]> = Rc::new(Default::default());

    // The frame's load comes from an every(0) job at Kernel priority, the way a game's systems
    // queue work each frame: it keeps the scheduler attached (so the steady-state budget rule
    // applies, not the reattach rule) and costs no time itself.
    let (loads, long_task) = (setup.loads.to_vec(), setup.long_task);
    let (s, c, counts, at) = (
        sched.clone(),
        clock.clone(),
        Rc::clone(&ran),
        Rc::clone(&frame_no),
    );
    let _load = sched
        .with_origin("sim load")
        .every(
            Duration::ZERO,
            move || {
                for load in &loads {
                    let level = usize::from(load.priority.level() - 1);
                    for _ in 0..load.count {
                        let (c, counts, cost) = (c.clone(), Rc::clone(&counts), load.cost);
                        let _task = s.with_origin(ORIGINS[level]).schedule(
                            move || {
                                c.advance(cost);
                                counts[level].set(counts[level].get() + 1);
                            },
                            load.priority,
                        );
                    }
                }
                if let Some((frame, cost)) = long_task
                    && frame == at.get()
                {
                    let (c, counts) = (c.clone(), Rc::clone(&counts));
                    let _task = s.with_origin("sim long task").schedule(
                        move || {
                            c.advance(cost);
                            counts[2].set(counts[2].get() + 1);
                        },
                        Priority::Normal,
                    );
                }
            },
            Priority::Kernel,
        )
        .expect("a per-frame job has no deadline to overflow");
    // The engine's physics step, reported as physics time rather than heartbeat time.
    let (c, physics) = (clock.clone(), setup.physics);
    kernel
        .frame_loop()
        .set_simulation(move |_dt| c.advance(physics));

    let bar = progress::bar(setup.frames, "frames");
    let mut frames = Vec::with_capacity(usize::try_from(setup.frames).unwrap_or(0));
    let mut before = [0u64; 5];
    for n in 0..setup.frames {
        frame_no.set(n);
        let step_start = sched.stats().steps;
        kernel.frame_loop().run_frames(1);
        let stats = sched.stats();
        let now: [u64; 5] = std::array::from_fn(|i| ran[i].get());
        let depths = sched.queue_depths().queues;
        frames.push(FrameRecord {
            budget: stats.last_budget,
            step: if stats.steps > step_start {
                stats.last_step
            } else {
                Duration::ZERO
            },
            step_ema: stats.step_ema,
            ran: std::array::from_fn(|i| now[i] - before[i]),
            deferred: depths.map(|d| d as u64),
        });
        before = now;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let overloads = overloads.borrow().clone();
    SimReport { frames, overloads }
}

fn print_report(args: &SimArgs, loads: &[Load], report: &SimReport) {
    let role = match args.role {
        SimRole::Server => "server (frame-aware, target 16.5 ms, floor 1.5 ms)",
        SimRole::Client => "client (fixed 1.5 ms slice)",
    };
    say(format!(
        "tickstep sim: {} frames at {} fps, {role}",
        args.frames, args.fps
    ));
    let described: Vec<String> = loads
        .iter()
        .map(|l| {
            let name = PRIORITY_NAMES[usize::from(l.priority.level() - 1)];
            format!("{name} {}x{}", l.count, ms(l.cost))
        })
        .collect();
    say(format!(
        "load per frame: {}; physics {}",
        described.join(", "),
        ms(args.physics)
    ));
    if let Some(cost) = args.long_task {
        let at = args.long_task_frame.unwrap_or(args.frames / 2);
        say(format!("one long task of {} at frame {at}", ms(cost)));
    }
    say("");
    say(format!(
        "{:>6}  {:>8}  {:>8}  {:>8}  {:^29}  {:^29}",
        "frame", "budget", "step", "StepEma", "run  K/H/N/L/B", "deferred  K/H/N/L/B"
    ));
    let every = args
        .every
        .unwrap_or_else(|| (args.frames / 30).max(1))
        .max(1);
    let mut overloads = report.overloads.iter().peekable();
    for (n, f) in report.frames.iter().enumerate() {
        let n = n as u64;
        let long = args.long_task.is_some() && n == args.long_task_frame.unwrap_or(args.frames / 2);
        if n.is_multiple_of(every) || long || n + 1 == args.frames {
            say(format!(
                "{n:>6}  {:>8}  {:>8}  {:>8}  {:^29}  {:^29}{}",
                ms(f.budget),
                ms(f.step),
                ms(f.step_ema),
                counts(&f.ran),
                counts(&f.deferred),
                if long { "  <- long task" } else { "" }
            ));
        }
        while let Some(o) = overloads.next_if(|o| o.frame == n) {
            say(format!(
                "{n:>6}  Kernel.Overload: {} deferred in the last window; longest task {} ({}); most deferred: {}",
                o.deferred,
                ms(o.longest_task),
                o.origin.as_deref().unwrap_or("?"),
                o.top_deferred
            ));
        }
    }
    let total_ran: [u64; 5] = std::array::from_fn(|i| report.frames.iter().map(|f| f.ran[i]).sum());
    let deferred_frames = report
        .frames
        .iter()
        .filter(|f| f.deferred.iter().any(|&d| d > 0))
        .count();
    say("");
    say(format!(
        "ran {} tasks ({}), {deferred_frames} of {} frames left work deferred, {} Overload event(s)",
        total_ran.iter().sum::<u64>(),
        counts(&total_ran),
        report.frames.len(),
        report.overloads.len()
    ));
    explain_swing(report);
}

/// The frame-aware budget's settling after a change of load, if it swung: `(first, last,
/// lowest, highest)` over the frames whose budget moved by more than 1 ms from the one before.
pub(crate) fn budget_swing(frames: &[FrameRecord]) -> Option<(usize, usize, Duration, Duration)> {
    let moved: Vec<usize> = (1..frames.len())
        .filter(|&i| frames[i].budget.abs_diff(frames[i - 1].budget) > Duration::from_millis(1))
        .collect();
    let (&first, &last) = (moved.first()?, moved.last()?);
    let span = &frames[first - 1..=last];
    let low = span.iter().map(|f| f.budget).min()?;
    let high = span.iter().map(|f| f.budget).max()?;
    Some((first, last, low, high))
}

/// Says what the `StepEma` correction did to the budget, and when a host passes its own.
fn explain_swing(report: &SimReport) {
    let Some((first, last, low, high)) = budget_swing(&report.frames) else {
        return;
    };
    say(format!(
        "budget zig-zag: frames {first}-{last} swung between {} and {} while StepEma caught up \
         (budget = target - (heartbeat - StepEma) - physics; StepEma moves 10% a frame)",
        ms(low),
        ms(high)
    ));
    say(
        "a host that knows its own slack per frame (or must not see the budget swing under a \
         sudden, sustained load) passes an explicit budget: FrameScheduler::step_with_budget",
    );
}

fn counts(values: &[u64; 5]) -> String {
    values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(loads: &[Load], role: SimRole) -> Setup<'_> {
        Setup {
            frames: 300,
            role,
            loads,
            long_task: None,
            physics: Duration::from_millis(2),
            fps: 60,
        }
    }

    #[test]
    fn the_default_server_load_fits_and_publishes_no_overload() {
        let loads = default_loads(SimRole::Server);
        let report = simulate(&setup(&loads, SimRole::Server));
        // The first frames run at the floor (no earlier step) and while StepEma warms up.
        assert!(report.frames[0].deferred.iter().sum::<u64>() > 0);
        assert!(report.frames[5..].iter().all(|f| f.deferred == [0; 5]));
        assert_eq!(report.frames[299].budget, Duration::from_micros(14_500));
        assert!(report.overloads.is_empty());
        assert_eq!(report.frames[10].ran, [0, 5, 10, 5, 5]);
    }

    #[test]
    fn raising_the_load_defers_background_first_and_publishes_overload_on_the_server() {
        let mut loads = default_loads(SimRole::Server);
        loads[1].count = 45; // normal: 13.5 ms a frame, 17 ms in all
        let report = simulate(&setup(&loads, SimRole::Server));
        let late = &report.frames[200];
        assert!(late.deferred[4] > 0, "{late:?}");
        assert_eq!(late.deferred[1], 0, "High still fits: {late:?}");
        assert!(!report.overloads.is_empty());
    }

    #[test]
    fn the_client_runs_a_fixed_slice_and_publishes_no_overload() {
        let mut loads = default_loads(SimRole::Client);
        loads[1].count = 40;
        let report = simulate(&setup(&loads, SimRole::Client));
        assert!(
            report
                .frames
                .iter()
                .all(|f| f.budget == Duration::from_micros(1500))
        );
        assert!(report.frames[200].deferred.iter().sum::<u64>() > 0);
        assert!(report.overloads.is_empty());
    }

    #[test]
    fn a_sustained_overload_shows_the_step_ema_zig_zag() {
        let mut loads = default_loads(SimRole::Server);
        loads[1].count = 45; // normal: 13.5 ms a frame, 17 ms in all: more than the target
        let report = simulate(&setup(&loads, SimRole::Server));
        let (first, last, low, high) = budget_swing(&report.frames).expect("the budget swings");
        assert!(first < 10 && last > first, "{first}..{last}");
        assert!(
            high.abs_diff(low) > Duration::from_millis(3),
            "{low:?}..{high:?}"
        );
        // StepEma is reported and follows the steps.
        assert!(report.frames[250].step_ema > Duration::from_millis(10));
        // A load that fits settles without swinging after the warm-up frames.
        let calm = simulate(&setup(&default_loads(SimRole::Server), SimRole::Server));
        assert!(budget_swing(&calm.frames[20..]).is_none());
    }

    #[test]
    fn one_long_task_overruns_its_frame() {
        let loads = default_loads(SimRole::Server);
        let mut s = setup(&loads, SimRole::Server);
        s.long_task = Some((100, Duration::from_millis(12)));
        let report = simulate(&s);
        assert!(report.frames[100].step >= Duration::from_millis(12));
        assert!(
            report.frames[100].deferred.iter().sum::<u64>() > 0,
            "{:?}",
            report.frames[100]
        );
    }
}
