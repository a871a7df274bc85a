//! The reference suite's `SchedulerTelemetryTests`, ported (behaviour, not text). The reference
//! packs the scheduler into a protobuf message; tickstep has no protobuf schema, so the port checks
//! the same content in the [`Telemetry`](tickstep_commands::Telemetry) snapshot a host would
//! serialize.

mod common;

use common::*;
use tickstep_commands::{Command, CommandInfo, Mechanism};

fn awaiting_on(mech: &Mechanism, name: &str, inner: &Command) -> Command {
    let inner = inner.clone();
    mech.run(move |co| {
        let inner = inner.clone();
        async move {
            let _ = co.await_cmd(&inner).await;
        }
    })
    .named(name)
}

#[test]
fn protobuf() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let park = parked_on(&mech, "Park", 0);
    let c3 = awaiting_on(&mech, "C3", &park);
    let c2 = awaiting_on(&mech, "C2", &c3);
    let group = awaiting_on(&mech, "Group", &c2);
    scheduler.schedule(&group);
    cycles(&clock, &scheduler, 1);
    let (one, two) = (parked("Command 1"), parked("Command 2"));
    scheduler.schedule(&one);
    scheduler.schedule(&two);

    let t = scheduler.telemetry();
    assert_eq!(t.last_run_time, scheduler.telemetry().last_run_time);
    assert_eq!(t.queued.len(), 2);
    assert_eq!(t.running.len(), 4);
    let check = |info: &CommandInfo, cmd: &Command, parent: Option<&CommandInfo>, reqs: &[&str]| {
        assert_eq!(info.command, *cmd);
        assert_eq!(info.name, cmd.name());
        assert_eq!(info.priority, cmd.priority());
        assert_eq!(info.requirements, reqs);
        assert_eq!(info.parent, parent.map(|p| p.id), "{} parent", info.name);
    };
    check(&t.queued[0], &one, None, &[]);
    check(&t.queued[1], &two, None, &[]);
    check(&t.running[0], &group, None, &["The mechanism"]);
    check(&t.running[1], &c2, Some(&t.running[0]), &["The mechanism"]);
    check(&t.running[2], &c3, Some(&t.running[1]), &["The mechanism"]);
    check(
        &t.running[3],
        &park,
        Some(&t.running[2]),
        &["The mechanism"],
    );
    // Run times exist for running commands (zero on a virtual clock that did not move).
    assert!(
        t.running
            .iter()
            .all(|i| i.total_run_time >= i.last_run_time)
    );
    assert!(t.queued.iter().all(|i| i.total_run_time.is_zero()));
}
