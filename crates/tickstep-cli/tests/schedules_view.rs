//! What an operator is shown of a store, by the real `tickstep` binary: one store whose schedules
//! are active, running, failing and paused (an interval one, and a one-shot whose time has
//! passed), plus a calendar one, read by `tickstep schedules list | info | next | history` and by
//! `tickstep dashboard` over real HTTP. Every reader says the same state (docs/schedules.md
//! §9.13), a paused schedule has no next run (docs/schedules.md §9.4) — no `due`, no past time,
//! no `in due` — values are plain JSON, never the store's type tags (docs/runtime.md §7.10),
//! times read as dates with how far they are from now, and the dashboard filters by every kind
//! and every state (docs/serve.md §13.2).

mod dashboard_process;
#[path = "../../tickstep/tests/http_client/mod.rs"]
mod http_client;
mod run;
mod serve_client;

use std::path::Path;
use std::time::Duration;

use dashboard_process::Dashboard;
use http_client::get;
use run::{stderr, stdout, tickstep};
use tickstep::kernel::clock::{Clock, ManualClock, SystemClock};
use tickstep::schedules::testkit::{TestRunner, TestWorld};
use tickstep::schedules::{
    Config, FaultKind, ObjId, Options, Outcome, ScheduleId, Schedules, Value,
};

/// The store's schedules, by what each is doing.
struct Fleet {
    /// The engine that wrote them, still open: its running firing stays running.
    _engine: Schedules,
    wiz: ObjId,
    active: u64,
    running: u64,
    failing: u64,
    paused: u64,
    paused_once: u64,
    cron: u64,
}

/// An engine on the store at `path` with a wizard whose verb `beat` the runner starts.
fn beat_engine(path: &Path, clock: &ManualClock) -> (Schedules, TestRunner, ObjId) {
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "beat");
    let runner = TestRunner::new();
    let engine = Schedules::open(
        path,
        clock.clone(),
        world,
        runner.clone(),
        Config::default(),
    )
    .unwrap();
    (engine, runner, wiz)
}

/// Writes the fleet into `path`: every schedule hourly from 90 minutes ago, fired once half an
/// hour ago (one returned, one faulted `"boom"`, one still running), one paused before it could
/// fire, a one-shot paused past its time, and a calendar schedule that has not fired.
fn fleet(path: &Path) -> Fleet {
    let hour = Duration::from_secs(3600);
    let wall = SystemClock::new().unix_nanos();
    let clock = ManualClock::starting_at_unix_nanos(wall - 5_400_000_000_000);
    let (engine, runner, wiz) = beat_engine(path, &clock);
    let every = |key: &str| {
        let mut txn = engine.begin(wiz);
        let options = Options::new().key(key);
        let id = txn
            .schedule_every(wiz, "beat", 3600.0, vec![], options)
            .unwrap();
        txn.commit().unwrap();
        id
    };
    let (active, running, failing, paused) = (
        every("active"),
        every("running"),
        every("failing"),
        every("paused"),
    );
    let paused_once = {
        let mut txn = engine.begin(wiz);
        let at = engine.now_unix_seconds() + 3600.0;
        let id = txn
            .schedule_at(wiz, "beat", at, vec![], Options::new())
            .unwrap();
        txn.commit().unwrap();
        id
    };
    assert!(engine.pause(wiz, paused, "deploy v2").unwrap());
    assert!(engine.pause(wiz, paused_once, "").unwrap());
    clock.advance(hour);
    engine.tick().unwrap();
    let run_of = |id: ScheduleId| {
        runner
            .started()
            .into_iter()
            .find(|(_, f)| f.schedule == id)
            .unwrap_or_else(|| panic!("{id} fired"))
            .0
    };
    assert_eq!(runner.started().len(), 3, "the paused ones did not fire");
    runner.finish(&engine, run_of(active), Outcome::Returned(Value::Int(0)));
    let boom = Outcome::Fault {
        kind: FaultKind::Error,
        value: Value::from("boom"),
    };
    runner.finish(&engine, run_of(failing), boom);
    let cron = {
        let mut txn = engine.begin(wiz);
        let id = txn
            .schedule_cron(
                wiz,
                "beat",
                "0 3 * * *",
                "Europe/Paris",
                vec![],
                Options::new(),
            )
            .unwrap();
        txn.commit().unwrap();
        id
    };
    engine.tick().unwrap();
    engine.flush().unwrap();
    Fleet {
        _engine: engine,
        wiz,
        active: active.get(),
        running: running.get(),
        failing: failing.get(),
        paused: paused.get(),
        paused_once: paused_once.get(),
        cron: cron.get(),
    }
}

/// Whether `line` says `pattern` with about 30 minutes in it: 30 as the fleet was made, give or
/// take one for a slow machine between that and the command's own reading of the clock.
fn half_an_hour(line: &str, pattern: &str) -> bool {
    (29..=31).any(|m| line.contains(&pattern.replace("{}", &m.to_string())))
}

fn run_ok(args: &[&str]) -> String {
    let out = tickstep(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&run_ok(args)).expect("--json is JSON")
}

impl Fleet {
    /// Each schedule's id and the state every reader must say.
    fn expected(&self) -> [(u64, &'static str); 6] {
        [
            (self.active, "active"),
            (self.running, "running"),
            (self.failing, "failing"),
            (self.paused, "paused"),
            (self.paused_once, "paused"),
            (self.cron, "active"),
        ]
    }
}

/// A fleet in a fresh store: its temporary directory, the fleet and the store's path.
fn fresh() -> (tempfile::TempDir, Fleet, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.db");
    let fleet = fleet(&path);
    let db = path.to_str().unwrap().to_owned();
    (dir, fleet, db)
}

#[test]
fn list_has_a_state_column_and_a_paused_schedule_no_next_run() {
    // docs/schedules.md §9.4, §9.13; docs/runtime.md §7.3
    let (_dir, f, db) = fresh();
    let table = run_ok(&["schedules", "--db", &db, "list"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "ID",
            "KEY",
            "KIND",
            "TARGET:VERB",
            "CADENCE",
            "STATE",
            "NEXT",
            "RUNS",
            "FAULTS",
            "MISSED",
            "OVERLAP"
        ]
    );
    let expected = f.expected();
    for line in lines {
        let id: u64 = line.split_whitespace().next().unwrap().parse().unwrap();
        let (_, state) = expected.iter().find(|(e, _)| *e == id).unwrap();
        let cells: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert!(cells.contains(state), "{state}: {line}");
        if *state == "paused" {
            assert!(cells.contains(&"-") && !line.contains("due"), "{line}");
        }
    }
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(&format!("{} ", f.active)) && half_an_hour(l, "in {} min")),
        "{table}"
    );
}

#[test]
fn list_and_info_json_say_the_same_state_and_no_next_run_while_paused() {
    // docs/schedules.md §9.2, §9.4, §9.13
    let (_dir, f, db) = fresh();
    let all = json(&["schedules", "--db", &db, "list", "--json"]);
    for (id, state) in f.expected() {
        let listed = all
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap();
        let info = json(&["schedules", "--db", &db, "info", &id.to_string(), "--json"]);
        assert_eq!(
            (listed["status"].as_str(), info["status"].as_str()),
            (Some(state), Some(state))
        );
        if state == "paused" {
            assert_eq!(info["next_run"], 0.0, "nothing is due while paused: {info}");
        } else {
            assert!(info["next_run"].as_f64().unwrap() > 0.0, "{info}");
        }
    }
}

#[test]
fn info_shows_the_last_fault_as_plain_json_and_times_as_dates() {
    // docs/runtime.md §7.10
    let (_dir, f, db) = fresh();
    let failing = json(&[
        "schedules",
        "--db",
        &db,
        "info",
        &f.failing.to_string(),
        "--json",
    ]);
    assert_eq!(
        failing["last_fault"],
        serde_json::json!({"kind": "error", "value": "boom"})
    );
    let text = run_ok(&["schedules", "--db", &db, "info", &f.failing.to_string()]);
    assert!(
        text.contains(r#"{"kind":"error","value":"boom"}"#),
        "{text}"
    );
    assert!(!text.contains("Str"), "{text}");
    let last_run = text.lines().find(|l| l.starts_with("last_run")).unwrap();
    assert!(half_an_hour(last_run, " UTC ({} min ago)"), "{last_run}");
    let paused = run_ok(&["schedules", "--db", &db, "info", &f.paused.to_string()]);
    let next_run = paused.lines().find(|l| l.starts_with("next_run")).unwrap();
    assert_eq!(
        next_run.split_whitespace().collect::<Vec<_>>(),
        ["next_run", "-"]
    );
}

#[test]
fn next_of_a_paused_schedule_says_so_and_never_in_due() {
    // docs/schedules.md §9.8; docs/runtime.md §7.10
    let (_dir, f, db) = fresh();
    // The one-shot's time passed while it was paused.
    for (id, note) in [(f.paused, ": deploy v2"), (f.paused_once, "")] {
        let next = run_ok(&["schedules", "--db", &db, "next", &id.to_string()]);
        let first = next.lines().next().unwrap();
        assert!(
            first.starts_with(&format!("schedule {id} is paused (by {} at ", f.wiz))
                && first.ends_with(&format!("{note}); it fires none of these until resumed")),
            "{next}"
        );
        assert!(!next.contains("due"), "{next}");
        assert!(next.lines().skip(1).all(|l| l.contains(" UTC (")), "{next}");
    }
    let once = run_ok(&["schedules", "--db", &db, "next", &f.paused_once.to_string()]);
    assert!(
        half_an_hour(once.lines().nth(1).unwrap(), " UTC ({} min ago)"),
        "{once}"
    );
    let history = run_ok(&["schedules", "--db", &db, "history", &f.failing.to_string()]);
    let record = history.lines().nth(1).unwrap();
    assert!(
        half_an_hour(record, " UTC ({} min ago)") && record.ends_with("fault  error \"boom\""),
        "{history}"
    );
}

#[test]
fn the_dashboard_filters_by_every_kind_and_every_state_and_shows_the_plain_fault() {
    // docs/serve.md §13.2, §13.4
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.db");
    let f = fleet(&path);
    let board = Dashboard::start(&path, &[]);
    for (query, count) in [
        ("kind=cron", 1),
        ("kind=at", 1),
        ("kind=every", 4),
        ("state=paused", 2),
        ("state=failing", 1),
        ("state=running", 1),
        ("state=active", 2),
        ("state=retired", 0),
    ] {
        let page = get(&board.addr, &format!("/dashboard?{query}"));
        assert_eq!(page.status, 200, "{query}: {}", page.body);
        assert!(
            page.body.contains(&format!("{count} of 6 live schedules")),
            "{query}: {}",
            page.body
        );
    }
    let cron = get(&board.addr, "/dashboard?kind=cron");
    assert!(
        cron.body
            .contains(&format!("/dashboard/schedules/{}\"", f.cron)),
        "{}",
        cron.body
    );
    let detail = get(&board.addr, &format!("/dashboard/schedules/{}", f.failing));
    assert!(
        detail
            .body
            .contains("{&quot;kind&quot;:&quot;error&quot;,&quot;value&quot;:&quot;boom&quot;}"),
        "{}",
        detail.body
    );
    let detail = get(&board.addr, &format!("/dashboard/schedules/{}", f.paused));
    assert!(
        detail.body.contains("<th>next_run</th><td>0.0</td>"),
        "{}",
        detail.body
    );
    assert!(
        detail
            .body
            .contains("<th>status</th><td>&quot;paused&quot;</td>"),
        "{}",
        detail.body
    );
    let refused = get(&board.addr, "/dashboard?kind=daily");
    assert_eq!(refused.status, 400);
    assert!(
        refused.body.contains("not one of at, every or cron"),
        "{}",
        refused.body
    );
}

/// A store with one schedule every second under `catchup = "skip"`: it fired +1 a quarter of a
/// second late, then the engine stalled past +11, so `skip` dropped ten points.
fn late_and_missed(path: &Path) -> u64 {
    let clock = ManualClock::new();
    let (engine, runner, wiz) = beat_engine(path, &clock);
    let mut txn = engine.begin(wiz);
    let options = Options::new().catchup(tickstep::schedules::Catchup::Skip);
    let id = txn
        .schedule_every(wiz, "beat", 1.0, vec![], options)
        .unwrap();
    txn.commit().unwrap();
    clock.advance(Duration::from_millis(1250));
    engine.tick().unwrap();
    runner.finish_all(&engine);
    clock.advance(Duration::from_secs(10));
    engine.tick().unwrap();
    engine.flush().unwrap();
    id.get()
}

#[test]
fn info_history_and_stats_show_lateness_and_why_points_were_missed() {
    // docs/schedules.md §9.15, §9.16; docs/runtime.md §7.8
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.db");
    let id = late_and_missed(&path).to_string();
    let db = path.to_str().unwrap();
    let info = json(&["schedules", "--db", db, "info", &id, "--json"]);
    assert_eq!(info["missed_count"], 10);
    assert_eq!(info["missed_by"]["catchup"], 10, "{info}");
    assert_eq!(info["missed_by"]["overlap"], 0, "every reason is there");
    assert_eq!(info["last_missed_reason"], "catchup");
    assert_eq!(info["lateness_samples"], 1);
    let p99 = info["lateness_p99"].as_f64().unwrap();
    assert!((p99 - 0.25).abs() < 1e-6, "{info}");
    let history = json(&["schedules", "--db", db, "history", &id, "--json"]);
    let late = history[0]["lateness"].as_f64().unwrap();
    assert!((late - 0.25).abs() < 1e-6, "{history}");
    let text = run_ok(&["schedules", "--db", db, "info", &id]);
    let last = text
        .lines()
        .find(|l| l.starts_with("last_missed_at"))
        .unwrap();
    assert!(last.contains(" ago)"), "a time, shown as a date: {last}");
    let stats = json(&["schedules", "--db", db, "stats", "--json"]);
    assert_eq!(stats["schedules"], 1);
    assert_eq!(stats["missed_by"]["catchup"], 10);
    assert_eq!(stats["lateness_samples"], 1);
    let text = run_ok(&["schedules", "--db", db, "stats"]);
    assert!(text.contains("over 1 kept firings"), "{text}");
    assert!(text.contains("catchup 10,"), "{text}");
}
