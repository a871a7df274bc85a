//! Applications sharing one store, as users run them (issue 31; docs/schedules.md §15): the real
//! `tickstep demo` and `tickstep serve` on one store at the same time, and two `Runtime`
//! programs (this test binary, re-executed) each in a world that knows only its own objects.
//! Each keeps every one of its schedules, fires only its own, and retires none of the other's;
//! on both stores. Every wait is bounded; the assertions are about what each program said and
//! what the store holds, never about how long anything took.

mod common;
mod run;
mod serve_client;

use std::collections::BTreeSet;
use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use run::{live_demo, stderr, stdout, tickstep};
use serve_client::{Server, id_of};
use tickstep::schedules::{Inspector, Namespace, ObjId, Options, Value, World};

/// The store each test uses: a file in `dir`, or a fresh `PostgreSQL` database.
enum Store {
    File(tempfile::TempDir),
    Postgres(String),
}

impl Store {
    fn sqlite() -> Store {
        Store::File(tempfile::tempdir().unwrap())
    }

    fn location(&self) -> String {
        match self {
            Store::File(dir) => dir.path().join("shared.db").to_str().unwrap().to_owned(),
            Store::Postgres(url) => url.clone(),
        }
    }

    /// Each schedule's namespace, as the operator's `list --json` shows it.
    fn namespaces(&self) -> Vec<(u64, String)> {
        let out = tickstep(&["schedules", "--db", &self.location(), "list", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["id"].as_u64().unwrap(),
                    r["namespace"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Store::Postgres(url) = self {
            common::pg::drop_database(url);
        }
    }
}

/// The demo's three schedules and serve's, on `store`, with the two running at once.
fn demo_and_serve_keep_their_own(store: &Store) {
    let db = store.location();
    let server = Server::start(Path::new(&db), &[]);
    let mut alice = server.login("alice");
    let every = id_of(&alice.ask("every 600 tell kept"));
    let remind = id_of(&alice.ask("remind 900 later"));
    // The demo runs beside the server (its first status line read: its store is live).
    let demo = live_demo(&db);
    let first = demo.finish();
    assert!(first.contains("(namespace demo)"), "{first}");
    assert!(!first.contains("held back"), "{first}");
    let demo_ids: BTreeSet<u64> = first
        .lines()
        .filter_map(|l| l.trim().strip_prefix("created schedule "))
        .map(|rest| rest.split(':').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(demo_ids.len(), 3, "{first}");
    // `lockup` is a one-shot due 5 s after it is made, on the real clock in the first run: on a
    // slow machine it comes due before the demo's second run ends, fires and retires, as it
    // should. Only it may be gone; nothing of either application is otherwise lost.
    let lockup: Option<u64> = first
        .lines()
        .filter_map(|l| l.trim().strip_prefix("created schedule "))
        .find(|rest| rest.ends_with(": lockup"))
        .map(|rest| rest.split(':').next().unwrap().parse().unwrap());
    // The server kept its schedules while the demo ran and stopped.
    assert!(alice.ask(&format!("info {every}")).starts_with("ok: "));
    drop(alice);
    server.shutdown();

    // The demo again: it finds its three; the server again: it finds its two.
    let second = tickstep(&["demo", "--virtual", "--duration", "2s", "--db", &db]);
    assert!(second.status.success(), "{}", stderr(&second));
    let text = stdout(&second);
    assert_eq!(text.matches("found schedule").count(), 3, "{text}");
    let server = Server::start(Path::new(&db), &[]);
    let loaded = server.printed("tickstep serve: ");
    assert!(
        loaded.contains("2 schedules loaded") && loaded.contains("(namespace serve)"),
        "{loaded}"
    );
    let mut alice = server.login("alice");
    for id in [every, remind] {
        let info = alice.ask(&format!("info {id}"));
        assert!(info.starts_with("ok: "), "{info}");
    }
    drop(alice);
    server.shutdown();

    let namespaces = store.namespaces();
    let of = |name: &str| -> BTreeSet<u64> {
        namespaces
            .iter()
            .filter(|(_, ns)| ns == name)
            .map(|(id, _)| *id)
            .collect()
    };
    let demo_left = of("demo");
    let retired: BTreeSet<u64> = demo_ids.difference(&demo_left).copied().collect();
    assert!(
        demo_left.is_subset(&demo_ids) && retired.iter().all(|id| Some(*id) == lockup),
        "the demo's schedules, but for a fired one-shot lockup ({lockup:?}): {namespaces:?}"
    );
    assert_eq!(
        of("serve"),
        BTreeSet::from([every, remind]),
        "{namespaces:?}"
    );
    assert_eq!(
        namespaces.len(),
        5 - retired.len(),
        "nothing else, nothing retired but that one-shot: {namespaces:?}"
    );
}

#[test]
fn demo_and_serve_on_one_file_both_keep_all_their_schedules() {
    demo_and_serve_keep_their_own(&Store::sqlite());
}

#[test]
fn demo_and_serve_on_one_postgres_database_both_keep_all_their_schedules() {
    let url = pg_or_skip!("shared_demo_and_serve");
    demo_and_serve_keep_their_own(&Store::Postgres(url));
}

// Two `Runtime` programs.

const CHILD_STORE: &str = "TICKSTEP_SHARED_STORE";
const CHILD_APP: &str = "TICKSTEP_SHARED_APP";
/// How many schedules each program keeps.
const EACH: usize = 4;

/// A program's world: the objects `base..base + 10`, the first a wizard, each with a verb `job`.
struct Objects {
    base: i64,
}

impl World for Objects {
    fn valid(&self, obj: ObjId) -> bool {
        (self.base..self.base + 10).contains(&obj.0)
    }
    fn is_wizard(&self, who: ObjId) -> bool {
        who.0 == self.base
    }
    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        who == obj || (self.is_wizard(who) && self.valid(obj))
    }
    fn verb_callable(&self, _: ObjId, target: ObjId, verb: &str) -> bool {
        self.valid(target) && verb == "job"
    }
}

/// A program's body: a no-op unless the parent set the environment. It opens the store in its
/// own namespace (named by the builder, as a user would for a service), makes its schedules if
/// it has none, runs two seconds of real time, and prints what it fired and holds.
#[test]
fn runtime_program_entry() {
    let (Ok(store), Ok(app)) = (std::env::var(CHILD_STORE), std::env::var(CHILD_APP)) else {
        return;
    };
    let base: i64 = if app == "billing" { 1 } else { 100 };
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    let rt = tickstep::Runtime::builder()
        .store_path(&store)
        .namespace(Namespace::new(&app).unwrap())
        .world(Objects { base })
        .without_commands()
        .build()
        .unwrap();
    rt.verb("job", move |call| {
        say(format!("@F {}", call.schedule().get()));
        Ok(Value::Int(0))
    });
    if let Some(held) = rt.schedules().held_back() {
        say(format!("@HELD {held}"));
    }
    if rt.schedules().live_count() == 0 {
        let wizard = ObjId(base);
        let mut txn = rt.schedules().begin(wizard);
        for i in 0..EACH {
            let target = ObjId(base + 1 + i64::try_from(i).unwrap());
            let id = txn
                .schedule_every(target, "job", 0.2, vec![], Options::new())
                .unwrap();
            say(format!("@C {}", id.get()));
        }
        txn.commit().unwrap();
    }
    rt.run_for(Duration::from_secs(2)).unwrap();
    say(format!("@LIVE {}", rt.schedules().live_count()));
    rt.shutdown().unwrap();
}

/// What one run of a program printed: the ids it created, the ids it fired, how many it held at
/// the end, and any held-back report.
#[derive(Debug, Default)]
struct Said {
    created: BTreeSet<u64>,
    fired: BTreeSet<u64>,
    live: usize,
    held: Vec<String>,
}

/// Runs the two programs at once on `store` and reads what each said.
fn run_both(store: &Store) -> (Said, Said) {
    let location = store.location();
    let run = |app: &str| {
        let mut child = Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "runtime_program_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_STORE, &location)
            .env(CHILD_APP, app)
            .stdin(Stdio::null());
        let out = serve_client::run_bounded(&mut child, Duration::from_secs(60));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut said = Said::default();
        for line in out.stdout.lines() {
            let line = line.unwrap();
            // The test harness prints the test's name on the line the first word follows.
            let Some(at) = line.find('@') else { continue };
            let line = &line[at..];
            let word = |prefix: &str| line.strip_prefix(prefix).map(str::to_owned);
            if let Some(id) = word("@C ") {
                said.created.insert(id.parse().unwrap());
            } else if let Some(id) = word("@F ") {
                said.fired.insert(id.parse().unwrap());
            } else if let Some(n) = word("@LIVE ") {
                said.live = n.parse().unwrap();
            } else if let Some(held) = word("@HELD ") {
                said.held.push(held);
            }
        }
        said
    };
    let said = std::thread::scope(|scope| {
        let apps = ["billing", "reports"].map(|app| scope.spawn(move || run(app)));
        apps.map(|app| app.join().unwrap())
    });
    let [a, b] = said;
    (a, b)
}

fn two_programs_keep_their_own(store: &Store) {
    let (billing, reports) = run_both(store);
    for said in [&billing, &reports] {
        assert_eq!(said.created.len(), EACH, "{said:?}");
        assert_eq!(
            said.fired, said.created,
            "fired all of its own and nothing else: {said:?}"
        );
        assert_eq!(said.live, EACH, "{said:?}");
        assert!(said.held.is_empty(), "{said:?}");
    }
    assert!(billing.created.is_disjoint(&reports.created));

    // Again, both at once: each finds its own, whole.
    let (again_billing, again_reports) = run_both(store);
    for (first, again) in [(&billing, &again_billing), (&reports, &again_reports)] {
        assert!(
            again.created.is_empty(),
            "it found its schedules: {again:?}"
        );
        assert_eq!(again.fired, first.created, "{again:?}");
        assert_eq!(again.live, EACH, "{again:?}");
    }
    let all = Inspector::open(store.location()).unwrap().list().unwrap();
    assert_eq!(all.len(), 2 * EACH, "none retired: {all:?}");
    for s in &all {
        let expected = if billing.created.contains(&s.id.get()) {
            "billing"
        } else {
            "reports"
        };
        assert_eq!(s.namespace, expected);
        assert!(s.run_count >= 2, "fired in both runs: {s:?}");
    }
}

#[test]
fn two_runtime_programs_on_one_file_keep_their_own_schedules() {
    two_programs_keep_their_own(&Store::sqlite());
}

#[test]
fn two_runtime_programs_on_one_postgres_database_keep_their_own_schedules() {
    let url = pg_or_skip!("shared_runtime_programs");
    two_programs_keep_their_own(&Store::Postgres(url));
}
