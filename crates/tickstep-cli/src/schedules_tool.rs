//! `tickstep schedules`: an operator's view of a schedule store — `list`, `info ID`, `find KEY`,
//! `next ID`, `history ID`, `stats`, `pause ID`, `resume ID`, `trigger ID`, `backfill ID FROM TO`,
//! `stop ID` — as a table or `--json`. `list`, `info`, `next` and `history` only read (safe while
//! a demo runs); `stop` removes the schedule's row durably, and every engine running on the store
//! (a demo, a server) drops it at its next tick. `--db` takes a file or a `postgres://` URL; every
//! subcommand works on both (docs/schedules.md §11.24).
//!
//! Tables say what each schedule is doing in its STATE (docs/schedules.md §9.13) and print times
//! as dates with how far they are from now (docs/runtime.md §7.10); `--json` keeps the
//! `schedule_info` map's float Unix seconds.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;
use tickstep::kernel::clock::{Clock, SystemClock};
use tickstep::schedules::{
    Inspector, Lateness, MissedReason, Namespace, ScheduleId, ScheduleKind, StoredSchedule,
};

use crate::console::say;
use crate::store;
use crate::when;

/// `tickstep schedules` options.
#[derive(Args, Debug)]
pub(crate) struct SchedulesArgs {
    /// The schedule store to inspect: an `SQLite` file, or a `postgres://user@host/db` URL.
    #[arg(long, default_value = "./tickstep.db", global = true)]
    db: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
    /// Show dates in UTC instead of the local zone (`TZ`, else the system's).
    #[arg(long, global = true)]
    utc: bool,
    /// Show times as Unix seconds, with no distance from now (for scripts; `--json` too).
    #[arg(long, global = true, conflicts_with = "utc")]
    unix: bool,
    /// Read and act on this application's schedules only (docs/schedules.md §15.5): `serve`,
    /// `demo`, a program's name. Without it every namespace is shown, and an action takes any
    /// id.
    #[arg(long, global = true)]
    namespace: Option<Namespace>,
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Every saved schedule: id, key, kind, target:verb, cadence (the interval, or a calendar's
    /// expression and zone), state (active, running, failing or paused), next run, counters.
    List,
    /// The saved schedules named KEY (one per owner at most: a key is unique per owner).
    Find {
        /// The schedule key (docs/schedules.md §5.12).
        key: String,
    },
    /// Everything `schedule_info` reports about one schedule.
    Info {
        /// The schedule id.
        id: u64,
    },
    /// Firings in flight as the engine last saved them: schedule id, run id, target:verb and the
    /// deadline each one serves. The store holds what the engine wrote at its last group commit
    /// (once per schedules tick while it runs); start times as measured by the process and poll
    /// counts live only in the running process (`Runtime::running_firings`), which another
    /// process cannot see.
    Running,
    /// The next fire times of a schedule, computed from its stored cadence (docs/schedules.md
    /// §9.8): nominal, before jitter; a paused schedule's start after now.
    Next {
        /// The schedule id.
        id: u64,
        /// How many fire times (1 to 1,000).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=1000))]
        count: u16,
    },
    /// The last firings of a schedule as the store keeps them, newest first (docs/schedules.md
    /// §9.11): start, end, the point served, outcome and fault. What a running engine has not
    /// written yet (at most one tick's) is not there.
    History {
        /// The schedule id.
        id: u64,
    },
    /// How late firings started and why points were missed, over every schedule shown
    /// (docs/schedules.md §9.15, §9.16): lateness p50/p99 over the firings the store keeps
    /// (each schedule's last 20), and the points missed by reason.
    Stats,
    /// Pause a schedule, keeping its cadence (docs/schedules.md §9.4, §9.12): the store records
    /// it and a running engine applies it at its next tick, as it does a stop.
    Pause {
        /// The schedule id.
        id: u64,
        /// Why (shown by `info`; at most 200 bytes, no control characters).
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Resume a paused schedule; the points it missed follow its catch-up policy.
    Resume {
        /// The schedule id.
        id: u64,
    },
    /// Fire a schedule once now, under its overlap policy, leaving its cadence alone.
    Trigger {
        /// The schedule id.
        id: u64,
    },
    /// Fire the cadence points of a past range, each once (at most 1,000).
    Backfill {
        /// The schedule id.
        id: u64,
        /// The range's start, Unix seconds.
        from: f64,
        /// The range's end, Unix seconds (not after now).
        to: f64,
    },
    /// Stop a schedule (removes it from the store; a running engine drops it at its next tick).
    Stop {
        /// The schedule id.
        id: u64,
    },
}

pub(crate) fn run(args: &SchedulesArgs) -> Result<(), String> {
    if let Some(id) = args.action.acts_on() {
        in_namespace(args, id)?;
    }
    match args.action {
        Action::List => list(args),
        Action::Find { ref key } => find(args, key),
        Action::Info { id } => info(args, id),
        Action::Running => running(args),
        Action::Next { id, count } => next(args, id, usize::from(count)),
        Action::History { id } => history(args, id),
        Action::Stats => stats(args),
        Action::Pause { id, ref note } => act(args, id, "pause", store::pause(&args.db, id, note)),
        Action::Resume { id } => act(args, id, "resume", store::resume(&args.db, id)),
        Action::Trigger { id } => act(args, id, "trigger", store::trigger(&args.db, id)),
        Action::Backfill { id, from, to } => {
            backfill(args, id, store::backfill(&args.db, id, from, to))
        }
        Action::Stop { id } => stop(args, id),
    }
}

impl SchedulesArgs {
    /// How this command prints times (`--utc`, `--unix`; docs/runtime.md §7.10).
    fn times(&self) -> when::Times {
        when::Times::chosen(self.utc, self.unix)
    }
}

impl Action {
    /// The schedule an action changes, if it changes one.
    fn acts_on(&self) -> Option<u64> {
        match *self {
            Action::Pause { id, .. }
            | Action::Resume { id }
            | Action::Trigger { id }
            | Action::Backfill { id, .. }
            | Action::Stop { id } => Some(id),
            _ => None,
        }
    }
}

/// The store's inspector, reading `--namespace`'s schedules alone when it is given.
fn inspector(args: &SchedulesArgs) -> Result<Inspector, String> {
    let inspector = store::open(&args.db)?;
    Ok(match args.namespace {
        Some(namespace) => inspector.in_namespace(namespace),
        None => inspector,
    })
}

/// With `--namespace`, refuses to act on a schedule of another namespace, naming both, before
/// anything is changed (docs/schedules.md §15.5).
fn in_namespace(args: &SchedulesArgs, id: u64) -> Result<(), String> {
    let Some(namespace) = args.namespace else {
        return Ok(());
    };
    let all = store::open(&args.db)?;
    match all
        .get(ScheduleId::from_raw(id))
        .map_err(|e| e.to_string())?
    {
        Some(s) if s.namespace == namespace.as_str() => Ok(()),
        Some(s) => Err(format!(
            "schedule {id} is in namespace {}, not {namespace}; nothing was changed \
             (docs/schedules.md §15.5)",
            shown_namespace(&s.namespace)
        )),
        None => Err(format!(
            "no schedule {id} in {} (namespace {namespace}); nothing was changed",
            store::shown(&args.db)
        )),
    }
}

/// A stored namespace as it is printed: a store from before namespaces has none.
fn shown_namespace(namespace: &str) -> &str {
    if namespace.is_empty() { "-" } else { namespace }
}

fn now_unix_nanos() -> u64 {
    SystemClock::new().unix_nanos()
}

fn now_unix_seconds() -> f64 {
    seconds_of(now_unix_nanos())
}

fn seconds_of(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

fn list(args: &SchedulesArgs) -> Result<(), String> {
    let rows = inspector(args)?.list().map_err(|e| e.to_string())?;
    if rows.is_empty() && !args.json {
        say(format!("no schedules in {}", store::shown(&args.db)));
        return Ok(());
    }
    print_rows(args, &rows)
}

/// Lookup by key, from any node's rows (docs/schedules.md §5.17).
fn find(args: &SchedulesArgs, key: &str) -> Result<(), String> {
    let rows = inspector(args)?
        .find_key(key)
        .map_err(|e| tickstep::kernel::ErrorChain(&e).to_string())?;
    if rows.is_empty() && !args.json {
        return Err(format!(
            "no schedule named {key:?} in {} (never created, stopped, or retired)",
            store::shown(&args.db)
        ));
    }
    print_rows(args, &rows)
}

/// `rows` as JSON or as the table `list` prints.
fn print_rows(args: &SchedulesArgs, rows: &[StoredSchedule]) -> Result<(), String> {
    if args.json {
        let all: Vec<_> = rows.iter().map(tickstep::dashboard::info_json).collect();
        say(serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let (now, times) = (now_unix_seconds(), args.times());
    // A store several applications share names each row's (docs/runtime.md §7.12); one
    // application's listing stays as it always was.
    let first = rows.first().map(|r| r.namespace.as_str());
    let shared = rows.iter().any(|r| Some(r.namespace.as_str()) != first);
    let mut header = vec![
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
        "OVERLAP",
    ];
    if shared {
        header.push("NAMESPACE");
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![
                r.id.get().to_string(),
                r.key.clone().unwrap_or_else(|| "-".into()),
                r.kind.as_str().into(),
                format!("#{}:{}", r.target.0, r.verb),
                cadence(r),
                r.status().to_string(),
                next_due(r, &times, now),
                r.run_count.to_string(),
                r.fault_count.to_string(),
                r.missed_count.to_string(),
                r.overlap_count.to_string(),
            ];
            if shared {
                row.push(shown_namespace(&r.namespace).to_owned());
            }
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            table
                .iter()
                .map(|row| row[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    say(line(header.clone()));
    for row in &table {
        say(line(row.iter().map(String::as_str).collect()));
    }
    Ok(())
}

/// When the next firing is due, relative to now: `-` while nothing is armed (a paused schedule,
/// docs/schedules.md §9.4; a one-shot running), `due` once its time has come and an engine has
/// not fired it yet.
fn next_due(r: &StoredSchedule, times: &when::Times, now: f64) -> String {
    match r.next_due_unix_nanos().map(seconds_of) {
        None => "-".into(),
        Some(at) if at <= now => "due".into(),
        Some(at) => times.until(at, now),
    }
}

/// A schedule's cadence for the table: its interval, a calendar's expression (quoted, escaped)
/// and zone with its DST policy (docs/schedules.md §14.12), or `-` for a one-shot.
fn cadence(r: &StoredSchedule) -> String {
    match (r.kind, &r.calendar) {
        (ScheduleKind::Every, _) => seconds(r.interval_ns),
        (ScheduleKind::Cron, Some(c)) => format!(
            "{:?} {} gap={} fold={}",
            c.expr, c.zone, c.dst.gap, c.dst.fold
        ),
        _ => "-".into(),
    }
}

fn running(args: &SchedulesArgs) -> Result<(), String> {
    let rows = inspector(args)?.list().map_err(|e| e.to_string())?;
    let in_flight: Vec<serde_json::Value> = rows
        .iter()
        .flat_map(|r| {
            r.running.iter().map(move |f| {
                json!({
                    "schedule": r.id.get(),
                    "run": f.run.0,
                    "target_verb": format!("#{}:{}", r.target.0, r.verb),
                    "deadline_unix_nanos": f.nominal_unix_nanos,
                })
            })
        })
        .collect();
    if args.json {
        say(serde_json::to_string_pretty(&in_flight).map_err(|e| e.to_string())?);
        return Ok(());
    }
    if in_flight.is_empty() {
        say(format!(
            "no firing in flight in {} (as the engine last saved it)",
            store::shown(&args.db)
        ));
        return Ok(());
    }
    let (now, shown_as) = (now_unix_seconds(), args.times());
    say("SCHEDULE  RUN  TARGET:VERB  DEADLINE");
    for f in &in_flight {
        let deadline = f["deadline_unix_nanos"].as_u64().unwrap_or(0);
        say(format!(
            "{}  {}  {}  {}",
            f["schedule"],
            f["run"],
            f["target_verb"].as_str().unwrap_or("?"),
            shown_as.at(seconds_of(deadline), now)
        ));
    }
    Ok(())
}

fn info(args: &SchedulesArgs, id: u64) -> Result<(), String> {
    let row = stored(args, id)?;
    let mut info = tickstep::dashboard::info_json(&row);
    // How late the kept firings started (docs/schedules.md §9.16), keyed as `schedule_info`'s
    // map keys them; why points were missed is in `info_json` already (docs/schedules.md §9.15).
    let history = inspector(args)?
        .history(ScheduleId::from_raw(id))
        .map_err(|e| tickstep::kernel::ErrorChain(&e).to_string())?;
    if let Some(map) = info.as_object_mut() {
        let lateness = Lateness::of(&history);
        for (key, value) in lateness.fields() {
            map.insert(key.to_owned(), tickstep::dashboard::value_json(&value));
        }
    }
    if args.json {
        say(serde_json::to_string_pretty(&info).map_err(|e| e.to_string())?);
        return Ok(());
    }
    if let Some(map) = info.as_object() {
        let width = map.keys().map(String::len).max().unwrap_or(0);
        let (now, times) = (now_unix_seconds(), args.times());
        for (key, value) in map {
            say(format!(
                "{key:<width$}  {}",
                shown_value(&times, key, value, now)
            ));
        }
    }
    Ok(())
}

/// The keys of the `schedule_info` map that hold times (docs/schedules.md §9.2).
const TIME_KEYS: [&str; 5] = [
    "created_at",
    "next_run",
    "last_run",
    "paused_at",
    "last_missed_at",
];

/// A field of `info` as a person reads it: times as dates with how far they are from now
/// (`-` for 0.0, "never" or "none"), a backfill's two points likewise, the rest as JSON.
fn shown_value(times: &when::Times, key: &str, value: &serde_json::Value, now: f64) -> String {
    match (key, value) {
        (key, serde_json::Value::Number(n)) if TIME_KEYS.contains(&key) => {
            times.at(n.as_f64().unwrap_or(0.0), now)
        }
        ("backfill", serde_json::Value::Array(points)) => points
            .iter()
            .map(|p| times.at(p.as_f64().unwrap_or(0.0), now))
            .collect::<Vec<_>>()
            .join(" to "),
        _ => value.to_string(),
    }
}

/// The stored schedule `id`, or an error saying it is not there.
fn stored(args: &SchedulesArgs, id: u64) -> Result<StoredSchedule, String> {
    inspector(args)?
        .get(ScheduleId::from_raw(id))
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "no schedule {id} in {} (it never existed, was stopped, or retired)",
                store::shown(&args.db)
            )
        })
}

fn next(args: &SchedulesArgs, id: u64, count: usize) -> Result<(), String> {
    let row = stored(args, id)?;
    let now = now_unix_nanos();
    let times: Vec<f64> = row
        .next_runs(now, count)
        .into_iter()
        .map(seconds_of)
        .collect();
    if args.json {
        let status = row.status().as_str();
        say(json!({ "id": id, "status": status, "next_runs": times }).to_string());
        return Ok(());
    }
    let (now, shown_as) = (seconds_of(now), args.times());
    // A paused schedule fires none of them until it is resumed (docs/schedules.md §9.4, §9.8).
    if let Some(pause) = &row.pause {
        let note = if pause.note.is_empty() {
            String::new()
        } else {
            format!(": {}", tickstep_host::shown(&pause.note))
        };
        say(format!(
            "schedule {id} is paused (by {} at {}{note}); it fires none of these until resumed",
            pause.by,
            shown_as.at(pause.at, now)
        ));
    }
    if times.is_empty() {
        say(format!(
            "schedule {id} has no next fire time (a one-shot that is running)"
        ));
    }
    for t in times {
        say(shown_as.at(t, now));
    }
    Ok(())
}

fn history(args: &SchedulesArgs, id: u64) -> Result<(), String> {
    let inspector = inspector(args)?;
    if inspector
        .get(ScheduleId::from_raw(id))
        .map_err(|e| e.to_string())?
        .is_none()
    {
        return Err(format!(
            "no schedule {id} in {} (it never existed, was stopped, or retired)",
            store::shown(&args.db)
        ));
    }
    let records = inspector
        .history(ScheduleId::from_raw(id))
        .map_err(|e| tickstep::kernel::ErrorChain(&e).to_string())?;
    if args.json {
        let all: Vec<_> = records
            .iter()
            .map(tickstep::dashboard::record_json)
            .collect();
        say(serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?);
        return Ok(());
    }
    if records.is_empty() {
        say(format!(
            "schedule {id} has no settled firing in the store yet"
        ));
        return Ok(());
    }
    let (now, times) = (now_unix_seconds(), args.times());
    // LATE is the start after the point served (docs/schedules.md §9.16).
    say("STARTED  TOOK  LATE  SERVED  OUTCOME  FAULT");
    for r in &records {
        let fault = r.fault.as_ref().map_or_else(
            || "-".to_owned(),
            |f| format!("{} {}", f.kind.as_str(), f.value),
        );
        say(format!(
            "{}  {:.3}s  {:.3}s  {}  {}  {}",
            times.at(r.started, now),
            r.ended - r.started,
            r.lateness(),
            times.date(r.nominal),
            r.outcome(),
            // A verb's fault value is any text; it never drives the operator's terminal.
            tickstep_host::shown(&fault)
        ));
    }
    Ok(())
}

/// Lateness over the kept firings and the points missed by reason, every schedule shown
/// together (docs/schedules.md §9.15, §9.16).
fn stats(args: &SchedulesArgs) -> Result<(), String> {
    let inspector = inspector(args)?;
    let rows = inspector.list().map_err(|e| e.to_string())?;
    let lateness = inspector
        .lateness()
        .map_err(|e| tickstep::kernel::ErrorChain(&e).to_string())?;
    let missed: Vec<(&str, u64)> = MissedReason::ALL
        .into_iter()
        .map(|reason| {
            let points = rows.iter().map(|r| r.missed.count(reason)).sum();
            (reason.as_str(), points)
        })
        .collect();
    if args.json {
        let by: serde_json::Map<_, _> = missed
            .iter()
            .map(|(reason, n)| ((*reason).to_owned(), json!(n)))
            .collect();
        say(json!({
            "schedules": rows.len(),
            "lateness_p50": lateness.p50,
            "lateness_p99": lateness.p99,
            "lateness_samples": lateness.samples,
            "missed_by": by,
        })
        .to_string());
        return Ok(());
    }
    say(format!(
        "{} schedules; lateness p50 {:.3}s p99 {:.3}s over {} kept firings (each schedule's last {})",
        rows.len(),
        lateness.p50,
        lateness.p99,
        lateness.samples,
        tickstep::schedules::HISTORY_KEPT
    ));
    let by: Vec<String> = missed.iter().map(|(r, n)| format!("{r} {n}")).collect();
    say(format!("missed points by reason: {}", by.join(", ")));
    Ok(())
}

/// Reports a pause, resume or trigger: whether it changed anything.
fn act(
    args: &SchedulesArgs,
    id: u64,
    action: &str,
    done: Result<bool, String>,
) -> Result<(), String> {
    let changed = done?;
    if args.json {
        say(json!({ "id": id, "action": action, "changed": changed }).to_string());
    } else if changed {
        say(format!(
            "{action}: schedule {id} (a running engine applies it at its next tick)"
        ));
    } else {
        say(format!(
            "{action}: schedule {id} needed nothing (already so)"
        ));
    }
    Ok(())
}

fn backfill(args: &SchedulesArgs, id: u64, done: Result<u64, String>) -> Result<(), String> {
    let points = done?;
    if args.json {
        say(json!({ "id": id, "action": "backfill", "points": points }).to_string());
    } else {
        say(format!(
            "backfill: schedule {id} fires {points} past points, one per tick"
        ));
    }
    Ok(())
}

fn stop(args: &SchedulesArgs, id: u64) -> Result<(), String> {
    let stopped = store::stop(&args.db, id)?;
    if args.json {
        say(json!({ "id": id, "stopped": stopped }).to_string());
    } else if stopped {
        say(format!("stopped schedule {id}"));
    } else {
        // docs/schedules.md §3.1: an id that names nothing is a quiet false, not an error.
        say(format!(
            "schedule {id} is not in the store; nothing to stop"
        ));
    }
    Ok(())
}

fn seconds(ns: u64) -> String {
    format!("{}s", seconds_of(ns))
}
