//! What opening refuses, byte for byte untouched: a damaged file, another application's
//! database (unless the caller opts in to sharing it), a store from a newer build. And the
//! operator's stop, noticed by a running engine at its next tick. Real SQLite files in temp dirs.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::Host;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::testkit::{TestRunner, TestWorld};
use tickstep_schedules::{Config, Error, Inspector, Options, Schedules};

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("schedules.db");
    (dir, path)
}

/// Every file in the directory: name, length, and its exact bytes (compared in full, printed as
/// a hash when a test fails).
#[derive(PartialEq)]
struct Files(Vec<(PathBuf, Vec<u8>)>);

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(path, bytes)| {
                let mut hasher = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(bytes, &mut hasher);
                (path, bytes.len(), std::hash::Hasher::finish(&hasher))
            }))
            .finish()
    }
}

fn files(dir: &Path) -> Files {
    let mut all: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    all.sort();
    Files(all)
}

fn open_with(path: &Path, config: Config) -> Result<Schedules, Error> {
    Schedules::open(
        path,
        ManualClock::new(),
        TestWorld::new(),
        TestRunner::new(),
        config,
    )
}

fn open(path: &Path) -> Result<Schedules, Error> {
    open_with(path, common::config())
}

/// A store holding a few schedules, closed cleanly (its WAL checkpointed away).
fn saved_store(path: &Path) {
    let h = Host::open(path, ManualClock::new());
    for _ in 0..50 {
        h.every(1.0, Options::new());
    }
    drop(h);
}

fn page_size(path: &Path) -> usize {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .unwrap() as usize
}

fn root_page(path: &Path, table: &str) -> usize {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT rootpage FROM sqlite_master WHERE name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .unwrap() as usize
}

/// Overwrites page `page` (1-based) with garbage, keeping the first `keep` bytes.
fn scribble(path: &Path, page: usize, keep: usize) {
    let size = page_size(path);
    let mut bytes = fs::read(path).unwrap();
    let start = (page - 1) * size + keep;
    for (i, b) in bytes[start..page * size].iter_mut().enumerate() {
        *b = (i * 37 % 251) as u8;
    }
    fs::write(path, bytes).unwrap();
}

fn assert_damaged(err: &Error, path: &Path) {
    assert!(matches!(err, Error::Damaged { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(
        text.contains(&format!("sqlite3 {} .recover", path.display())),
        "{text}"
    );
    assert_eq!(err.code(), "E_QUOTA");
}

#[test]
fn a_store_with_a_damaged_schedules_page_is_refused_and_not_written() {
    let (dir, path) = db();
    saved_store(&path);
    scribble(&path, root_page(&path, "schedules"), 0);
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert_damaged(&err, &path);
    assert_eq!(
        files(dir.path()),
        before,
        "not a byte changed, no file added"
    );
    let bytes = fs::read(&path).unwrap();
    let err = Inspector::open(&path).and_then(|i| i.list()).unwrap_err();
    assert_damaged(&err, &path);
    // A read-only WAL reader may add SQLite's empty -shm/-wal beside the file (as the sqlite3
    // shell does); the file itself is not touched.
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_store_with_a_damaged_schema_page_is_refused_and_not_written() {
    let (dir, path) = db();
    saved_store(&path);
    scribble(&path, 1, 100); // SQLite's header kept, the schema b-tree garbage
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert_damaged(&err, &path);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_truncated_store_is_refused_as_damaged_and_not_written() {
    let (dir, path) = db();
    saved_store(&path);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert_damaged(&err, &path);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn an_old_schema_store_with_damage_is_caught_by_quick_check_before_the_migration() {
    let (dir, path) = db();
    saved_store(&path);
    // Back to schema version 1 and rollback journaling: opening would migrate and switch to WAL.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE operator_stops; DROP INDEX schedules_owner_key; \
             DROP TRIGGER schedules_history_goes_with_the_row; DROP TABLE firing_history; \
             ALTER TABLE schedules DROP COLUMN key; ALTER TABLE schedules DROP COLUMN ops; \
             ALTER TABLE schedules DROP COLUMN time_limit_ns; \
             ALTER TABLE schedules DROP COLUMN tick_limit; \
             DELETE FROM schema_migrations WHERE version >= 2; PRAGMA journal_mode = DELETE;",
        )
        .unwrap();
    }
    // Damage the id high-water mark's table, which loading would read only after migrating.
    scribble(&path, root_page(&path, "meta"), 0);
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert_damaged(&err, &path);
    assert!(err.to_string().contains("quick_check"), "{err}");
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_version_1_store_is_migrated_and_keeps_its_schedules() {
    let (_dir, path) = db();
    saved_store(&path);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE operator_stops; DELETE FROM sqlite_sequence; \
             DROP TRIGGER schedules_history_goes_with_the_row; DROP TABLE firing_history; \
             DROP INDEX schedules_owner_key; ALTER TABLE schedules DROP COLUMN key; \
             ALTER TABLE schedules DROP COLUMN ops; \
             ALTER TABLE schedules DROP COLUMN time_limit_ns; \
             ALTER TABLE schedules DROP COLUMN tick_limit; \
             DELETE FROM schema_migrations WHERE version >= 2; PRAGMA application_id = 0;",
        )
        .unwrap();
    }
    // In the world whose objects the schedules name (an empty one would hold them back,
    // docs/schedules.md §15.6).
    let host = Host::open(&path, ManualClock::new());
    assert_eq!(host.engine.live_count(), 50);
    drop(host);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, 12);
}

fn foreign_db(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('buy milk'); \
         CREATE TABLE todo (id INTEGER PRIMARY KEY);",
    )
    .unwrap();
}

#[test]
fn another_applications_database_is_refused_naming_its_tables_and_not_written() {
    let (dir, path) = db();
    foreign_db(&path);
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("notes, todo"), "{text}");
    assert!(text.contains("share_file"), "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert_eq!(files(dir.path()), before, "not even switched to WAL");
}

#[test]
fn a_database_stamped_with_another_application_id_is_refused() {
    let (dir, path) = db();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA application_id = 42;").unwrap();
    }
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert!(err.to_string().contains("application_id is 0x2a"), "{err}");
    assert_eq!(files(dir.path()), before);
}

#[test]
fn sharing_another_applications_database_is_an_opt_in_that_keeps_its_tables() {
    let (_dir, path) = db();
    foreign_db(&path);
    let mut config = common::config();
    config.share_file = true;
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "tick");
    let engine =
        Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), config).unwrap();
    let mut txn = engine.begin(wiz);
    let id = txn
        .schedule_every(wiz, "tick", 1.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    drop(engine);
    // Reopened with the same opt-in, the schedule is there; the other tables are untouched.
    let engine = open_with(&path, config).unwrap();
    assert!(engine.begin(wiz).schedule_valid(id));
    drop(engine);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let note: String = conn
        .query_row("SELECT text FROM notes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(note, "buy milk");
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app_id, 0, "a shared file is not stamped as tickstep's");
    // Without the opt-in it is still refused.
    assert!(matches!(open(&path), Err(Error::NotAStore { .. })));
}

#[test]
fn a_store_from_a_newer_build_is_refused_naming_both_versions_and_not_written() {
    let (dir, path) = db();
    saved_store(&path);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations VALUES (99, 'from the future')",
            [],
        )
        .unwrap();
    }
    let before = files(dir.path());
    let err = open(&path).err().unwrap();
    assert!(
        matches!(
            err,
            Error::SchemaTooNew {
                found: 99,
                supported: 12
            }
        ),
        "{err:?}"
    );
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_fresh_store_is_stamped_with_ticksteps_application_id() {
    let (_dir, path) = db();
    drop(open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app_id, 0x5453_5450);
}

#[test]
fn an_operator_stop_is_noticed_by_a_running_engine_at_its_next_tick() {
    let (_dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    let stopped = h.every(1.0, Options::new());
    let kept = h.every(1.0, Options::new());
    assert!(Inspector::stop(&path, stopped).unwrap());
    assert!(h.valid(stopped), "nothing polled yet");
    h.after(1.0);
    assert!(
        !h.valid(stopped),
        "dropped at the tick's poll, before it could fire"
    );
    assert_eq!(h.fired(), 1);
    assert_eq!(h.started()[0].1.schedule, kept);
    assert!(h.engine.begin(h.wiz).schedule_info(stopped).is_err());
}

#[test]
fn an_operator_stop_reaches_every_engine_open_on_the_store() {
    let (_dir, path) = db();
    let a = Host::open(&path, ManualClock::new());
    let id = a.every(1.0, Options::new());
    let b = Host::open(&path, ManualClock::new()); // a second engine on the same file
    assert!(b.valid(id));
    assert!(Inspector::stop(&path, id).unwrap());
    a.tick();
    b.tick();
    assert!(!a.valid(id));
    assert!(!b.valid(id));
}

#[test]
fn a_running_firing_of_an_operator_stopped_schedule_is_ignored_when_it_reports() {
    let (_dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    let id = h.every(1.0, Options::new());
    h.after(1.0);
    let run = h.last_run();
    assert!(Inspector::stop(&path, id).unwrap());
    h.after(0.01); // the next tick one poll interval later
    assert!(!h.valid(id));
    assert!(!h.finish(run, tickstep_schedules::Value::Int(0)));
    // The engine's later group commits never bring the row back.
    h.after(5.0);
    assert_eq!(Inspector::open(&path).unwrap().get(id).unwrap(), None);
}

#[test]
fn a_store_whose_path_holds_uri_characters_opens_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("100% sure? #1");
    fs::create_dir(&odd).unwrap();
    let path = odd.join("s.db");
    saved_store(&path);
    let host = Host::open(&path, ManualClock::new());
    assert_eq!(host.engine.live_count(), 50);
}

#[test]
fn the_store_is_polled_for_operator_stops_at_most_once_per_engine_tick_interval() {
    let (_dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    let id = h.every(60.0, Options::new());
    h.tick(); // polls
    assert!(Inspector::stop(&path, id).unwrap());
    h.tick(); // same instant: not polled again
    assert!(h.valid(id));
    h.advance(0.009);
    h.tick();
    assert!(h.valid(id), "9 ms is under the 10 ms tick interval");
    h.advance(0.001);
    h.tick();
    assert!(
        !h.valid(id),
        "noticed one tick interval after the last poll"
    );
    assert_eq!(h.engine.take_operator_stops(), vec![id]);
    assert!(h.engine.take_operator_stops().is_empty(), "taken once");
}
