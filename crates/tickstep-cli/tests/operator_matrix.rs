//! The operator matrix (issue 31; docs/runtime.md §7.13): every operator command beside every
//! host that holds a store, on both stores, with real processes. A cell is one host on one store;
//! one generic body, [`cell`], runs the table [`LIFETIMES`] against it. Each command is given while
//! the host runs, and its effect is checked where the host shows it; each lifetime ends with a clean
//! stop (exit status 0, nothing reported lost) and a restart on the same store, which must find
//! every schedule as the commands left it — its pause and note, its counters — and, at the end, the
//! control schedule's every firing accounted for (serve: every line of the offline mailbox; the
//! program: every run of its verb). On a `SQLite` store the host's `-wal` and `-shm` must stay the
//! same files while it runs, compared by `stat` alone: the test never opens a file `SQLite` owns
//! (docs/serve.md §12.7).
//!
//! Bounded: every wait has a deadline; the assertions are about what the hosts showed and what the
//! store holds, never about how long anything took. Unix only: hosts are stopped by signals.
#![cfg(unix)]

mod common;
mod dashboard_process;
#[path = "operator_matrix/hosts.rs"]
mod hosts;
#[path = "../../tickstep/tests/http_client/mod.rs"]
mod http_client;
#[path = "operator_matrix/program.rs"]
mod program;
mod run;
mod serve_client;

use hosts::{Host, Place, Running, Store};

/// An operator's way in. Each acts on a schedule of its own ([`hosts::Targets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    /// `tickstep schedules --db … ACTION ID` (docs/runtime.md §7.9).
    Cli,
    /// A `POST` to the dashboard's action (docs/serve.md §13.8): the host's own (serve `--http`,
    /// the program's), the host itself (`tickstep dashboard`), or a `tickstep dashboard` beside a
    /// host that has none (the demo; docs/serve.md §13.13).
    Dashboard,
}

/// An operator command.
#[derive(Clone, Copy, Debug)]
enum Act {
    Pause,
    Trigger,
    Backfill,
    Resume,
    Stop,
}

impl Act {
    /// Its word, on the command line and in the dashboard's route.
    fn word(self) -> &'static str {
        match self {
            Act::Pause => "pause",
            Act::Trigger => "trigger",
            Act::Backfill => "backfill",
            Act::Resume => "resume",
            Act::Stop => "stop",
        }
    }
}

const BOTH: &[Via] = &[Via::Cli, Via::Dashboard];
/// A dashboard has no backfill action (docs/serve.md §13.8): it is the command-line tool's alone.
const CLI: &[Via] = &[Via::Cli];

/// The commands of each lifetime of a host, in order, each by the operators listed; a lifetime
/// ends with a clean stop and a restart on the same store. Trigger and backfill act on a paused
/// schedule, so every firing they add is counted exactly; the restart after the first lifetime
/// finds the pauses, the second finds the stopped schedules gone.
const LIFETIMES: [&[(Act, &[Via])]; 2] = [
    &[
        (Act::Pause, BOTH),
        (Act::Trigger, BOTH),
        (Act::Backfill, CLI),
    ],
    &[(Act::Resume, BOTH), (Act::Stop, BOTH)],
];

/// The note each operator's pause carries.
fn note(via: Via) -> &'static str {
    match via {
        Via::Cli => "matrix-cli",
        Via::Dashboard => "matrix-dashboard",
    }
}

#[test]
fn serve_on_sqlite() {
    cell(Host::Serve, Store::Sqlite);
}

#[test]
fn serve_on_postgres() {
    cell(Host::Serve, Store::Postgres);
}

#[test]
fn demo_on_sqlite() {
    cell(Host::Demo, Store::Sqlite);
}

#[test]
fn demo_on_postgres() {
    cell(Host::Demo, Store::Postgres);
}

#[test]
fn runtime_program_on_sqlite() {
    cell(Host::Program, Store::Sqlite);
}

#[test]
fn runtime_program_on_postgres() {
    cell(Host::Program, Store::Postgres);
}

#[test]
fn dashboard_on_sqlite() {
    cell(Host::Dashboard, Store::Sqlite);
}

#[test]
fn dashboard_on_postgres() {
    cell(Host::Dashboard, Store::Postgres);
}

/// The `Runtime` program's process: this test binary, re-executed by a cell. A no-op otherwise.
#[test]
fn runtime_program_process_entry() {
    program::entry();
}

/// What the matrix expects of a schedule an operator acts on, as the commands leave it.
#[derive(Clone, Copy, Debug)]
struct Expected {
    live: bool,
    /// The note of its pause, while paused.
    paused: Option<&'static str>,
    /// How many times it has fired, known exactly while it is paused (nothing else fires it).
    runs: Option<u64>,
    /// A trigger or backfill given to a store that no engine runs waits there.
    trigger_pending: bool,
    backfill_pending: bool,
}

impl Expected {
    const LIVE: Expected = Expected {
        live: true,
        paused: None,
        runs: None,
        trigger_pending: false,
        backfill_pending: false,
    };
}

/// One cell of the matrix: `host` on a fresh `store`, every command of [`LIFETIMES`].
fn cell(host: Host, store: Store) {
    let Some(place) = Place::new(store, &format!("matrix_{host:?}")) else {
        return;
    };
    let mut running = Running::start(host, &place, None);
    let targets = running.targets();
    let mut expected = [Expected::LIVE; 2];
    for (lifetime, commands) in LIFETIMES.iter().enumerate() {
        for &(act, vias) in *commands {
            let mut points = 0;
            for &via in vias {
                points = operate(&mut running, &place, act, via, targets.of(via));
                running.check_files(&format!("{via:?}'s {}", act.word()));
            }
            for &via in vias {
                awaited(
                    &mut running,
                    act,
                    targets.of(via),
                    &expected[via as usize],
                    points,
                );
            }
            if matches!(act, Act::Pause | Act::Trigger | Act::Backfill) {
                running.settle();
            }
            for &via in vias {
                let id = targets.of(via);
                confirmed(
                    &mut running,
                    act,
                    via,
                    id,
                    &mut expected[via as usize],
                    points,
                );
            }
        }
        running.keeps_working();
        let last = lifetime + 1 == LIFETIMES.len();
        if last {
            // Nothing fires it in the last lifetime, so its firings can be counted exactly.
            running.hold_control();
        }
        let control = running.control_runs();
        let carried = running.stop_cleanly();
        running = Running::start(host, &place, Some(carried));
        for via in [Via::Cli, Via::Dashboard] {
            restored(&mut running, targets.of(via), &expected[via as usize]);
        }
        if let (Some(before), Some(after)) = (control, running.control_runs()) {
            assert!(
                after >= before,
                "the control's runs went {before} -> {after}"
            );
        }
    }
    running.account_control();
    running.stop_cleanly();
}

/// Gives `act` on schedule `id` by `via`, while the host runs; for a backfill, how many past
/// points it will fire.
fn operate(running: &mut Running, place: &Place, act: Act, via: Via, id: u64) -> u64 {
    let id_text = id.to_string();
    match via {
        Via::Cli => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            // The last few seconds hold a point of every cadence the hosts use (1 s, 2 s).
            let (from, to) = ((now - 5).to_string(), (now - 1).to_string());
            // In the host's namespace, as an operator of one application of a shared store
            // would act (docs/schedules.md §15.5).
            let namespace = running.host().namespace();
            let mut args = vec![
                "schedules",
                "--db",
                place.arg(),
                "--namespace",
                &namespace,
                act.word(),
                &id_text,
            ];
            match act {
                Act::Pause => args.extend(["--note", note(via)]),
                Act::Backfill => args.extend([from.as_str(), to.as_str()]),
                _ => {}
            }
            let out = run::tickstep(&args);
            let said = run::stdout(&out);
            assert!(out.status.success(), "{args:?}: {}", run::stderr(&out));
            if let Act::Backfill = act {
                // `backfill: schedule N fires K past points, one per tick`
                let points = said
                    .split_once(" fires ")
                    .and_then(|(_, rest)| rest.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("no count of points in {said:?}"));
                assert!(points > 0, "{said}");
                return points;
            }
            assert!(said.contains(&format!("schedule {id}")), "{args:?}: {said}");
            0
        }
        Via::Dashboard => {
            let body = match act {
                Act::Pause => format!("token={}&note={}", hosts::TOKEN, note(via)),
                _ => format!("token={}", hosts::TOKEN),
            };
            let path = format!("/dashboard/schedules/{id}/{}", act.word());
            let answer = http_client::post(running.dashboard(), &path, http_client::FORM, &body);
            assert_eq!(answer.status, 303, "{path}: {}", answer.body);
            0
        }
    }
}

/// Waits until the host shows what `act` did to `id`.
fn awaited(running: &mut Running, act: Act, id: u64, expected: &Expected, points: u64) {
    let fires = running.fires();
    match act {
        Act::Pause => running.wait_for(id, "paused", |s| s.paused),
        Act::Trigger if fires => {
            let runs = expected.runs.expect("paused") + 1;
            running.wait_for(id, "fired once more", |s| s.runs >= runs);
        }
        Act::Trigger => running.wait_for(id, "a trigger waiting", |s| s.trigger_pending),
        Act::Backfill if fires => {
            let runs = expected.runs.expect("paused") + points;
            running.wait_for(id, "fired the past points", |s| s.runs >= runs);
        }
        Act::Backfill => running.wait_for(id, "a backfill waiting", |s| s.backfill),
        Act::Resume => {
            running.wait_for(id, "resumed", |s| !s.paused);
            if fires {
                // Firing again on its cadence: two more, so not only a catch-up's.
                let runs = running.shown(id).expect("live").runs + 2;
                running.wait_for(id, "firing again", |s| s.runs >= runs);
            }
        }
        Act::Stop => running.wait_gone(id),
    }
}

/// After the host settled: `act`'s effect on `id` is exactly what it should be (a paused
/// schedule fired no more than the commands asked), and `expected` follows it.
fn confirmed(
    running: &mut Running,
    act: Act,
    via: Via,
    id: u64,
    expected: &mut Expected,
    points: u64,
) {
    let fires = running.fires();
    let shown = running.shown(id);
    match act {
        Act::Pause => {
            let shown = shown.expect("a paused schedule is live");
            assert!(shown.paused && shown.note.contains(note(via)), "{shown:?}");
            expected.paused = Some(note(via));
            expected.runs = Some(shown.runs);
        }
        Act::Trigger | Act::Backfill => {
            let added = if let Act::Trigger = act { 1 } else { points };
            if fires {
                expected.runs = expected.runs.map(|runs| runs + added);
            } else if let Act::Trigger = act {
                expected.trigger_pending = true;
            } else {
                expected.backfill_pending = true;
            }
            let shown = shown.expect("live");
            assert_eq!(
                shown.runs,
                expected.runs.expect("paused"),
                "#{id}: a paused schedule fired only what {act:?} asked ({shown:?})"
            );
        }
        Act::Resume => {
            expected.paused = None;
            expected.runs = None;
        }
        Act::Stop => {
            assert!(shown.is_none(), "#{id} is gone");
            expected.live = false;
        }
    }
}

/// After a restart: `id` is as the commands left it.
fn restored(running: &mut Running, id: u64, expected: &Expected) {
    let shown = running.shown(id);
    if !expected.live {
        assert!(
            shown.is_none(),
            "#{id} was stopped, yet the restart shows {shown:?}"
        );
        return;
    }
    let shown = shown.unwrap_or_else(|| panic!("#{id} is gone after the restart"));
    assert_eq!(shown.faults, 0, "#{id}: {shown:?}");
    assert_eq!(shown.paused, expected.paused.is_some(), "#{id}: {shown:?}");
    if let Some(note) = expected.paused {
        assert!(shown.note.contains(note), "#{id}: {shown:?}");
    }
    if let Some(runs) = expected.runs {
        assert_eq!(
            shown.runs, runs,
            "#{id}: its counters came back ({shown:?})"
        );
    }
    assert_eq!(
        (shown.trigger_pending, shown.backfill),
        (expected.trigger_pending, expected.backfill_pending),
        "#{id}: {shown:?}"
    );
}
