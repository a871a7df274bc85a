//! `tickstep-bench`: tickstep side by side with its peers and the physical-limit baselines.
//!
//! ```text
//! cargo run --release -p tickstep-bench -- [SECTION ...] [--quick] [--json]
//! ```
//!
//! Sections: see [`SECTIONS`]; none named runs them all. Every comparison runs ours and the peer
//! interleaved in this one process (see [`harness`]), so ratios hold on a noisy shared machine even
//! when absolute times drift. `--quick` shrinks sizes and rounds to finish in under a minute.

mod commands;
mod dashboard;
mod harness;
mod kernel;
mod peers;
mod runtime;
mod schedules;
mod serve;

use harness::{Opts, SectionFn};

/// Every section, in the order they run.
const SECTIONS: &[(&str, SectionFn)] = &[
    ("kernel", kernel::run),
    ("commands", commands::run),
    ("schedules", schedules::run),
    ("runtime", runtime::run),
    ("serve", serve::run),
    ("dashboard", dashboard::run),
    ("peers", peers::run),
];

fn main() {
    let mut quick = false;
    let mut json = false;
    let mut wanted = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => quick = true,
            "--json" => json = true,
            "--help" | "-h" => {
                let names: Vec<_> = SECTIONS.iter().map(|(name, _)| *name).collect();
                println!(
                    "usage: tickstep-bench [SECTION ...] [--quick] [--json]\nsections: {}",
                    names.join(", ")
                );
                return;
            }
            name if SECTIONS.iter().any(|(known, _)| *known == name) => wanted.push(arg),
            other => {
                let names: Vec<_> = SECTIONS.iter().map(|(name, _)| *name).collect();
                eprintln!(
                    "tickstep-bench: unknown argument {other:?} (sections: {}; flags: --quick, --json)",
                    names.join(", ")
                );
                std::process::exit(2);
            }
        }
    }
    let opts = Opts { quick };
    let mut results = Vec::new();
    for (name, run) in SECTIONS {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            if !json {
                eprintln!("running {name}{}", if quick { " (quick)" } else { "" });
            }
            results.push((*name, run(&opts)));
        }
    }
    if json {
        harness::print_json(&results);
    } else {
        harness::print_table(&results);
    }
}
