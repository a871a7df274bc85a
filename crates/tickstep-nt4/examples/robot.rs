//! A simulated robot on tickstep's commands layer, shown in `WPILib`'s tools.
//!
//! A drivetrain and an arm are mechanisms. At start an autonomous sequence drives out, raises
//! the arm and drives back; then the drivetrain's default command "teleop" drives a slow figure
//! while a button scores with the arm, taking it from whatever holds it. The button is the NT
//! topic `/tickstep/input/button`, which a dashboard publishes (Elastic, `AdvantageScope`, or
//! pyntcore); `--script` presses it by itself every ten seconds, for a robot with no driver.
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

use tickstep_commands::{CommandScheduler, Mechanism, Trigger, compose};
use tickstep_kernel::clock::SystemClock;
use tickstep_kernel::{FrameScheduler, Priority, SchedulerConfig};
use tickstep_nt4::{Limits, LogConfig, Nt4Server, SchedulerTelemetry, Value, WpiLog};

const FRAME: Duration = Duration::from_millis(20);
const BUTTON: &str = "/tickstep/input/button";

struct Args {
    port: u16,
    log_dir: String,
    seconds: u64,
    script: bool,
}

fn args() -> Args {
    let mut a = Args {
        port: 5810,
        log_dir: "logs".into(),
        seconds: 0,
        script: false,
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
            other => {
                panic!("unknown argument {other:?} (try --port, --log-dir, --seconds, --script)")
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
    let Robot {
        drivetrain,
        arm,
        position,
        angle,
        button,
    } = robot(&scheduler, &server);
    let mut telemetry = SchedulerTelemetry::new(&scheduler);
    telemetry
        .serve(&server)
        .log(&log)
        .mechanism(&drivetrain)
        .mechanism(&arm)
        .trigger("button", &button);
    let started = Instant::now();
    let mut next = started;
    let mut frame = 0u64;
    loop {
        if args.script {
            // Press for a second every ten seconds, as a driver would.
            let pressed = frame % 500 >= 400 && frame % 500 < 450;
            server.set(BUTTON, Value::Boolean(pressed));
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

/// The mechanisms, their simulated state, and the button trigger.
struct Robot {
    drivetrain: Mechanism,
    arm: Mechanism,
    position: Rc<Cell<f64>>,
    angle: Rc<Cell<f64>>,
    button: Trigger,
}

/// Builds the robot's commands and bindings, and schedules autonomous.
fn robot(scheduler: &CommandScheduler, server: &Nt4Server) -> Robot {
    let drivetrain = Mechanism::new(scheduler, "drivetrain");
    let arm = Mechanism::new(scheduler, "arm");
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
            .named("teleop")
    };
    drivetrain
        .set_default_command(&teleop)
        .expect("teleop drives the drivetrain");
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
    arm.set_default_command(&stow)
        .expect("the arm stows by default");
    let score = compose::sequence([
        &move_arm(120.0, "raise to score", 10),
        &move_arm(0.0, "stow after score", 10),
    ])
    .expect("a sequence of two")
    .named("score");
    let input = server.clone();
    let button = Trigger::new(scheduler, move || {
        input.get(BUTTON).and_then(|v| v.as_bool()).unwrap_or(false)
    });
    button.on_true(&score);
    scheduler.schedule(&autonomous);
    Robot {
        drivetrain,
        arm,
        position,
        angle,
        button,
    }
}
