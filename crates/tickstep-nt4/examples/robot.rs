//! A simulated robot on tickstep's commands layer, shown in `WPILib`'s tools.
//!
//! A drivetrain, an arm and the robot's lights are mechanisms; only the lights may be driven
//! while the robot is disabled (docs/commands.md §12.2). Like a robot on a field, it boots
//! disabled and follows the robot mode it is given, each mode setting up its own defaults and
//! bindings when it starts (docs/commands.md §12.5, §12.6):
//!
//! * **disabled**: nothing moves; the lights breathe. A command that needs the drivetrain or the
//!   arm is canceled within the cycle the robot is disabled, and refused until it is enabled.
//! * **autonomous**: a sequence drives out, raises the arm and drives back; the lights show
//!   autonomous.
//! * **teleop**: the drivetrain's default drives a slow figure, the arm's stows it, and a button
//!   scores with the arm, taking it from whatever holds it; the lights show the team colour.
//!
//! The mode is the NT topic `/tickstep/input/mode` (`disabled`, `autonomous`, `teleop` or
//! `test`), the button `/tickstep/input/button`; a dashboard publishes them (Elastic,
//! `AdvantageScope`, or pyntcore). `--script` plays a match by itself, for a robot with no
//! driver and no field: disabled, autonomous, teleop (pressing the button once), disabled, over
//! and over; `--match-seconds N` sets the match's length (17 by default: 1 s, 4 s, 10 s, 2 s).
//! What it does shows under `/tickstep/robot/` (enabled, mode) and `/tickstep/mechanisms/`
//! (which command holds each mechanism), the topics `AdvantageScope` reads; the scoring state
//! machine's graph is the Mermaid text under `/robot/score/graph`.
//!
//! Serves NT4 on port 5810 (`--port`) and writes `.wpilog` files to `logs/` (`--log-dir`).
//!
//! ```text
//! cargo run --release -p tickstep-nt4 --example robot -- --script
//! ```
//!
//! Then point `AdvantageScope` at 127.0.0.1 (File → Connect to Simulator), or open a log from
//! `logs/`. `--seconds N` stops after N seconds (0, the default, runs until killed).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tickstep_commands::compose::{self, StateMachine};
use tickstep_commands::{CommandScheduler, Mechanism, OpMode, RobotStateCell, Trigger};
use tickstep_kernel::clock::SystemClock;
use tickstep_kernel::{FrameScheduler, Priority, SchedulerConfig};
use tickstep_nt4::{Limits, LogConfig, Nt4Server, SchedulerTelemetry, Value, WpiLog};

const FRAME: Duration = Duration::from_millis(20);
const BUTTON: &str = "/tickstep/input/button";
const MODE: &str = "/tickstep/input/mode";
const SCORE_GRAPH: &str = "/robot/score/graph";

struct Args {
    port: u16,
    log_dir: String,
    seconds: u64,
    script: bool,
    match_seconds: f64,
}

fn args() -> Args {
    let mut a = Args {
        port: 5810,
        log_dir: "logs".into(),
        seconds: 0,
        script: false,
        match_seconds: 17.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| panic!("{name} needs a value"));
        match flag.as_str() {
            "--port" => a.port = value("--port").parse().expect("--port: a port number"),
            "--log-dir" => a.log_dir = value("--log-dir"),
            "--seconds" => {
                a.seconds = value("--seconds")
                    .parse()
                    .expect("--seconds: a whole number");
            }
            "--script" => a.script = true,
            "--match-seconds" => {
                a.match_seconds = value("--match-seconds")
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 1.0)
                    .expect("--match-seconds: a number of seconds, at least 1");
            }
            other => {
                panic!(
                    "unknown argument {other:?} (try --port, --log-dir, --seconds, --script, --match-seconds)"
                )
            }
        }
    }
    a
}

fn main() {
    let args = args();
    let server = Nt4Server::start(([0, 0, 0, 0], args.port).into(), Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let log = WpiLog::start(LogConfig::new(&args.log_dir)).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "NT4 on port {}, logs in {}/",
        server.local_addr().port(),
        args.log_dir
    );

    let clock = SystemClock::new();
    let scheduler = CommandScheduler::new(clock.clone());
    let kernel = FrameScheduler::new(clock, SchedulerConfig::server());
    let state = RobotStateCell::new();
    scheduler.set_robot_state(state.clone());
    let Robot {
        drivetrain,
        arm,
        lights,
        position,
        angle,
        button,
    } = robot(&scheduler, &server, &log);
    let mut telemetry = SchedulerTelemetry::new(&scheduler);
    telemetry
        .serve(&server)
        .log(&log)
        .mechanism(&drivetrain)
        .mechanism(&arm)
        .mechanism(&lights)
        .trigger("button", &button);
    let started = Instant::now();
    let mut next = started;
    let mut frame = 0u64;
    loop {
        if args.script {
            let (mode, pressed) = scripted_match(frame, args.match_seconds);
            server.set(MODE, Value::String(mode.to_owned()));
            server.set(BUTTON, Value::Boolean(pressed));
        }
        // The field's word, read once per frame before the scheduler's cycle.
        let mode = match server.get(MODE) {
            Some(Value::String(mode)) => mode,
            _ => String::new(),
        };
        match mode.as_str() {
            "autonomous" => state.set(true, OpMode::AUTONOMOUS),
            "teleop" => state.set(true, OpMode::TELEOP),
            "test" => state.set(true, OpMode::TEST),
            _ => state.disable(),
        }
        // Background work the kernel fits into its budget (a sensor filter, say).
        for _ in 0..4 {
            let _task = kernel.schedule(
                || {
                    std::hint::black_box((0..2_000u64).sum::<u64>());
                },
                Priority::Normal,
            );
        }
        kernel.step_with_budget(Duration::from_millis(2));
        if let Err(e) = scheduler.run() {
            eprintln!("frame {frame}: {e}");
        }
        telemetry.set_kernel_stats(&kernel.stats());
        telemetry.publish();
        let now_us = scheduler.now().as_nanos() / 1_000;
        for (topic, value) in [
            ("/robot/drivetrain/position_m", position.get()),
            ("/robot/arm/angle_deg", angle.get()),
        ] {
            if server.set(topic, Value::Double(value)) {
                log.append(topic, Value::Double(value), now_us);
            }
        }
        frame += 1;
        if args.seconds > 0 && started.elapsed() >= Duration::from_secs(args.seconds) {
            break;
        }
        next += FRAME;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    log.flush();
    println!("{frame} frames; {} log records dropped", log.dropped());
}

/// Where a scripted match is at `frame`: the mode, and whether the button is pressed. A match
/// of `seconds` is 1/17 disabled, 4/17 autonomous, 10/17 teleop (the button held for its middle
/// tenth) and 2/17 disabled again.
fn scripted_match(frame: u64, seconds: f64) -> (&'static str, bool) {
    let frames = (seconds * 50.0).round();
    #[allow(clippy::cast_precision_loss)]
    let at = (frame as f64 % frames) / frames * 17.0;
    match at {
        at if at < 1.0 => ("disabled", false),
        at if at < 5.0 => ("autonomous", false),
        at if at < 15.0 => ("teleop", (9.5..10.5).contains(&at)),
        _ => ("disabled", false),
    }
}

/// The mechanisms, their simulated state, and the button trigger.
struct Robot {
    drivetrain: Mechanism,
    arm: Mechanism,
    lights: Mechanism,
    position: Rc<Cell<f64>>,
    angle: Rc<Cell<f64>>,
    button: Trigger,
}

/// Builds the robot's commands, and what each robot mode sets up when it starts.
#[allow(clippy::too_many_lines)] // one robot, read top to bottom
fn robot(scheduler: &CommandScheduler, server: &Nt4Server, log: &WpiLog) -> Robot {
    let drivetrain = Mechanism::new(scheduler, "drivetrain");
    let arm = Mechanism::new(scheduler, "arm");
    let lights = Mechanism::new(scheduler, "lights");
    lights.set_controllable_while_disabled(true);
    let show = |pattern: &str| {
        lights
            .run(|co| async move {
                co.park().await;
            })
            .named(format!("lights {pattern}"))
    };
    let position = Rc::new(Cell::new(0.0_f64)); // metres
    let angle = Rc::new(Cell::new(0.0_f64)); // degrees

    let drive_to = |target: f64, name: &str| {
        let position = position.clone();
        drivetrain
            .run(move |co| {
                let position = position.clone();
                async move {
                    while (position.get() - target).abs() > 0.01 {
                        let step = (target - position.get()).clamp(-0.04, 0.04); // 2 m/s
                        position.set(position.get() + step);
                        co.yield_now().await;
                    }
                }
            })
            .named(name)
    };
    let move_arm = |target: f64, name: &str, priority: i32| {
        let angle = angle.clone();
        arm.run(move |co| {
            let angle = angle.clone();
            async move {
                while (angle.get() - target).abs() > 0.5 {
                    angle.set(angle.get() + (target - angle.get()).clamp(-3.0, 3.0)); // 150°/s
                    co.yield_now().await;
                }
                co.wait(Duration::from_millis(300)).await;
            }
        })
        .with_priority(priority)
        .named(name)
    };
    let autonomous = compose::sequence([
        &drive_to(2.0, "drive out"),
        &move_arm(90.0, "raise arm", 1),
        &drive_to(0.0, "drive back"),
    ])
    .expect("a sequence of three")
    .named("autonomous");
    let teleop = {
        let position = position.clone();
        drivetrain
            .run(move |co| {
                let position = position.clone();
                async move {
                    let start = co.now();
                    loop {
                        let t = co.now().duration_since(start).as_secs_f64();
                        position.set(1.5 * (t * 0.5).sin());
                        co.yield_now().await;
                    }
                }
            })
            .named("teleop drive")
    };
    // The arm's default: stow, then hold there until something takes the arm.
    let stow = {
        let angle = angle.clone();
        arm.run(move |co| {
            let angle = angle.clone();
            async move {
                while angle.get().abs() > 0.5 {
                    angle.set(angle.get() - angle.get().clamp(-3.0, 3.0));
                    co.yield_now().await;
                }
                co.park().await;
            }
        })
        .named("stow arm")
    };
    // Scoring as a state machine, so the tools can draw it (docs/commands.md §14).
    let mut scoring = StateMachine::new("score");
    let raise = scoring.state(&move_arm(120.0, "raise to score", 10));
    let lower = scoring.state(&move_arm(0.0, "stow after score", 10));
    scoring.on_completion(raise, lower).labeled("at the goal");
    scoring.exit_on_completion(lower).labeled("stowed");
    let score = scoring.build().expect("two states");
    // The Mermaid text AdvantageScope's proposed diagram view draws, as a plain string topic.
    let graph = Value::String(scoring.graph().to_mermaid());
    server.set(SCORE_GRAPH, graph.clone());
    log.append(SCORE_GRAPH, graph, scheduler.now().as_nanos() / 1_000);
    let input = server.clone();
    let button = Trigger::new(scheduler, move || {
        input.get(BUTTON).and_then(|v| v.as_bool()).unwrap_or(false)
    });

    let (l, breathe) = (lights.clone(), show("breathe"));
    scheduler.on_mode(OpMode::DISABLED, move |_| {
        l.set_default_command(&breathe).expect("lights only");
    });
    let (l, auto_lights) = (lights.clone(), show("autonomous"));
    scheduler.on_mode(OpMode::AUTONOMOUS, move |scheduler| {
        l.set_default_command(&auto_lights).expect("lights only");
        // Scheduled while autonomous is the mode, so it ends with autonomous.
        scheduler.schedule(&autonomous);
    });
    let (l, team) = (lights.clone(), show("team colour"));
    let (d, a, b) = (drivetrain.clone(), arm.clone(), button.clone());
    scheduler.on_mode(OpMode::TELEOP, move |_| {
        l.set_default_command(&team).expect("lights only");
        d.set_default_command(&teleop)
            .expect("teleop drives the drivetrain");
        a.set_default_command(&stow).expect("the arm stows");
        b.on_true(&score);
    });
    Robot {
        drivetrain,
        arm,
        lights,
        position,
        angle,
        button,
    }
}
