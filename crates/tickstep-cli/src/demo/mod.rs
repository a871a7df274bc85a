//! `tickstep demo`: a small living world on all three layers and the embedded store.
//!
//! * [`demo_world`] — the rooms, doors, keeper, lockdown, players and durable schedules;
//! * [`status`] — what one status line (or the live view) reports about the last second;
//! * [`tui`] — the `--tui` live view (ratatui).
//!
//! The demo runs on the real clock (or, with the hidden `--virtual` flag used by tests, on a
//! virtual clock that starts at the real wall-clock time) until `--duration` has passed, Ctrl-C
//! is pressed or a SIGTERM (or SIGHUP) comes; either way it stops cleanly: the runtime shuts down,
//! the store's last cadence updates are committed and, on `PostgreSQL`, the node's schedules are
//! handed back at once (docs/runtime.md §7.1). Run it twice on one store and the second run finds the
//! first run's schedules, ids and counters intact, and says so.

mod demo_world;
mod status;
mod tui;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;
use tickstep::Runtime;
use tickstep::kernel::ErrorChain;
use tickstep::kernel::clock::{Clock, SystemClock};
use tickstep::kernel::{ManualClock, Role};
use tickstep::schedules::Namespace;

use crate::console::say;
use crate::progress;
use crate::units::parse_positive_duration;
use demo_world::{DemoWorld, DemoWorldState, Origin};
use status::Sampler;

/// `tickstep demo` options.
#[derive(Args, Debug)]
pub(crate) struct DemoArgs {
    /// Stop after this long (e.g. 3s, 2m). Default: run until Ctrl-C or SIGTERM.
    #[arg(long, value_parser = parse_positive_duration)]
    duration: Option<Duration>,
    /// The schedule store: an `SQLite` file (created if missing), or a `postgres://user@host/db`
    /// URL (tables created in that database).
    #[arg(long, default_value = "./tickstep.db")]
    db: PathBuf,
    /// A live view in the terminal instead of one status line per second (q or Ctrl-C quits).
    #[arg(long)]
    tui: bool,
    /// Run in virtual time (for tests: a run of any length returns at once).
    #[arg(long, hide = true)]
    r#virtual: bool,
}

/// The namespace the demo's schedules live in (docs/schedules.md §15.4): another application on
/// the same store keeps its own.
const NAMESPACE: &str = "demo";

pub(crate) fn run(args: &DemoArgs) -> Result<(), String> {
    let builder = Runtime::builder()
        .role(Role::Server)
        .store_path(&args.db)
        .namespace(Namespace::new(NAMESPACE).expect("a valid namespace"))
        .world(DemoWorld);
    let builder = if args.r#virtual {
        let wall = SystemClock::new().unix_nanos();
        builder.manual_clock(ManualClock::starting_at_unix_nanos(wall))
    } else {
        builder.system_clock()
    };
    let rt = builder.build().map_err(|e| ErrorChain(&e).to_string())?;
    let world = DemoWorldState::install(&rt)?;

    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // Ctrl-C, and (ctrlc's `termination`) SIGTERM and SIGHUP: each ends the run at its next
    // frame, and the stop below is clean.
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| format!("cannot install the Ctrl-C and SIGTERM handler: {e}"))?;

    if args.tui {
        tui::run(&rt, &world, args.duration, &stop)?;
    } else {
        introduce(&rt, &world, args);
        status_lines(&rt, &world, args.duration, &stop)?;
    }
    finish(rt, &world)
}

/// What the demo is about to do, and what it found in the store.
fn introduce(rt: &Runtime, world: &DemoWorldState, args: &DemoArgs) {
    say(format!(
        "tickstep demo on store {} (namespace {NAMESPACE})",
        crate::store::shown(&args.db)
    ));
    let engine = rt.schedules();
    if let Some(held) = engine.held_back() {
        say(format!("  {held}"));
    }
    let now = engine.now_unix_seconds();
    let mut found_any = false;
    for (name, id, origin) in &world.schedules {
        match origin {
            Origin::Created => say(format!("  created schedule {}: {name}", id.get())),
            Origin::Found(info) => {
                found_any = true;
                // Nothing is due while none is armed: a paused one says so (docs/schedules.md §9.4).
                let next = if info.next_run > 0.0 {
                    format!("next in {:.1}s", (info.next_run - now).max(0.0))
                } else {
                    info.status().to_string()
                };
                say(format!(
                    "  found schedule {} from an earlier run: {name}, fired {} times, {} faults, {next}",
                    id.get(),
                    info.run_count,
                    info.fault_count
                ));
            }
        }
    }
    if found_any {
        say("  (ids and counters intact: the store kept them across the restart)");
    }
    if rt.abandoned_firings() > 0 {
        say(format!(
            "  {} firing(s) were in flight when the last run stopped: recorded as faults (interrupted by restart)",
            rt.abandoned_firings()
        ));
    }
    match args.duration {
        Some(d) => say(format!("running for {d:?}; one status line per second")),
        None => say("running until Ctrl-C or SIGTERM; one status line per second"),
    }
}

/// One status line per second until the duration has passed, or Ctrl-C or SIGTERM.
fn status_lines(
    rt: &Runtime,
    world: &DemoWorldState,
    duration: Option<Duration>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let clock = rt.clock().clone();
    let start = clock.now();
    let bar = duration
        .filter(|d| *d > Duration::from_secs(1))
        .map(|d| progress::bar(d.as_secs(), "seconds"));
    let mut sampler = Sampler::new(rt);
    for second in 1u64.. {
        let due = start.saturating_add(Duration::from_secs(second));
        let end = duration.map(|d| start.saturating_add(d));
        let until = end.map_or(due, |end| due.min(end));
        rt.run_until(|| {
            sampler.frame(rt);
            stop.load(Ordering::SeqCst) || clock.now() >= until
        })
        .map_err(|e| ErrorChain(&e).to_string())?;
        world.keep_lockup_armed(rt.schedules())?;
        // The engine noticed operator stops at its ticks (it polls the store); say which.
        for id in rt.schedules().take_operator_stops() {
            say(format!("schedule {} was stopped by an operator", id.get()));
        }
        let line = sampler.line(rt, world, clock.now() - start);
        match &bar {
            Some(bar) => {
                bar.suspend(|| say(&line));
                bar.inc(1);
            }
            None => say(&line),
        }
        if stop.load(Ordering::SeqCst) || end.is_some_and(|end| clock.now() >= end) {
            break;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(())
}

/// Stops the runtime, commits the store, and says what is in it.
fn finish(rt: Runtime, world: &DemoWorldState) -> Result<(), String> {
    let path = rt.store_path().map(std::path::Path::to_path_buf);
    let live = rt.schedules().live_count();
    let tally = &world.tally;
    rt.shutdown().map_err(|e| ErrorChain(&e).to_string())?;
    say(format!(
        "stopped cleanly: {} players admitted, {} lockdowns, {} bell rings, vitality {:.1}",
        tally.admitted.get(),
        tally.lockdowns.get(),
        tally.bell_rings.get(),
        tally.vitality.get()
    ));
    if let Some(path) = path {
        say(format!(
            "store committed: {} ({live} live schedules; the persistent ones come back on the next run)",
            crate::store::shown(&path)
        ));
    }
    Ok(())
}
