//! A throwaway `PostgreSQL` server for the tests, one per test binary, each test in a database of
//! its own.
//!
//! * `TICKSTEP_PG_URL` set: that server is used (the URL must allow `CREATE DATABASE`); nothing
//!   is started or stopped.
//! * Otherwise the system's binaries are found (`pg_config --bindir`, then
//!   `/usr/lib/postgresql/<newest>/bin`, then `PATH`), a cluster is made with `initdb` in a temp
//!   directory and started with `pg_ctl` on a free loopback port, TCP only. As root, both run as
//!   the `postgres` user (initdb refuses root), the directory chowned to it.
//! * No binaries, or the server will not start: [`database`] returns why, and [`pg_or_skip!`]
//!   prints that the test skipped and why and passes — unless `TICKSTEP_REQUIRE_PG=1`, which makes
//!   it a failure, so CI cannot pass by skipping.
//!
//! Stopping: the server lives in a `static` (shared by every test in the binary), and statics are
//! never dropped, so [`Server`] does both: its `Drop` stops the server when a test owns one, and a
//! small watchdog shell started beside it stops it (`pg_ctl stop -m immediate`) and deletes the
//! directory once the test process has exited, however it exited.
//!
//! The throwaway cluster runs with `fsync=off`: nothing in a test can observe a power cut, and the
//! shared two-core machine is spared the flushes. `synchronous_commit` stays on, so a commit is
//! acknowledged only after the server has written it — what the store's durability relies on.
#![allow(dead_code, unreachable_pub)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable that names an existing server.
pub const URL_VAR: &str = "TICKSTEP_PG_URL";
/// The variable that turns "no `PostgreSQL` here" into a test failure.
pub const REQUIRE_VAR: &str = "TICKSTEP_REQUIRE_PG";

/// A running server: where to reach it, and (when this process started it) how to stop it.
pub struct Server {
    /// A URL for the server's maintenance database, without a database name at the end.
    base: String,
    started: Option<Started>,
}

struct Started {
    bindir: PathBuf,
    data: tempfile::TempDir,
    as_postgres: bool,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = &self.started {
            let _ = pg_command(&s.bindir, "pg_ctl", s.as_postgres)
                .args(["stop", "-m", "immediate", "-D"])
                .arg(s.data.path().join("cluster"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Server {
    /// A URL for database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        with_database(&self.base, name)
    }

    /// Whether this process started the server (rather than using `TICKSTEP_PG_URL`).
    pub fn is_throwaway(&self) -> bool {
        self.started.is_some()
    }

    /// Starts a server of its own (the shared one is [`shared`]).
    ///
    /// # Errors
    ///
    /// Why no server could be started, in words for a skip message.
    pub fn start() -> Result<Server, String> {
        if let Ok(url) = std::env::var(URL_VAR) {
            return Ok(Server {
                base: url,
                started: None,
            });
        }
        let bindir = find_bindir()?;
        let as_postgres = is_root();
        let data = tempfile::Builder::new()
            .prefix("tickstep-pg-")
            .tempdir()
            .map_err(|e| format!("cannot make a temp directory: {e}"))?;
        let cluster = data.path().join("cluster");
        std::fs::create_dir(&cluster)
            .map_err(|e| format!("cannot make {}: {e}", cluster.display()))?;
        if as_postgres {
            for dir in [data.path(), cluster.as_path()] {
                chown_to_postgres(dir)?;
            }
        }
        run(pg_command(&bindir, "initdb", as_postgres)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&cluster))?;
        let port = free_port()?;
        let log = data.path().join("server.log");
        let options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' \
             -c fsync=off -c max_connections=200"
        );
        let started = run(pg_command(&bindir, "pg_ctl", as_postgres)
            .args(["start", "-w", "-t", "60", "-D"])
            .arg(&cluster)
            .arg("-l")
            .arg(&log)
            .args(["-o", &options]));
        if let Err(e) = started {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!("{e}; server log: {tail}"));
        }
        spawn_watchdog(&bindir, &cluster, data.path(), as_postgres);
        Ok(Server {
            base: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            started: Some(Started {
                bindir,
                data,
                as_postgres,
            }),
        })
    }

    /// Creates an empty database named after `label` (and a counter, so reruns never meet) and
    /// returns its URL.
    ///
    /// # Errors
    ///
    /// The server refused the database.
    pub fn create_database(&self, label: &str) -> Result<String, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let mut name: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        name.truncate(40);
        let name = format!(
            "t{}_{}_{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = postgres::Client::connect(&self.base, postgres::NoTls)
            .map_err(|e| format!("cannot connect to {}: {e}", redact(&self.base)))?;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|e| format!("cannot create database {name}: {e}"))?;
        Ok(self.url(&name))
    }
}

/// The server shared by every test of this binary, started on first use.
///
/// # Errors
///
/// Why there is none (the same answer for every test).
pub fn shared() -> Result<&'static Server, String> {
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    SERVER
        .get_or_init(Server::start)
        .as_ref()
        .map_err(Clone::clone)
}

/// A fresh database on the shared server, for one test.
///
/// # Errors
///
/// Why there is no `PostgreSQL` to test against.
pub fn database(label: &str) -> Result<String, String> {
    shared()?.create_database(label)
}

/// Whether a missing `PostgreSQL` must fail the test rather than skip it.
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

/// A fresh database URL for the test `label`, or `None` after printing that it skipped and why.
///
/// # Panics
///
/// When there is no `PostgreSQL` under `TICKSTEP_REQUIRE_PG=1`.
pub fn database_or_skip(label: &str) -> Option<String> {
    match database(label) {
        Ok(url) => Some(url),
        Err(why) if !required() => {
            eprintln!("skipped {label}: no PostgreSQL: {why}");
            None
        }
        Err(why) => panic!("{REQUIRE_VAR}=1 but no PostgreSQL: {why}"),
    }
}

/// A fresh database URL for the calling test, or: print that it skipped and why and `return`
/// (panic instead under `TICKSTEP_REQUIRE_PG=1`).
#[macro_export]
macro_rules! pg_or_skip {
    ($label:expr) => {
        match $crate::common::pg::database_or_skip($label) {
            Some(url) => url,
            None => return,
        }
    };
}

/// The committed-firing log the failover tests install on a migrated database: a trigger on
/// `tickstep_schedules` appends (schedule, cadence point, node, fence) to `firing_log` for every
/// firing a cadence update commits (a cadence point new in the row's `running` list), in the same
/// transaction as that fenced update, and notes in `backwards` any update that moves `next_run`
/// back — the store's exactly-once record (docs/schedules.md §11.28).
pub const COMMITTED_LOG: &str = "
    CREATE TABLE firing_log (schedule BIGINT, point BIGINT, node BIGINT, fence BIGINT);
    CREATE TABLE backwards (schedule BIGINT, old_next BIGINT, new_next BIGINT);
    CREATE FUNCTION log_firings() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO firing_log
        SELECT NEW.id, (r->>1)::bigint, NEW.owner_node, NEW.fence
        FROM jsonb_array_elements(COALESCE(NEW.running, '[]')::jsonb) AS r
        -- Once per point: a firing's place is written before it starts, with no run id, and
        -- again with its run (docs/schedules.md §11.42).
        WHERE NOT EXISTS (
            SELECT 1 FROM jsonb_array_elements(COALESCE(OLD.running, '[]')::jsonb) AS o
            WHERE o->1 = r->1);
        IF NEW.next_run < OLD.next_run THEN
            INSERT INTO backwards VALUES (NEW.id, OLD.next_run, NEW.next_run);
        END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER log_firings AFTER UPDATE ON tickstep_schedules
        FOR EACH ROW EXECUTE FUNCTION log_firings();
";

/// Drops the database at `url`, made by [`database`] for one test, once the test is done with it
/// (the shared server would otherwise keep every test's database). Its own connections are
/// closed first (`WITH (FORCE)`).
///
/// # Panics
///
/// When the server refuses.
pub fn drop_database(url: &str) {
    let name = url
        .split('?')
        .next()
        .and_then(|main| main.rsplit('/').next())
        .expect("a database URL ends in its name");
    let admin = shared()
        .expect("the database came from this server")
        .url("postgres");
    let mut client =
        postgres::Client::connect(&admin, postgres::NoTls).expect("an admin connection");
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .expect("the test's database is dropped");
}

/// `base` with its database name replaced by `name` (query parameters kept).
pub fn with_database(base: &str, name: &str) -> String {
    let (main, query) = match base.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (base, None),
    };
    let after_scheme = main.find("://").map_or(0, |i| i + 3);
    let host_end = main[after_scheme..]
        .find('/')
        .map_or(main.len(), |i| after_scheme + i);
    let mut url = format!("{}/{name}", &main[..host_end]);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let Some(at) = url.find('@') else {
        return url.to_string();
    };
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..at].find(':') {
        Some(colon) => format!("{}:***{}", &url[..start + colon], &url[at..]),
        None => url.to_string(),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn chown_to_postgres(dir: &Path) -> Result<(), String> {
    run(Command::new("chown").arg("postgres:").arg(dir))
        .map_err(|e| format!("running as root needs the `postgres` user: {e}"))
}

fn find_bindir() -> Result<PathBuf, String> {
    let has_initdb = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && has_initdb(&dir) {
            return Ok(dir);
        }
    }
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<(u32, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let v = e.file_name().to_str()?.parse().ok()?;
                Some((v, e.path().join("bin")))
            })
            .filter(|(_, d)| has_initdb(d))
            .collect();
        versions.sort();
        if let Some((_, dir)) = versions.pop() {
            return Ok(dir);
        }
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|d| has_initdb(d))
        .ok_or_else(|| {
            format!(
                "no initdb/pg_ctl (looked in pg_config --bindir, /usr/lib/postgresql/*/bin, PATH); \
                 install PostgreSQL or set {URL_VAR}"
            )
        })
}

fn pg_command(bindir: &Path, tool: &str, as_postgres: bool) -> Command {
    let exe = bindir.join(tool);
    if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(exe);
        c
    } else {
        Command::new(exe)
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A loopback port nobody listens on right now (the server binds it a moment later).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Stops the server and removes its directory once this process is gone (statics are never
/// dropped, so the shared server needs someone outside the process to clean up after it).
fn spawn_watchdog(bindir: &Path, cluster: &Path, dir: &Path, as_postgres: bool) {
    // Paths travel as positional parameters, never spliced into the script.
    const SCRIPT: &str = "while kill -0 \"$1\" 2>/dev/null; do sleep 0.2; done; \
        if [ \"$5\" = 1 ]; then runuser -u postgres -- \"$2\" stop -m immediate -D \"$3\"; \
        else \"$2\" stop -m immediate -D \"$3\"; fi; rm -rf \"$4\"";
    let _ = Command::new("sh")
        .args(["-c", SCRIPT, "watchdog", &std::process::id().to_string()])
        .arg(bindir.join("pg_ctl"))
        .arg(cluster)
        .arg(dir)
        .arg(if as_postgres { "1" } else { "0" })
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}
