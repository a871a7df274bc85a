//! The smallest robot: one mechanism, one command, a trigger on a dashboard button, and the NT4
//! server that shows them to `WPILib`'s tools (docs/nt4.md). `robot.rs` is the fuller one.
//!
//! ```text
//! cargo run -p tickstep-nt4 --example first_robot          # NT4 on port 5810; Ctrl-C stops it
//! ```
//!
//! Connect `AdvantageScope`, Elastic or Shuffleboard to 127.0.0.1 and publish the boolean
//! `/tickstep/input/button`: while it is true the command `raise` owns the arm; otherwise the
//! arm's default command holds it. `/tickstep/mechanisms/arm` names the owner. Dependencies:
//! `tickstep-nt4`, `tickstep-commands` and `tickstep-kernel`. The crate's test
//! `tests/first_robot.rs` drives the same robot from `WPILib`'s pyntcore.

use std::time::Duration;

use tickstep_commands::{CommandScheduler, Mechanism, Trigger};
use tickstep_kernel::clock::SystemClock;
use tickstep_nt4::{Limits, Nt4Server, SchedulerTelemetry};

/// The topic a dashboard publishes the button on.
pub const BUTTON: &str = "/tickstep/input/button";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Nt4Server::start(([0, 0, 0, 0], 5810).into(), Limits::default())?;
    println!("NT4 on port {}", server.local_addr().port());
    let scheduler = CommandScheduler::new(SystemClock::new());
    let mut telemetry = robot(&scheduler, &server);
    loop {
        // One robot cycle: poll the triggers, run the commands, then publish what changed.
        scheduler.run()?;
        telemetry.publish();
        std::thread::sleep(Duration::from_millis(20)); // 50 cycles a second, as a robot runs
    }
}

/// Builds the robot on `scheduler` and returns its telemetry, serving on `server`.
///
/// # Panics
///
/// Never: the arm's default command requires the arm alone, as a default command must.
pub fn robot(scheduler: &CommandScheduler, server: &Nt4Server) -> SchedulerTelemetry {
    // A mechanism is owned by one command at a time; its default command runs when no other does.
    let arm = Mechanism::new(scheduler, "arm");
    arm.set_default_command(&arm.idle())
        .expect("the arm's own command");
    // A command: a coroutine that owns the arm while it runs.
    let raise = arm
        .run(|co| async move {
            loop {
                co.yield_now().await; // drive the motor up here, once per cycle
            }
        })
        .named("raise");
    // A trigger reads the button as the dashboard last published it; `raise` runs while it is true.
    let input = server.clone();
    let button = Trigger::new(scheduler, move || {
        input.get(BUTTON).and_then(|v| v.as_bool()).unwrap_or(false)
    });
    button.while_true(&raise);
    // The scheduler, the arm's owner and the button, published under /tickstep/.
    let mut telemetry = SchedulerTelemetry::new(scheduler);
    telemetry
        .serve(server)
        .mechanism(&arm)
        .trigger("button", &button);
    telemetry
}
