//! `WPILib`'s own `NetworkTables` client (pyntcore) reads tickstep's scheduler topics and publishes
//! a trigger input and the robot's enabled state (docs/nt4.md §5, §7.1). The robot side runs on a `ManualClock`; only the
//! waits for the other process are real time, bounded, and nothing asserts a duration.

// A scenario reads top to bottom, as the robot lived it.
#![allow(clippy::too_many_lines)]

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;
use tickstep_commands::{
    Command, CommandScheduler, Mechanism, RobotState, ScheduleResult, Trigger,
};
use tickstep_kernel::clock::ManualClock;
use tickstep_nt4::{Limits, Nt4Server, SchedulerTelemetry, Value, topics};

use common::{WAIT, topic_is};

#[test]
fn pyntcore_sees_a_command_start_be_interrupted_and_a_mechanism_change_hands() {
    let Some(python) = common::python_with("ntcore, google.protobuf") else {
        return;
    };
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    let clock = ManualClock::new();
    let scheduler = CommandScheduler::new(clock.clone());
    let arm = Mechanism::new(&scheduler, "arm");
    let raise = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(1)
        .named("raise");
    let hold = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(5)
        .named("hold");
    let intake = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named("intake");
    let input = server.clone();
    let button = Trigger::new(&scheduler, move || {
        input
            .get("/tickstep/input/button")
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    });
    button.on_true(&intake);
    let events = Rc::new(RefCell::new(Vec::new()));
    let log = events.clone();
    scheduler.on_lifecycle_event(move |e| log.borrow_mut().push(e.to_string()));
    let mut telemetry = SchedulerTelemetry::new(&scheduler);
    telemetry
        .serve(&server)
        .mechanism(&arm)
        .trigger("button", &button);
    let frame = |telemetry: &mut SchedulerTelemetry| {
        scheduler.run().unwrap();
        telemetry.publish();
        clock.advance(Duration::from_millis(20));
    };

    let mut nt = common::Script::start(
        &python,
        "nt_client.py",
        &[server.local_addr().port().to_string()],
    );
    nt.wait_for(WAIT, "a connection", |v| v["event"] == "connected");
    // The server's $clients (docs/nt4.md §2.5), read by WPILib's client, names it.
    let name = hex(b"tickstep-test");
    let clients = nt.wait_for(WAIT, "$clients naming the client", |v| {
        v["topic"] == "$clients" && v["value"].as_str().is_some_and(|h| h.contains(&name))
    });
    assert_eq!(clients["type"], "msgpack");

    // A command starts and takes the arm.
    scheduler.schedule(&raise);
    frame(&mut telemetry);
    assert_eq!(scheduler.running()[0].name, "raise");
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

    // A higher priority interrupts it: the arm changes hands.
    scheduler.schedule(&hold);
    frame(&mut telemetry);
    assert!(
        events
            .borrow()
            .contains(&"Interrupted raise by hold".to_owned()),
        "{:?}",
        events.borrow()
    );
    nt.wait_for(
        WAIT,
        "the arm owned by hold",
        topic_is("/tickstep/mechanisms/arm", json!("hold")),
    );
    nt.wait_for(
        WAIT,
        "hold running alone",
        topic_is(topics::RUNNING, json!(["hold"])),
    );

    // The scheduler protobuf, decoded by Python's protobuf with the schema from /.schema/,
    // matches the scheduler's own telemetry in the same run.
    let want = scheduler.telemetry().running[0].clone();
    let seen = nt.wait_for(WAIT, "the scheduler message with hold", |v| {
        v["topic"] == topics::SCHEDULER && v["decoded"]["running_commands"][0]["name"] == "hold"
    });
    let cmd = &seen["decoded"]["running_commands"][0];
    assert_eq!(cmd["id"], json!(want.id.get()));
    assert_eq!(cmd["priority"], json!(5));
    assert_eq!(cmd["requirements"], json!([{"name": "arm"}]));
    assert!(
        cmd.get("parent_id").is_none(),
        "a top-level command has no parent: {cmd}"
    );
    assert!(seen["decoded"].get("queued_commands").is_none());
    let Some(Value::Raw(bytes, type_str)) = server.get(topics::SCHEDULER) else {
        panic!("no scheduler topic")
    };
    assert_eq!(type_str, "proto:wpi.proto.ProtobufScheduler");
    assert_eq!(seen["value"], json!(hex(&bytes)));

    // The client publishes a button; the robot reads it as a trigger and starts intake.
    nt.send("set /tickstep/input/button true");
    nt.wait_for(WAIT, "its publication", |v| v["event"] == "published");
    let mut frames = 0;
    while !scheduler.is_running(&intake) {
        assert!(
            frames < 1_500,
            "the button never reached the robot ({frames} frames)"
        );
        frame(&mut telemetry);
        frames += 1;
        // Pace the frames by the other process, not by a sleep: wait briefly for its output.
        nt.pump(Duration::from_millis(20));
    }
    nt.wait_for(
        WAIT,
        "the trigger state",
        topic_is("/tickstep/triggers/button", json!(true)),
    );
    nt.wait_for(
        WAIT,
        "intake running beside hold",
        topic_is(topics::RUNNING, json!(["hold", "intake"])),
    );
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The field's word, as a host reads it: enabled while a dashboard (here pyntcore, standing in
/// for the driver station) publishes `/tickstep/input/enabled` true (docs/commands.md §12.1).
struct Field(Nt4Server);

impl RobotState for Field {
    fn is_enabled(&self) -> bool {
        self.0
            .get(ENABLED)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }
}

const ENABLED: &str = "/tickstep/input/enabled";

#[test]
fn pyntcore_sees_a_disabled_robots_motor_command_canceled_within_one_cycle() {
    let Some(python) = common::python_with("ntcore, google.protobuf") else {
        return;
    };
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    let clock = ManualClock::new();
    let scheduler = CommandScheduler::new(clock.clone());
    scheduler.set_robot_state(Field(server.clone()));
    let arm = Mechanism::new(&scheduler, "arm");
    let raise = arm
        .run(|co| async move {
            co.park().await;
        })
        .named("raise");
    let events = Rc::new(RefCell::new(Vec::new()));
    let log = events.clone();
    scheduler.on_lifecycle_event(move |e| log.borrow_mut().push(e.to_string()));
    let mut telemetry = SchedulerTelemetry::new(&scheduler);
    telemetry.serve(&server).mechanism(&arm);
    let frame = |telemetry: &mut SchedulerTelemetry| {
        scheduler.run().unwrap();
        telemetry.publish();
        clock.advance(Duration::from_millis(20));
    };
    frame(&mut telemetry);

    let mut nt = common::Script::start(
        &python,
        "nt_client.py",
        &[server.local_addr().port().to_string()],
    );
    nt.wait_for(WAIT, "a connection", |v| v["event"] == "connected");
    nt.wait_for(
        WAIT,
        "a disabled robot",
        topic_is(topics::ROBOT_ENABLED, json!(false)),
    );
    // Disabled: the motor command is refused.
    assert!(matches!(
        scheduler.schedule(&raise),
        ScheduleResult::RobotDisabled { .. }
    ));

    // The driver station enables the robot; the robot reads it at the start of a frame.
    nt.send(&format!("set {ENABLED} true"));
    nt.wait_for(WAIT, "its publication", |v| v["event"] == "published");
    let mut frames = 0;
    while !scheduler.is_enabled() {
        assert!(frames < 1_500, "the enable never reached the robot");
        frame(&mut telemetry);
        frames += 1;
        nt.pump(Duration::from_millis(20));
    }
    assert_eq!(scheduler.schedule(&raise), ScheduleResult::Success);
    frame(&mut telemetry);
    nt.wait_for(
        WAIT,
        "the arm driven by raise",
        topic_is("/tickstep/mechanisms/arm", json!("raise")),
    );
    nt.wait_for(
        WAIT,
        "an enabled robot",
        topic_is(topics::ROBOT_ENABLED, json!(true)),
    );

    // The driver station disables it. Frames run until one starts disabled; raise runs in every
    // frame before that one and in none after.
    nt.send(&format!("set {ENABLED} false"));
    let mut frames = 0;
    let disabled_cycle = loop {
        assert!(frames < 1_500, "the disable never reached the robot");
        assert!(scheduler.is_running(&raise), "raise ran until the disable");
        events.borrow_mut().clear();
        frame(&mut telemetry);
        frames += 1;
        if !events.borrow().is_empty() {
            break scheduler.telemetry().cycle;
        }
        nt.pump(Duration::from_millis(20));
    };
    assert!(!scheduler.is_running(&raise));
    assert_eq!(
        *events.borrow(),
        ["Disabled raise (requires arm)", "Canceled raise"],
        "canceled in the first disabled cycle, before it ran"
    );

    // No frame runs after that one, so what pyntcore ends up seeing is that cycle's telemetry:
    // the robot disabled and the arm free in the same cycle.
    let end = std::time::Instant::now() + WAIT;
    loop {
        let settled = nt.latest(topics::CYCLE) == Some(&json!(disabled_cycle))
            && nt.latest(topics::ROBOT_ENABLED) == Some(&json!(false))
            && nt.latest("/tickstep/mechanisms/arm") == Some(&json!(""))
            && nt.latest(topics::RUNNING) == Some(&json!([]));
        if settled {
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "pyntcore never saw cycle {disabled_cycle} with the robot disabled and the arm free: {:?} {:?} {:?}",
            nt.latest(topics::CYCLE),
            nt.latest(topics::ROBOT_ENABLED),
            nt.latest("/tickstep/mechanisms/arm"),
        );
        nt.pump(Duration::from_millis(20));
    }
}
