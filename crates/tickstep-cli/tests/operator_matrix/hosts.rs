//! The matrix's hosts (docs/runtime.md §7.13): how each is started on a store, where it shows a
//! schedule, how it shows that it goes on working, and how it is stopped cleanly — each a real
//! process: `tickstep serve`, `tickstep demo`, the `Runtime` program (this test binary) and
//! `tickstep dashboard`.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use crate::dashboard_process::Dashboard;
use crate::http_client;
use crate::program;
use crate::run;
use crate::serve_client::{Client, Ended, PATIENCE, Printing, Server, id_of, spawn_printing};

// A file beside this one, named by its path: this module is itself loaded by a path.
#[path = "launch.rs"]
mod launch;

use launch::*;

/// The action token of every dashboard in the matrix.
pub(crate) const TOKEN: &str = "operator-matrix-token-31";

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(100);

/// Words no host may print, on stdout or stderr, at any time: a store not committed or lost
/// (docs/serve.md §12.2), a file deleted or replaced under it (docs/serve.md §12.1), mail not
/// written (docs/serve.md §4.6), firings cut off by the stop (docs/runtime.md §6.2), an error or
/// a panic.
const LOSS: [&str; 8] = [
    "NOT committed",
    "while serving",
    "lost",
    "not written",
    "in flight when the last run stopped",
    "interrupted",
    "error",
    "panicked",
];

/// A host that holds a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    /// `tickstep serve`, with `--http` and its dashboard's actions.
    Serve,
    /// `tickstep demo`, until Ctrl-C, with a `tickstep dashboard` beside it.
    Demo,
    /// A job runner on the public facade of the `tickstep` crate, with the runtime's dashboard.
    Program,
    /// `tickstep dashboard`, the store's dashboard with actions, and no engine.
    Dashboard,
}

impl Host {
    /// The namespace its schedules live in (docs/schedules.md §15.4): serve's and the demo's
    /// own, the program's name (this test binary's: the program is this binary, run again), and
    /// for the store's dashboard the demo's, which seeds its store.
    pub(crate) fn namespace(self) -> String {
        match self {
            Host::Serve => "serve".into(),
            Host::Demo | Host::Dashboard => "demo".into(),
            Host::Program => tickstep::host::program_namespace().to_string(),
        }
    }
}

/// Which store a cell runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    Sqlite,
    Postgres,
}

/// Where a cell's store is: a `SQLite` file in a directory of the cell's own, or a `PostgreSQL`
/// database made for it, dropped at the end when the cell passed (kept to look at otherwise).
pub(crate) struct Place {
    location: String,
    dir: tempfile::TempDir,
    postgres: bool,
}

impl Place {
    /// A fresh store for the cell `label`; `None` (after saying why) when there is no
    /// `PostgreSQL` to run on and that is allowed (`pg_or_skip!`'s rule).
    pub(crate) fn new(store: Store, label: &str) -> Option<Place> {
        let dir = tempfile::tempdir().unwrap();
        let (location, postgres) = match store {
            Store::Sqlite => (dir.path().join("world.db").display().to_string(), false),
            Store::Postgres => (crate::common::pg::database_or_skip(label)?, true),
        };
        std::fs::write(dir.path().join("token"), format!("{TOKEN}\n")).unwrap();
        Some(Place {
            location,
            dir,
            postgres,
        })
    }

    /// The store as `--db` takes it.
    pub(crate) fn arg(&self) -> &str {
        &self.location
    }

    fn path(&self) -> &Path {
        Path::new(&self.location)
    }

    fn token_file(&self) -> String {
        self.dir.path().join("token").display().to_string()
    }

    /// The `SQLite` files of the store: the database, its WAL and its WAL index.
    fn sqlite_files(&self) -> Option<[PathBuf; 3]> {
        (!self.postgres).then(|| {
            ["", "-wal", "-shm"].map(|suffix| PathBuf::from(format!("{}{suffix}", self.location)))
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.postgres && !std::thread::panicking() {
            crate::common::pg::drop_database(&self.location);
        }
    }
}

/// The schedules the operators act on: one each, and a control no one touches (on a host that
/// fires and has one of its own), whose steady firing shows the host goes on working.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Targets {
    cli: u64,
    dashboard: u64,
    control: Option<u64>,
}

impl Targets {
    /// The schedule `via` acts on.
    pub(crate) fn of(&self, via: crate::Via) -> u64 {
        match via {
            crate::Via::Cli => self.cli,
            crate::Via::Dashboard => self.dashboard,
        }
    }
}

/// What a host carries from one lifetime to the next: its schedules, and how many of the
/// control's firings it has shown done so far (serve: lines to their player; the program: runs
/// of its verb).
pub(crate) struct Carried {
    targets: Targets,
    /// The control's firings shown done, lifetime by lifetime.
    control_work: Vec<u64>,
}

/// A schedule as the host shows it.
#[derive(Debug)]
pub(crate) struct Shown {
    pub(crate) runs: u64,
    pub(crate) faults: u64,
    pub(crate) paused: bool,
    /// The pause note as shown (quoted, escaped).
    pub(crate) note: String,
    pub(crate) trigger_pending: bool,
    /// A backfill under way.
    pub(crate) backfill: bool,
}

impl Shown {
    /// From the fields `field(KEY)` of `schedule_info` (docs/schedules.md §9.1, §9.2).
    fn from(field: impl Fn(&str) -> String) -> Shown {
        let number = |key: &str| {
            let value = field(key);
            value
                .parse()
                .unwrap_or_else(|_| panic!("{key}={value:?} is no count"))
        };
        Shown {
            runs: number("run_count"),
            faults: number("fault_count"),
            paused: field("paused") == "true",
            note: field("pause_note"),
            trigger_pending: field("trigger_pending") == "true",
            backfill: field("backfill") != "0",
        }
    }

    /// From serve's `info` line of fields, `  id=1 … run_count=3 …` (docs/serve.md §4.8). A
    /// value ends at a space: the matrix's notes have none.
    fn from_info(line: &str) -> Shown {
        Shown::from(|key| {
            let at = line
                .find(&format!(" {key}="))
                .unwrap_or_else(|| panic!("no {key} in {line}"));
            line[at + key.len() + 2..]
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
    }

    /// From a dashboard's page of the schedule, `<tr><th>run_count</th><td>3</td></tr>`
    /// (docs/serve.md §13.2).
    fn from_page(body: &str) -> Shown {
        Shown::from(|key| {
            let head = format!("<tr><th>{key}</th><td>");
            let at = body
                .find(&head)
                .unwrap_or_else(|| panic!("no {key} on the page: {body}"));
            let rest = &body[at + head.len()..];
            rest[..rest.find("</td>").unwrap()].to_owned()
        })
    }
}

/// The process of a running host.
enum Process {
    Serve(Server),
    Dashboard(Dashboard),
    /// The demo or the program.
    Plain(Printing),
}

/// A host running on a cell's store.
pub(crate) struct Running {
    host: Host,
    process: Process,
    /// Its lines on stdout read so far in this lifetime.
    seen: Vec<String>,
    /// The dashboard it acts and shows through: its own, or the one beside it.
    dashboard: String,
    /// The demo's `tickstep dashboard` beside it.
    beside: Option<Dashboard>,
    /// serve's wizard, who reads `info`.
    wizard: Option<Client>,
    carried: Carried,
    /// The store's files and their device and inode when this lifetime started.
    files: Vec<(PathBuf, (u64, u64))>,
    /// The store, as `--db` takes it.
    store: String,
}

impl Running {
    /// The host this is.
    pub(crate) fn host(&self) -> Host {
        self.host
    }

    /// Starts `host` on `place`: on a fresh store (`carried` none), making the schedules the
    /// operators act on, or again on the store an earlier lifetime left.
    pub(crate) fn start(host: Host, place: &Place, carried: Option<Carried>) -> Running {
        let mut running = match host {
            Host::Serve => start_serve(place, carried),
            Host::Demo => start_demo(place, carried),
            Host::Program => start_program(place, carried),
            Host::Dashboard => start_dashboard(place, carried),
        };
        if running.fires() {
            // A host that holds the store open: its files are there, and stay the same files.
            running.files = place
                .sqlite_files()
                .into_iter()
                .flatten()
                .map(|file| {
                    let identity = identity(&file)
                        .unwrap_or_else(|| panic!("{} is not there", file.display()));
                    (file, identity)
                })
                .collect();
        }
        running
    }

    fn new(
        (host, place): (Host, &Place),
        process: Process,
        dashboard: String,
        carried: Carried,
    ) -> Running {
        Running {
            host,
            process,
            seen: Vec::new(),
            dashboard,
            beside: None,
            wizard: None,
            carried,
            files: Vec::new(),
            store: place.arg().to_owned(),
        }
    }

    fn wizard(mut self, wizard: Client) -> Running {
        self.wizard = Some(wizard);
        self
    }

    pub(crate) fn targets(&self) -> Targets {
        self.carried.targets
    }

    /// The `HOST:PORT` of the dashboard it acts and shows through.
    pub(crate) fn dashboard(&self) -> &str {
        &self.dashboard
    }

    /// Whether it runs an engine that fires schedules (all but `tickstep dashboard`).
    pub(crate) fn fires(&self) -> bool {
        self.host != Host::Dashboard
    }

    fn printing(&mut self) -> &mut Printing {
        match &mut self.process {
            Process::Serve(server) => &mut server.process,
            Process::Dashboard(dashboard) => &mut dashboard.process,
            Process::Plain(printing) => printing,
        }
    }

    /// Schedule `id` as the host shows it, or `None` when the host has no such schedule: serve
    /// in its wizard's `info`, the program in its own dashboard, the demo in the dashboard beside
    /// it (reading the store the demo writes), `tickstep dashboard` in itself.
    pub(crate) fn shown(&mut self, id: u64) -> Option<Shown> {
        if let Some(wizard) = &mut self.wizard {
            let reply = wizard.ask(&format!("info {id}"));
            if reply.starts_with(&format!("error: there is no schedule #{id}")) {
                return None;
            }
            assert!(reply.starts_with(&format!("ok: #{id} ")), "{reply}");
            return Some(Shown::from_info(&wizard.expect("  id=")));
        }
        let page = http_client::get(&self.dashboard, &format!("/dashboard/schedules/{id}"));
        match page.status {
            200 => Some(Shown::from_page(&page.body)),
            404 => None,
            status => panic!("/dashboard/schedules/{id}: {status} {}", page.body),
        }
    }

    /// Waits until the host shows `id` live and `done` holds of it.
    pub(crate) fn wait_for(&mut self, id: u64, what: &str, done: impl Fn(&Shown) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let shown = self.shown(id);
            if shown.as_ref().is_some_and(&done) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "#{id} never showed {what}: {shown:?}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Waits until the host no longer has `id`; the demo also says an operator stopped it.
    pub(crate) fn wait_gone(&mut self, id: u64) {
        let deadline = Instant::now() + PATIENCE;
        while self.shown(id).is_some() {
            assert!(Instant::now() < deadline, "#{id} was never dropped");
            std::thread::sleep(POLL);
        }
        if self.host == Host::Demo {
            let line = format!("schedule {id} was stopped by an operator");
            self.read_until(&line, |l| l == line);
        }
    }

    /// Waits until the host has surely polled the store's notes and committed its firings since
    /// the last command: the control has fired twice more, or the demo printed two more status
    /// lines (each a second of its engine's frames). A store alone has nothing to wait for.
    pub(crate) fn settle(&mut self) {
        match self.host {
            Host::Serve | Host::Program => {
                let control = self.carried.targets.control.expect("a control");
                let runs = self.shown(control).expect("the control is live").runs + 2;
                self.wait_for(control, "firing on", |s| s.runs >= runs);
            }
            Host::Demo => {
                let mut more = 0;
                self.read_until("two more status lines", |l| {
                    more += usize::from(is_status(l));
                    more == 2
                });
            }
            Host::Dashboard => {}
        }
    }

    /// The host goes on with its work after the commands: serve takes and fires a new
    /// schedule (what a server that found its store lost refuses, docs/serve.md §12.1), the
    /// others keep firing, `tickstep dashboard` keeps serving its list.
    pub(crate) fn keeps_working(&mut self) {
        if let Some(wizard) = &mut self.wizard {
            let reply = wizard.ask("remind 0 still-working");
            assert!(reply.starts_with("ok: schedule #"), "{reply}");
            wizard.expect(&format!("[#{}] still-working", id_of(&reply)));
        } else if self.host == Host::Dashboard {
            let list = http_client::get(&self.dashboard, "/dashboard");
            assert_eq!(list.status, 200, "{}", list.body);
        } else {
            self.settle();
        }
    }

    /// How many times the control has fired, as the host shows it.
    pub(crate) fn control_runs(&mut self) -> Option<u64> {
        let control = self.carried.targets.control?;
        Some(self.shown(control).expect("the control is live").runs)
    }

    /// Pauses the control through the host's dashboard, so that nothing fires it from now on.
    pub(crate) fn hold_control(&mut self) {
        let Some(control) = self.carried.targets.control else {
            return;
        };
        let path = format!("/dashboard/schedules/{control}/pause");
        let body = format!("token={TOKEN}&note=held");
        let answer = http_client::post(&self.dashboard, &path, http_client::FORM, &body);
        assert_eq!(answer.status, 303, "{}", answer.body);
    }

    /// Every firing of the (held) control that the store counts was done where the host shows
    /// it, once: serve's player finds one line each, online or in the mailbox (docs/serve.md
    /// §4.5, §4.6), across every stop and restart; the program ran its verb once each. A firing
    /// planned before the pause and still waiting for its write at the stop is counted already
    /// and runs after the restart (docs/schedules.md §11.42): this lifetime may owe it.
    pub(crate) fn account_control(&mut self) {
        let Some(control) = self.carried.targets.control else {
            return;
        };
        let shown = self.shown(control).expect("the control is live");
        assert!(shown.paused && shown.faults == 0, "{shown:?}");
        let mut work = self.carried.control_work.clone();
        let owed = shown.runs.saturating_sub(work.iter().sum());
        let deadline = Instant::now() + PATIENCE;
        let now = if let Process::Serve(server) = &self.process {
            let mut player = server.login("player");
            let lines = [
                format!("[mail] [#{control}] control"),
                format!("[#{control}] control"),
            ];
            let count =
                |player: &Client| player.seen.iter().filter(|l| lines.contains(l)).count() as u64;
            // Each reply comes after every line the server had for the player before it.
            player.ask("who");
            while count(&player) < owed && Instant::now() < deadline {
                std::thread::sleep(POLL);
                player.ask("who");
            }
            count(&player)
        } else {
            self.pump();
            while self.control_lines() < owed && Instant::now() < deadline {
                std::thread::sleep(POLL);
                self.pump();
            }
            // A round trip on its thread, and whatever it printed before: nothing more.
            self.shown(control);
            self.pump();
            self.control_lines()
        };
        work.push(now);
        let done: u64 = work.iter().sum();
        if done != shown.runs {
            let ask = |what: &[&str]| {
                let mut args = vec!["schedules", "--db", &self.store];
                args.extend_from_slice(what);
                run::stdout(&run::tickstep(&args))
            };
            let id = control.to_string();
            panic!(
                "the control fired {} times; the host shows {done} of them done ({work:?} by \
                 lifetime); its history:\n{}\nrunning:\n{}\ninfo:\n{}\nprinted: {:#?}",
                shown.runs,
                ask(&["history", &id]),
                ask(&["running"]),
                ask(&["info", &id, "--json"]),
                self.seen,
            );
        }
    }

    /// The program's lines for runs of its verb by the control, this lifetime.
    fn control_lines(&self) -> u64 {
        let Some(control) = self.carried.targets.control else {
            return 0;
        };
        let line = format!("@F {control} ");
        self.seen.iter().filter(|l| l.starts_with(&line)).count() as u64
    }

    /// Checks the store's `SQLite` files are still the ones there at the start (by `stat`),
    /// `after` what.
    pub(crate) fn check_files(&self, after: &str) {
        for (file, was) in &self.files {
            let now = identity(file);
            assert!(
                now == Some(*was),
                "{} was {} while the {:?} host ran (seen after {after})",
                file.display(),
                if now.is_some() { "replaced" } else { "deleted" },
                self.host
            );
        }
    }

    /// Stops the host as a service manager would, with SIGTERM (docs/runtime.md §7.11), and
    /// checks it exited with status 0, said its store is committed, and reported
    /// nothing lost; and the `SQLite` files stayed the same to the end.
    pub(crate) fn stop_cleanly(mut self) -> Carried {
        self.check_files("the lifetime's commands");
        let host = self.host;
        let (signal, committed) = match host {
            Host::Serve => ("-TERM", "tickstep serve: stopped; the store is committed"),
            Host::Demo => ("-TERM", "store committed: "),
            Host::Program => ("-TERM", "@STOPPED committed"),
            Host::Dashboard => ("-TERM", "tickstep dashboard: stopped"),
        };
        self.printing().signal(signal);
        let ended = self.printing().wait_exit();
        let mut said = std::mem::take(&mut self.seen);
        said.extend(ended.rest.iter().cloned());
        clean(host, &ended, &said, committed);
        if let Some(wizard) = &self.wizard {
            // A store found lost is told to every wizard connected (docs/serve.md §12.1).
            let told: Vec<_> = wizard
                .seen
                .iter()
                .filter(|l| l.starts_with("[system]"))
                .collect();
            assert!(told.is_empty(), "the wizard was told {told:?}");
        }
        if let Some(mut beside) = self.beside.take() {
            beside.process.signal("-TERM");
            let ended = beside.process.wait_exit();
            clean(
                Host::Dashboard,
                &ended,
                &ended.rest,
                "tickstep dashboard: stopped",
            );
        }
        self.seen = said;
        if host == Host::Program {
            let lines = self.control_lines();
            self.carried.control_work.push(lines);
        }
        self.carried
    }

    /// Moves what the host printed meanwhile into `seen`.
    fn pump(&mut self) {
        while let Ok(line) = self.printing().lines.try_recv() {
            self.seen.push(line);
        }
    }

    /// Reads the host's stdout until `done` holds of a line (bounded).
    fn read_until(&mut self, what: &str, done: impl FnMut(&str) -> bool) {
        let mut seen = std::mem::take(&mut self.seen);
        read_until(self.printing(), &mut seen, what, done);
        self.seen = seen;
    }
}
