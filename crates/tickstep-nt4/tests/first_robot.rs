//! The `first_robot` example's robot, driven from `WPILib`'s own `NetworkTables` client
//! (pyntcore): it reads the arm's owner and the running commands, presses the button, sees
//! `raise` take the arm, releases it and sees the arm's default command take it back
//! (docs/nt4.md §5, §7.1). The robot runs on a `ManualClock`; only the waits for the other
//! process are real time, bounded, and nothing asserts a duration.

mod common;
#[allow(dead_code, unreachable_pub)]
#[path = "../examples/first_robot.rs"]
mod first_robot;

use std::time::Duration;

use serde_json::json;
use tickstep_commands::CommandScheduler;
use tickstep_kernel::clock::ManualClock;
use tickstep_nt4::{Limits, Nt4Server, SchedulerTelemetry, topics};

use common::{Script, WAIT, topic_is};

/// Runs robot cycles, paced by the client's output rather than a sleep, until `done` holds
/// (at most 1,500 cycles).
fn cycle_until(
    scheduler: &CommandScheduler,
    clock: &ManualClock,
    telemetry: &mut SchedulerTelemetry,
    nt: &mut Script,
    what: &str,
    done: impl Fn(&CommandScheduler) -> bool,
) {
    for _ in 0..1_500 {
        scheduler.run().unwrap();
        telemetry.publish();
        clock.advance(Duration::from_millis(20));
        if done(scheduler) {
            return;
        }
        nt.pump(Duration::from_millis(20));
    }
    panic!("never: {what}");
}

fn runs(scheduler: &CommandScheduler, name: &str) -> bool {
    scheduler.running().iter().any(|c| c.name == name)
}

#[test]
fn pyntcore_presses_the_first_robots_button_and_sees_raise_take_the_arm_and_give_it_back() {
    let Some(python) = common::python_with("ntcore, google.protobuf") else {
        return;
    };
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    let clock = ManualClock::new();
    let scheduler = CommandScheduler::new(clock.clone());
    let mut telemetry = first_robot::robot(&scheduler, &server);
    let mut nt = Script::start(
        &python,
        "nt_client.py",
        &[server.local_addr().port().to_string()],
    );
    nt.wait_for(WAIT, "a connection", |v| v["event"] == "connected");

    cycle_until(
        &scheduler,
        &clock,
        &mut telemetry,
        &mut nt,
        "the default command",
        |s| runs(s, "arm idle"),
    );
    nt.wait_for(
        WAIT,
        "the arm held by its default command",
        topic_is("/tickstep/mechanisms/arm", json!("arm idle")),
    );

    nt.send(&format!("set {} true", first_robot::BUTTON));
    nt.wait_for(WAIT, "its publication", |v| v["event"] == "published");
    cycle_until(
        &scheduler,
        &clock,
        &mut telemetry,
        &mut nt,
        "raise runs",
        |s| runs(s, "raise"),
    );
    nt.wait_for(
        WAIT,
        "the button pressed",
        topic_is("/tickstep/triggers/button", json!(true)),
    );
    nt.wait_for(
        WAIT,
        "the arm owned by raise",
        topic_is("/tickstep/mechanisms/arm", json!("raise")),
    );
    nt.wait_for(
        WAIT,
        "raise running",
        topic_is(topics::RUNNING, json!(["raise"])),
    );

    // Only what the client reports from here on: the lines before `raise` are set aside.
    nt.seen.clear();
    nt.send(&format!("set {} false", first_robot::BUTTON));
    cycle_until(
        &scheduler,
        &clock,
        &mut telemetry,
        &mut nt,
        "raise canceled",
        |s| !runs(s, "raise"),
    );
    nt.wait_for(
        WAIT,
        "the arm back with its default command",
        topic_is("/tickstep/mechanisms/arm", json!("arm idle")),
    );
}
