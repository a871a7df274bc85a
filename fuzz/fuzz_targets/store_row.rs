//! The store's row codec with arbitrary values in every column, through the public readers.
//!
//! Once per process two real store files are built on /dev/shm with the engine (two schedules: a
//! recurring one with arguments and state, a one-shot): "strict", as the engine wrote it (its
//! column types and NOT NULL/CHECK constraints), and "loose", the same file with its `schedules`
//! table declared without types or constraints (what a damaged file or a foreign writer can hold,
//! so a NULL, a real, a blob or non-UTF-8 text can reach any column). Each file stays open across
//! inputs through one editing connection and one `Inspector` (opening parses the schema: that was
//! most of an input's cost when every input opened four connections).
//!
//! Per input, in one transaction on the chosen file, both rows are put back as the engine wrote
//! them and the input's edits overwrite cells (an edit SQLite refuses under the strict schema is
//! skipped). The kept `Inspector` then lists and gets the rows, and `Schedules::open` opens the
//! file afresh — the load happens only at open, so this is the one open each input needs — and
//! the engine ticks.
//!
//! Properties, beyond "never panics, never aborts":
//! - `list` and `get` agree, and the engine loads exactly when the inspector can decode every row;
//! - a refusal is `Error::Store` whose error chain names an edited column (the crate's promise:
//!   "a corrupt value is named in the source error");
//! - a refused open writes nothing to the file, and the inspector never does (`PRAGMA
//!   data_version` on the editing connection is unchanged);
//! - a load keeps what was written: an edited integer, flag, text or JSON cell reads back as is;
//! - a loaded engine ticks, settles restored firings and ticks again with typed results.
#![no_main]

use std::path::{Path, PathBuf};
use std::time::Duration;

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, ToSql, params, params_from_iter};
use tickstep_fuzz::{text, value};
use tickstep_kernel::ErrorChain;
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::testkit::{TestRunner, TestWorld};
use tickstep_schedules::{
    Catchup, Error, Inspector, ObjId, Options, ScheduleId, Schedules, StoredSchedule, Value,
};

/// The `schedules` columns in the codec's order (`id` first; it is never edited: it is the
/// table's integer primary key, and SQLite refuses anything else there).
const COLUMNS: [&str; 35] = [
    "id",
    "kind",
    "target",
    "verb",
    "args",
    "state",
    "owner",
    "player",
    "interval_ns",
    "interval_clamped",
    "jitter_ns",
    "max_faults",
    "catchup",
    "overlap",
    "adaptive",
    "pass_elapsed",
    "created_at",
    "next_run",
    "fire_at",
    "armed",
    "last_run",
    "run_count",
    "fault_count",
    "consecutive_faults",
    "missed_count",
    "overlap_count",
    "last_duration_ns",
    "backlog",
    "queued",
    "last_fault",
    "running",
    "time_limit_ns",
    "tick_limit",
    "key",
    "ops",
];

/// One store file kept open across inputs: the connection that edits it and the operator's
/// reader, both opened once (opening parses the schema, most of an input's cost otherwise).
struct Store {
    path: PathBuf,
    edit: Connection,
    inspector: Inspector,
}

struct Fixture {
    _dir: tempfile::TempDir,
    strict: Store,
    loose: Store,
    ids: [i64; 2],
    /// Both rows as the engine wrote them, every column in `COLUMNS` order.
    rows: [Vec<SqlValue>; 2],
    high_water: i64,
    created_unix_nanos: u64,
}

thread_local! {
    // libFuzzer runs every input on one thread; a connection is not `Sync`, so not a `static`.
    static FIXTURE: Fixture = build_fixture();
}

fn world() -> (TestWorld, ObjId) {
    let world = TestWorld::new();
    let wizard = world.add_wizard();
    world.add_verb(wizard, "tick");
    (world, wizard)
}

/// Moves the log into the file; the file stays in WAL mode, as an engine leaves it.
fn checkpoint(path: &Path) {
    let conn = Connection::open(path).expect("reopen");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
    drop(conn);
    let header = std::fs::read(path).expect("read the store");
    assert_eq!(
        header.get(18..20),
        Some(&[2, 2][..]),
        "WAL mode in the header"
    );
}

/// Opens the edit connection and the inspector on a store file that is already in WAL mode.
fn keep_open(path: PathBuf) -> Store {
    let edit = Connection::open(&path).expect("open the store for edits");
    // Every UPDATE this target writes stays prepared (33 columns x 3 shapes, plus the reset).
    edit.set_prepared_statement_cache_capacity(128);
    let inspector = Inspector::open(&path).expect("the schema is untouched, so the file opens");
    Store {
        path,
        edit,
        inspector,
    }
}

fn build_fixture() -> Fixture {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .expect("a temporary directory");
    let strict = dir.path().join("strict.db");
    let clock = ManualClock::new();
    let created_unix_nanos = clock.unix_nanos();
    let (world, wizard) = world();
    let engine = Schedules::open(&strict, clock, world, TestRunner::new(), Default::default())
        .expect("a fresh store");
    let mut txn = engine.begin(wizard);
    let options = Options::new()
        .state(Value::from("s"))
        .catchup(Catchup::All)
        .jitter_seconds(1.0);
    let every = txn
        .schedule_every(
            wizard,
            "tick",
            60.0,
            vec![Value::Int(1), Value::from("a")],
            options,
        )
        .expect("schedule_every");
    let when = engine.now_unix_seconds() + 30.0;
    let at = txn
        .schedule_at(wizard, "tick", when, vec![], Options::new())
        .expect("schedule_at");
    txn.commit().expect("commit");
    engine.flush().expect("flush");
    drop(engine);
    checkpoint(&strict);

    // The same file with an untyped, unconstrained `schedules` table.
    let loose = dir.path().join("loose.db");
    std::fs::copy(&strict, &loose).expect("copy the store");
    let loose_sql = format!(
        "CREATE TABLE schedules (id INTEGER PRIMARY KEY, {})",
        COLUMNS[1..].join(", ")
    );
    let conn = Connection::open(&loose).expect("reopen");
    conn.execute_batch("PRAGMA writable_schema = ON")
        .expect("writable_schema");
    conn.execute(
        "UPDATE sqlite_schema SET sql = ?1 WHERE name = 'schedules'",
        [&loose_sql],
    )
    .expect("rewrite the table's declaration");
    conn.execute_batch("PRAGMA writable_schema = OFF")
        .expect("writable_schema off");
    drop(conn);
    checkpoint(&loose);

    let as_sql = |id: ScheduleId| i64::from_ne_bytes(id.get().to_ne_bytes());
    let ids = [as_sql(every), as_sql(at)];
    let strict = keep_open(strict);
    let select = format!("SELECT {} FROM schedules WHERE id = ?1", COLUMNS.join(", "));
    let row = |id: i64| -> Vec<SqlValue> {
        strict
            .edit
            .query_row(&select, [id], |r| {
                (0..COLUMNS.len()).map(|i| r.get(i)).collect()
            })
            .expect("the row as written")
    };
    let rows = [row(ids[0]), row(ids[1])];
    let high_water = strict
        .edit
        .query_row(
            "SELECT value FROM meta WHERE key = 'id_high_water'",
            [],
            |r| r.get(0),
        )
        .expect("the id mark");
    Fixture {
        strict,
        loose: keep_open(loose),
        ids,
        rows,
        high_water,
        created_unix_nanos,
        _dir: dir,
    }
}

/// Puts back what the engine wrote at build time (the last input's engine may have rewritten,
/// fired or retired the rows since), inside the caller's transaction.
fn reset(conn: &Connection, fx: &Fixture) {
    conn.prepare_cached("DELETE FROM schedules")
        .and_then(|mut s| s.execute([]))
        .expect("clear the rows");
    let insert = format!(
        "INSERT INTO schedules ({}) VALUES ({})",
        COLUMNS.join(", "),
        (1..=COLUMNS.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut insert = conn.prepare_cached(&insert).expect("prepare the insert");
    for row in &fx.rows {
        insert
            .execute(params_from_iter(row))
            .expect("put the row back");
    }
    conn.prepare_cached("UPDATE meta SET value = ?1 WHERE key = 'id_high_water'")
        .and_then(|mut s| s.execute([fx.high_water]))
        .expect("put the id mark back");
}

/// `PRAGMA data_version` on `conn`: it changes exactly when another connection commits.
fn data_version(conn: &Connection) -> i64 {
    conn.prepare_cached("PRAGMA data_version")
        .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
        .expect("data_version")
}

/// A value for one cell.
#[derive(Debug, Clone)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// Text that is not UTF-8 (written with `CAST(blob AS TEXT)`).
    RawText(Vec<u8>),
    Blob(Vec<u8>),
}

fn json_text(u: &mut Unstructured<'_>, column: &str) -> Result<String> {
    let v = |u: &mut Unstructured<'_>| value(u, 36);
    let enc = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    Ok(match column {
        // An operator state (docs/schedules.md §9.10): a pause, a trigger, a backfill's range
        // and the note it includes, each maybe absent or out of range.
        "ops" => {
            let mut fields = Vec::new();
            if u.arbitrary()? {
                fields.push(format!(
                    "\"paused\":{{\"by\":{},\"at\":{},\"note\":{},\"armed\":{}}}",
                    tickstep_fuzz::int(u)?,
                    u.arbitrary::<u64>()?,
                    serde_json::to_string(&text(u)?).unwrap_or_default(),
                    u.arbitrary::<bool>()?
                ));
            }
            if u.arbitrary()? {
                fields.push(format!("\"paused_missed\":{}", u.arbitrary::<u64>()?));
            }
            if u.arbitrary()? {
                fields.push(format!("\"trigger\":{}", u.arbitrary::<bool>()?));
            }
            if u.arbitrary()? {
                let (a, b) = (u.arbitrary::<u64>()?, u.arbitrary::<u64>()?);
                fields.push(format!("\"backfill\":[{a},{b}]"));
            }
            if u.arbitrary()? {
                fields.push(format!("\"note\":{}", u.arbitrary::<u64>()?));
            }
            format!("{{{}}}", fields.join(","))
        }
        "args" => {
            let mut items = Vec::new();
            u.arbitrary_loop(None, Some(4), |u| {
                items.push(v(u)?);
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            serde_json::to_string(&items).unwrap_or_default()
        }
        "last_fault" => {
            let kinds = [
                "error",
                "killed",
                "time_limit",
                "max_faults",
                "nope",
                "E_PERM",
            ];
            format!(
                "{{\"kind\":\"{}\",\"value\":{}}}",
                u.choose(&kinds)?,
                enc(&v(u)?)
            )
        }
        "running" => {
            let mut triples = Vec::new();
            u.arbitrary_loop(None, Some(3), |u| {
                let t: (u64, u64, u64) = (u.int_in_range(0..=3)?, u.arbitrary()?, u.arbitrary()?);
                triples.push(format!("[{},{},{}]", t.0, t.1, t.2));
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            format!("[{}]", triples.join(","))
        }
        _ => enc(&v(u)?),
    })
}

fn cell(u: &mut Unstructured<'_>, column: &str) -> Result<Cell> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => Cell::Null,
        1 | 2 => Cell::Int(tickstep_fuzz::int(u)?),
        3 => Cell::Real(tickstep_fuzz::float(u)?),
        4 => Cell::Text(match column {
            "args" | "state" | "last_fault" | "running" | "ops" => json_text(u, column)?,
            _ => text(u)?,
        }),
        5 => Cell::Text(u.arbitrary()?),
        6 => Cell::RawText(u.arbitrary()?),
        _ => Cell::Blob(u.arbitrary()?),
    })
}

/// Writes `cell` into `column` of row `id`; false when SQLite refuses it (a constraint).
fn write(conn: &Connection, id: i64, column: &str, cell: &Cell) -> bool {
    let set = |expr: &str| format!("UPDATE schedules SET {column} = {expr} WHERE id = ?1");
    let exec = |expr: &str, params: &[&dyn ToSql]| {
        conn.prepare_cached(&set(expr))
            .and_then(|mut stmt| stmt.execute(params))
    };
    let done = match cell {
        Cell::Null => exec("NULL", params![id]),
        Cell::Int(i) => exec("?2", params![id, i]),
        Cell::Real(f) if f.is_nan() => exec("?2", params![id, Option::<f64>::None]),
        Cell::Real(f) => exec("?2", params![id, f]),
        Cell::Text(s) => exec("?2", params![id, s]),
        Cell::RawText(b) => exec("CAST(?2 AS TEXT)", params![id, b]),
        Cell::Blob(b) => exec("?2", params![id, b]),
    };
    done.is_ok()
}

/// Checks that an edit which loaded reads back as written (where the codec reads it as is).
fn check_kept(s: &StoredSchedule, column: &str, cell: &Cell) {
    let bits = |i: i64| u64::from_ne_bytes(i.to_ne_bytes());
    match (column, cell) {
        ("target", Cell::Int(i)) => assert_eq!(s.target, ObjId(*i)),
        ("owner", Cell::Int(i)) => assert_eq!(s.owner, ObjId(*i)),
        ("player", Cell::Int(i)) => assert_eq!(s.player, ObjId(*i)),
        ("interval_ns", Cell::Int(i)) => assert_eq!(s.interval_ns, bits(*i)),
        ("jitter_ns", Cell::Int(i)) => assert_eq!(s.jitter_ns, bits(*i)),
        ("max_faults", Cell::Int(i)) => assert_eq!(i64::from(s.max_faults), *i),
        ("created_at", Cell::Int(i)) => assert_eq!(s.created_unix_nanos, bits(*i)),
        ("next_run", Cell::Int(i)) => assert_eq!(s.next_run_unix_nanos, bits(*i)),
        ("fire_at", Cell::Int(i)) => assert_eq!(s.fire_at_unix_nanos, bits(*i)),
        ("run_count", Cell::Int(i)) => assert_eq!(s.run_count, bits(*i)),
        ("missed_count", Cell::Int(i)) => assert_eq!(s.missed_count, bits(*i)),
        ("interval_clamped", Cell::Int(i)) => assert_eq!(s.interval_clamped, *i != 0),
        ("adaptive", Cell::Int(i)) => assert_eq!(s.adaptive, *i != 0),
        ("armed", Cell::Int(i)) => assert_eq!(s.armed, *i != 0),
        ("time_limit_ns", Cell::Int(i)) => {
            assert_eq!(
                s.time_limit,
                Some(std::time::Duration::from_nanos(bits(*i)))
            )
        }
        ("tick_limit", Cell::Int(i)) => {
            assert_eq!(s.tick_limit.map(std::num::NonZeroU64::get), Some(bits(*i)))
        }
        ("key", Cell::Text(t)) => assert_eq!(s.key.as_deref(), Some(t.as_str())),
        ("verb", Cell::Text(t)) => assert_eq!(&s.verb, t),
        ("kind", Cell::Text(t)) => assert_eq!(s.kind.as_str(), t),
        ("catchup", Cell::Text(t)) => assert_eq!(s.catchup.as_str(), t),
        ("overlap", Cell::Text(t)) => assert_eq!(s.overlap.as_str(), t),
        ("state", Cell::Text(t)) => {
            assert_eq!(
                s.state.as_ref(),
                Some(&serde_json::from_str::<Value>(t).unwrap())
            );
        }
        ("args", Cell::Text(t)) => {
            assert_eq!(s.args, serde_json::from_str::<Vec<Value>>(t).unwrap())
        }
        ("state" | "args" | "last_fault" | "running", Cell::Null) => {}
        _ => {}
    }
}

/// Whether `err` names one of the edited columns (by name, or by its index in the row) anywhere
/// in its chain (the crate's convention: the reason is in the source error).
fn names_a_column(err: &Error, edited: &[(usize, &str)]) -> bool {
    let message = ErrorChain(err).to_string();
    edited.iter().any(|&(index, column)| {
        message.contains(column)
            || message.contains(&format!("index: {index},"))
            || message.contains(&format!("index {index}"))
    })
}

fn run(fx: &Fixture, u: &mut Unstructured<'_>) -> Result<()> {
    let loose = u.arbitrary::<bool>()?;
    let mut edits: Vec<(usize, usize, Cell)> = Vec::new();
    u.arbitrary_loop(Some(1), Some(8), |u| {
        let row = u.int_in_range(0..=1usize)?;
        let column = u.int_in_range(1..=COLUMNS.len() - 1)?;
        edits.push((row, column, cell(u, COLUMNS[column])?));
        Ok(std::ops::ControlFlow::Continue(()))
    })?;
    // The engine reopens at some later wall time, an hour short of the end of the timeline at
    // most (the test ticks a minute further; the clock itself saturates there).
    let latest = u64::MAX - fx.created_unix_nanos - 3_600_000_000_000;
    let later = match u.int_in_range(0..=4u8)? {
        0 => 0,
        1 => 61_000_000_000,
        2 => 400 * 86_400 * 1_000_000_000,
        3 => latest,
        _ => u.int_in_range(0..=latest)?,
    };
    let decisions: Vec<bool> = (0..4).map(|_| u.arbitrary()).collect::<Result<_>>()?;

    // The chosen store as the engine wrote it, then the edits, in one transaction.
    let store = if loose { &fx.loose } else { &fx.strict };
    let tx = store.edit.unchecked_transaction().expect("begin");
    reset(&tx, fx);
    let mut applied: Vec<(usize, usize, Cell)> = Vec::new();
    for (row, column, cell) in edits {
        if write(&tx, fx.ids[row], COLUMNS[column], &cell) {
            applied.retain(|(r, c, _)| (*r, *c) != (row, column));
            applied.push((row, column, cell));
        }
    }
    tx.commit().expect("commit the edits");
    let edited: Vec<(usize, &str)> = applied.iter().map(|&(_, c, _)| (c, COLUMNS[c])).collect();
    let written = data_version(&store.edit);

    // The operator's reader, open since the first input: each read sees the edits just committed.
    let inspector = &store.inspector;
    let listed = inspector.list();
    match &listed {
        Ok(rows) => {
            assert_eq!(rows.len(), 2);
            for (row, column, cell) in &applied {
                let id = ScheduleId::from_raw(u64::from_ne_bytes(fx.ids[*row].to_ne_bytes()));
                let stored = rows.iter().find(|s| s.id == id).expect("both rows listed");
                check_kept(stored, COLUMNS[*column], cell);
            }
        }
        Err(err) => {
            assert!(matches!(err, Error::Store { .. }), "{err:?}");
            assert!(
                names_a_column(err, &edited),
                "{err} names none of {edited:?}"
            );
        }
    }
    for (i, &raw) in fx.ids.iter().enumerate() {
        let id = ScheduleId::from_raw(u64::from_ne_bytes(raw.to_ne_bytes()));
        match (inspector.get(id), &listed) {
            (Ok(Some(one)), Ok(rows)) => assert_eq!(Some(&one), rows.iter().find(|s| s.id == id)),
            (Err(err), Err(_)) => {
                assert!(matches!(err, Error::Store { .. }), "{err:?}");
                let mine: Vec<_> = applied
                    .iter()
                    .filter(|(r, ..)| *r == i)
                    .map(|&(_, c, _)| (c, COLUMNS[c]))
                    .collect();
                assert!(names_a_column(&err, &mine), "{err} names none of {mine:?}");
            }
            (Ok(Some(_)), Err(_)) => {} // the other row is the broken one
            (got, listed) => panic!("get {got:?} disagrees with list {listed:?}"),
        }
    }
    assert_eq!(
        data_version(&store.edit),
        written,
        "the inspector wrote to the file"
    );

    // The engine, at some later time.
    let clock = ManualClock::starting_at_unix_nanos(fx.created_unix_nanos + later);
    let (world, _) = world();
    let engine = Schedules::open(
        &store.path,
        clock.clone(),
        world,
        TestRunner::new(),
        Default::default(),
    );
    let engine = match (engine, &listed) {
        (Ok(engine), Ok(_)) => engine,
        (Err(err), Err(_)) => {
            assert!(matches!(err, Error::Store { .. }), "{err:?}");
            assert!(
                names_a_column(&err, &edited),
                "{err} names none of {edited:?}"
            );
            assert_eq!(
                data_version(&store.edit),
                written,
                "a refused open wrote to the file"
            );
            return Ok(());
        }
        (Ok(_), Err(err)) => panic!("the engine loaded what the inspector refused: {err}"),
        (Err(err), Ok(_)) => panic!("the engine refused what the inspector read: {err}"),
    };
    let _ = engine.tick();
    for (run, &keep) in engine.interrupted().iter().zip(decisions.iter().cycle()) {
        if keep {
            engine.reattach(run.run);
        } else {
            engine.abandon(run.run);
        }
    }
    clock.advance(Duration::from_secs(61));
    let _ = engine.tick();
    let _ = engine.next_deadline_unix_nanos();
    let _ = engine.flush();
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    FIXTURE.with(|fx| {
        let _ = run(fx, &mut Unstructured::new(data));
    });
});
