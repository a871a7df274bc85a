//! Two `tickstep serve` processes on one `PostgreSQL` database, spoken to over TCP by netcat-style
//! clients (docs/serve.md §6): players are shared, a reminder fires once and reaches its player on
//! whichever node they are connected to, and when the node holding a schedule is killed the
//! other takes it over and keeps firing it, each cadence point committed once.
//!
//! Every wait is bounded (a deadline per expected line, a bound on each process); the
//! assertions are about what was said and what the store holds, never about how long it took.
//! Without a server each test prints that it skipped and why, unless `TICKSTEP_REQUIRE_PG=1`.

mod common;
mod run;
mod serve_client;

use std::path::Path;
use std::time::{Duration, Instant};

use run::{stderr, stdout, tickstep};
use serve_client::{Server, id_of};

/// The nodes' lease (docs/schedules.md §11.25): short, so a takeover comes within seconds.
const LEASE: &str = "2s";
/// How long a takeover may take at most: the lease, one claim interval, and generous slack for a
/// loaded machine.
const TAKEOVER_PATIENCE: Duration = Duration::from_secs(60);

fn node(url: &str) -> Server {
    Server::start(Path::new(url), &["--lease", LEASE])
}

/// The stored `schedule_info` map of `id`, read as an operator would.
fn stored_info(url: &str, id: u64) -> serde_json::Value {
    let out = tickstep(&["schedules", "--db", url, "info", &id.to_string(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("info --json is JSON")
}

#[test]
fn a_reminder_fires_once_and_reaches_its_player_on_the_other_node() {
    let url = pg_or_skip!("serve_two_nodes_reminder");
    let _dropped = Scratch::dropped(&url);
    let (a, b) = (node(&url), node(&url));
    let mut alice = a.login("alice");
    let tea = id_of(&alice.ask("remind 1 tea is ready"));
    alice.quit();

    // Node a holds the reminder; alice is now on node b, where its line arrives as mail.
    let mut alice = b.login("alice");
    assert_eq!(
        alice.expect("[mail] [#"),
        format!("[mail] [#{tea}] tea is ready")
    );
    let mut wizard = a.login("merlin");
    assert_eq!(
        wizard.ask("schedules"),
        "ok: 0 live schedules",
        "fired, retired"
    );
    wizard.quit();
    assert!(
        alice.ask("who").starts_with("ok: 1 online: alice"),
        "node b's own players"
    );
    let copies = alice
        .seen
        .iter()
        .filter(|l| l.contains(&format!("[#{tea}]")))
        .count();
    assert_eq!(copies, 1, "one firing, one line: {:#?}", alice.seen);

    // A reminder for a player connected nowhere waits for their next login, on either node.
    let bob_id = {
        let mut bob = b.login("bob");
        let id = id_of(&bob.ask("remind 1 you missed this"));
        bob.quit();
        id
    };
    let mut carol = b.login("carol");
    carol.ask("remind 1 ping");
    carol.expect("[#"); // carol's later reminder has fired, so bob's has too
    let mut bob = a.login("bob");
    assert_eq!(
        bob.expect("[mail] [#"),
        format!("[mail] [#{bob_id}] you missed this")
    );
    a.shutdown();
    b.shutdown();
}

#[test]
fn when_the_holding_node_is_killed_the_other_takes_over_and_keeps_firing() {
    let url = pg_or_skip!("serve_two_nodes_failover");
    let _dropped = Scratch::dropped(&url);
    let (a, b) = (node(&url), node(&url));
    let mut alice = a.login("alice");
    let tick = id_of(&alice.ask("every 1 tell tick"));
    alice.quit();

    // Held by node a, the schedule reaches alice on node b as mail.
    let mut alice = b.login("alice");
    alice.expect(&format!("[mail] [#{tick}] tick"));
    drop(a); // SIGKILL: no clean hand-back, its lease must run out

    // Node b takes the schedule over and fires it itself: plain lines, no longer mail.
    let deadline = Instant::now() + TAKEOVER_PATIENCE;
    let direct = format!("[#{tick}] tick");
    let mut direct_lines = 0;
    while direct_lines < 3 {
        let line = alice.line(deadline).expect("node b keeps alice connected");
        if line == direct {
            direct_lines += 1;
        }
    }

    // Each cadence point is committed once: the points served (fired, missed, or dropped as
    // overlaps) are no more than the points between creation and the next run.
    let info = stored_info(&url, tick);
    let number = |key: &str| {
        info[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key}: {info}"))
    };
    let points = ((number("next_run") - number("created_at")) / number("interval")).round() - 1.0;
    let served = number("run_count") + number("missed_count") + number("overlap_count");
    assert!(
        served <= points,
        "{served} points served of {points} passed: a point was committed twice ({info})"
    );
    assert!(number("run_count") >= 3.0, "{info}");
    b.shutdown();
}

/// Drops a test's database (and its role, if it made one) at the end, however the test ends:
/// the shared development server keeps whatever tests leave.
struct Scratch {
    admin_url: String,
    database: String,
    role: Option<String>,
    /// The database as the server reaches it: as the role, when there is one.
    url: String,
}

impl Scratch {
    /// The database of `url`, dropped at the end.
    fn dropped(url: &str) -> Scratch {
        let database = url
            .rsplit('/')
            .next()
            .unwrap()
            .split('?')
            .next()
            .unwrap()
            .to_owned();
        Scratch {
            admin_url: common::pg::with_database(url, "postgres"),
            database,
            role: None,
            url: url.to_owned(),
        }
    }

    /// The database of `url`, owned by a role of its own that the server connects as: not a
    /// superuser, so a revoked permission binds it.
    fn with_role(url: &str) -> Scratch {
        let mut scratch = Scratch::dropped(url);
        let role = format!("{}_r", scratch.database);
        let mut admin = postgres::Client::connect(&scratch.admin_url, postgres::NoTls).unwrap();
        admin
            .batch_execute(&format!(
                "CREATE ROLE {role} LOGIN PASSWORD 'watched'; \
                 ALTER DATABASE {} OWNER TO {role};",
                scratch.database
            ))
            .unwrap();
        let at = url.find('@').expect("a URL with a user");
        scratch.url = format!("postgres://{role}:watched@{}", &url[at + 1..]);
        scratch.role = Some(role);
        scratch
    }

    /// Runs `sql` on the database as its superuser.
    fn admin(&self, sql: &str) {
        let url = common::pg::with_database(&self.admin_url, &self.database);
        let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        admin.batch_execute(sql).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Ok(mut admin) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            // One statement at a time: DROP DATABASE may not run inside a transaction block.
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.database
            ));
            if let Some(role) = &self.role {
                let _ = admin.batch_execute(&format!("DROP ROLE IF EXISTS {role}"));
            }
        }
    }
}

/// A server on a fresh database: `break_it` (SQL run by the superuser, `{role}` the server's
/// role) breaks the database under it; the wizard is told
/// `expected`, a new schedule is refused naming it, the others play on, and the stop fails
/// rather than claim the store is committed (docs/serve.md §12.2, §12.6).
fn watched(label: &str, break_it: &str, expected: &str) {
    let Some(url) = common::pg::database_or_skip(label) else {
        return;
    };
    let scratch = Scratch::with_role(&url);
    let server = node(&scratch.url);
    let mut merlin = server.login("merlin");
    let mut alice = server.login("alice");
    assert!(alice.ask("remind 600 before").starts_with("ok: schedule #"));
    scratch.admin(&break_it.replace("{role}", scratch.role.as_deref().unwrap_or_default()));
    let report = merlin.expect("[system] ");
    assert!(
        report.contains(expected) && report.contains("new schedules are refused"),
        "{report}"
    );
    let refused = alice.ask("remind 600 after");
    assert!(
        refused.starts_with("error: no new schedules: ") && refused.contains(expected),
        "{refused}"
    );
    assert!(alice.ask("who").starts_with("ok: 2 online"));
    server.shutdown_failing(&mut merlin);
}

#[test]
fn a_lost_database_connection_is_reported_and_new_schedules_are_refused() {
    watched(
        "serve_watch_lost",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
        "was lost",
    );
}

#[test]
fn a_dropped_table_is_reported_and_new_schedules_are_refused() {
    watched(
        "serve_watch_dropped",
        "DROP TABLE tickstep_serve_mail",
        "the table tickstep_serve_mail of the store's database",
    );
}

#[test]
fn a_revoked_permission_is_reported_and_new_schedules_are_refused() {
    watched(
        "serve_watch_revoked",
        "REVOKE INSERT, UPDATE, DELETE ON tickstep_schedules FROM {role}",
        "(a permission was revoked)",
    );
}
