//! `tickstep`: the command-line face of tickstep.
//!
//! * `tickstep demo` — a small living world on all three layers and the embedded store;
//! * `tickstep schedules` — an operator's view of a schedule store (list, info, stop);
//! * `tickstep sim` — the kernel's frame-budget model in virtual time, with an SVG plot;
//! * `tickstep serve` — a small world server that real clients reach over TCP;
//! * `tickstep dashboard` — the web dashboard of a schedule store with no server running.
//! * `tickstep top` — a running serve's live frame budget in a terminal, over its HTTP side.
//!
//! One module per subcommand; this file only parses and dispatches. Usage errors exit with code 2
//! (clap's convention), runtime failures with 1.

mod console;
mod dashboard;
mod demo;
mod named;
mod plot;
mod progress;
mod schedules_tool;
mod serve;
mod sim;
mod sim_report;
mod store;
mod top;
mod units;
mod when;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Run work on a tick, under a budget, on one clock.
#[derive(Parser, Debug)]
#[command(name = "tickstep", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a small living world on all three layers and the embedded store.
    Demo(demo::DemoArgs),
    /// Inspect a schedule store: list, info ID, stop ID.
    Schedules(schedules_tool::SchedulesArgs),
    /// Simulate the kernel's frame budget in virtual time (docs/kernel.md §3 and §4).
    Sim(sim::SimArgs),
    /// Serve a small world over TCP (line text; `nc 127.0.0.1 4000`).
    Serve(serve::ServeArgs),
    /// Serve the web dashboard of a schedule store, with no server running (docs/serve.md §13.13).
    Dashboard(dashboard::DashboardArgs),
    /// Watch a running `serve --http`'s frame budget live in a terminal.
    Top(top::TopArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Schedules(args) => schedules_tool::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Dashboard(args) => dashboard::run(args),
        Command::Top(args) => top::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tickstep: {message}");
            ExitCode::FAILURE
        }
    }
}
