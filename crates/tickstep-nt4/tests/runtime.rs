//! A tickstep `Runtime` feeds the telemetry by itself (docs/nt4.md §5.6): attached once, it
//! publishes the kernel's numbers and the durable schedules' counts after every command cycle,
//! and `WPILib`'s own client (pyntcore) reads them. The runtime runs on a `ManualClock`; only the
//! waits for the other process are real time, bounded, and nothing asserts a duration.

mod common;

use std::time::Duration;

use serde_json::json;
use tickstep::Runtime;
use tickstep::commands::Mechanism;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{ObjId, Options, Value as Scalar};
use tickstep_nt4::{Limits, Nt4Server, SchedulerTelemetry, Value, topics};

use common::{WAIT, topic_is};

#[test]
fn a_runtime_publishes_its_kernel_and_schedules_without_host_code() {
    let Some(python) = common::python_with("ntcore, google.protobuf") else {
        return;
    };
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .frame_rate(50)
        .in_memory_store()
        .build()
        .unwrap();
    // Two durable schedules: a patrol that runs for a minute every 10 s, a bell every 5 s.
    rt.async_verb("patrol", |call| async move {
        call.sleep(Duration::from_secs(60)).await;
        Ok(Scalar::Int(0))
    });
    rt.verb("ring", |_call| Ok(Scalar::Int(0)));
    let mut txn = rt.schedules().begin(ObjId(1));
    txn.schedule_every(ObjId(7), "patrol", 10.0, vec![], Options::new())
        .unwrap();
    txn.schedule_every(ObjId(8), "ring", 5.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    let arm = Mechanism::new(rt.commands(), "arm");
    let hold = arm
        .run(|co| async move {
            co.park().await;
        })
        .named("hold");
    rt.commands().schedule(&hold);

    let mut telemetry = SchedulerTelemetry::new(rt.commands());
    telemetry.serve(&server).mechanism(&arm);
    telemetry.attach(&rt);

    let mut client = common::Script::start(
        &python,
        "nt_client.py",
        &[server.local_addr().port().to_string()],
    );
    client.wait_for(WAIT, "a connection", |v| v["event"] == "connected");

    // 17 s of virtual time: the patrol started at 10 s and runs; the bell rang (at 5, 10 and
    // 15 s) and finished. (The last cycle is not in a frame where the bell rings: a firing
    // counts as running in the cycle of the frame it started in, as it is.)
    rt.run_for(Duration::from_secs(17)).unwrap();
    let stats = rt.stats();
    assert_eq!(stats.schedules_live, 2);
    assert_eq!(rt.running_firings().len(), 1);
    client.wait_for(
        WAIT,
        "two live schedules",
        topic_is(topics::SCHEDULES_LIVE, json!(2)),
    );
    client.wait_for(
        WAIT,
        "one running firing",
        topic_is(topics::SCHEDULES_RUNNING, json!(1)),
    );
    client.wait_for(
        WAIT,
        "the arm's owner",
        topic_is("/tickstep/mechanisms/arm", json!("hold")),
    );
    let budget = client.wait_for(WAIT, "the kernel's budget", |v| {
        v["topic"] == topics::KERNEL_BUDGET_MS
    });
    assert_eq!(
        budget["value"].as_f64(),
        Some(stats.kernel.last_budget.as_secs_f64() * 1e3),
        "the budget the client read is the kernel's"
    );
    assert!(budget["value"].as_f64().unwrap() > 0.0);
    let pending = client.wait_for(WAIT, "the kernel's queues", |v| {
        v["topic"] == topics::KERNEL_PENDING
    });
    assert_eq!(pending["type"], "int[]");
    assert_eq!(
        pending["value"].as_array().map(Vec::len),
        Some(5),
        "one count per priority"
    );
    client.wait_for(WAIT, "the kernel's deferrals", |v| {
        v["topic"] == topics::KERNEL_DEFERRED
    });
    client.wait_for(WAIT, "the kernel's step time", |v| {
        v["topic"] == topics::KERNEL_STEP_MS
    });
    let cycles = i64::try_from(stats.command_cycles).unwrap();
    assert_eq!(
        server.get(topics::CYCLE),
        Some(Value::Int(cycles)),
        "published after every cycle"
    );

    // A minute on, the first patrol has ended; a later one may be running: the counts follow.
    rt.run_for(Duration::from_secs(56)).unwrap();
    let running = i64::try_from(rt.running_firings().len()).unwrap();
    assert_eq!(
        server.get(topics::SCHEDULES_RUNNING),
        Some(Value::Int(running))
    );
    rt.commands().cancel(&hold);
    rt.run_for(Duration::from_millis(40)).unwrap();
    client.wait_for(
        WAIT,
        "the arm released",
        topic_is("/tickstep/mechanisms/arm", json!("")),
    );
}
