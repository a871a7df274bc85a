//! The real `tickstep` binary, run as a user would.

use std::path::Path;
use std::process::{Command, Output};

fn tickstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickstep"))
        .args(args)
        .output()
        .expect("the tickstep binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_is_available_on_every_command() {
    for args in [&["--help"][..], &["sim", "--help"]] {
        let out = tickstep(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("Usage: tickstep"), "{args:?}");
    }
}

#[test]
fn sim_prints_frames_and_overload_events() {
    let out = tickstep(&[
        "sim",
        "--frames",
        "400",
        "--load",
        "normal=50x300us",
        "--every",
        "50",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("budget"), "{text}");
    assert!(text.contains("Kernel.Overload"), "{text}");
}

#[test]
fn sim_plot_writes_a_valid_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("sim.svg");
    let out = tickstep(&[
        "sim",
        "--frames",
        "240",
        "--long-task",
        "12ms",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_valid_svg(&svg);
}

fn assert_valid_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.trim();
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..80.min(text.len())]
    );
    assert!(text.ends_with("</svg>"));
    assert!(text.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(
        text.matches("<polyline").count() >= 5,
        "budget, step and per-priority lines"
    );
    // Every element that opens is closed: a cheap well-formedness check without an XML parser.
    let opens = text.matches('<').count();
    let closes = text.matches('>').count();
    assert_eq!(opens, closes);
}

#[test]
fn bad_arguments_give_a_clear_message_and_exit_code_2() {
    let cases: [(&[&str], &str); 7] = [
        (&["sim", "--frames", "0"], "0 is not in 1.."),
        (&["sim", "--fps", "5000"], "5000 is not in 1..=1000"),
        (
            &["sim", "--frames", "many"],
            "invalid value 'many' for '--frames",
        ),
        (&["sim", "--long-task", "12"], "has no unit"),
        (&["sim", "--load", "urgent=3x1ms"], "unknown priority"),
        (
            &["sim", "--role", "referee"],
            "invalid value 'referee' for '--role",
        ),
        (&["teleport"], "unrecognized subcommand 'teleport'"),
    ];
    for (args, message) in cases {
        let out = tickstep(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_plot_that_cannot_be_written_is_a_runtime_error_with_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("no").join("such").join("dir.svg");
    let out = tickstep(&["sim", "--frames", "10", "--plot", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
}
