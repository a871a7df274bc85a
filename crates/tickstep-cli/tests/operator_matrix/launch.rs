//! How the matrix starts each host on a store and reads what it shows (docs/runtime.md §7.13):
//! `tickstep serve`, `tickstep demo`, the `Runtime` program and `tickstep dashboard`, each a real
//! process, and the schedules each carries from one run to the next.

use super::*;

/// serve, with `--http`, its dashboard's actions and its wizard logged in, who reads `info`.
pub(super) fn start_serve(place: &Place, carried: Option<Carried>) -> Running {
    let token_file = place.token_file();
    let extra = ["--http", "127.0.0.1:0", "--action-token-file", &token_file];
    let server = Server::start(place.path(), &extra);
    let dashboard = server.http_addr();
    let wizard = server.login("merlin");
    let carried = carried.unwrap_or_else(|| serve_schedules(&server));
    let process = Process::Serve(server);
    Running::new((Host::Serve, place), process, dashboard, carried).wizard(wizard)
}

/// The demo, until Ctrl-C, read up to its first status line (its schedules made or found, its
/// store live), and a `tickstep dashboard` with actions beside it.
pub(super) fn start_demo(place: &Place, carried: Option<Carried>) -> Running {
    let mut demo = spawn_printing(Command::new(env!("CARGO_BIN_EXE_tickstep")).args([
        "demo",
        "--db",
        place.arg(),
    ]));
    let mut seen = Vec::new();
    read_until(&mut demo, &mut seen, "its first status line", is_status);
    let token_file = place.token_file();
    let beside = Dashboard::start(
        place.path(),
        &["--action-token-file", &token_file, "--namespace", "demo"],
    );
    let carried = carried.unwrap_or_else(|| demo_schedules(&seen));
    let dashboard = beside.addr.clone();
    let mut running = Running::new(
        (Host::Demo, place),
        Process::Plain(demo),
        dashboard,
        carried,
    );
    running.seen = seen;
    running.beside = Some(beside);
    running
}

/// The `Runtime` program: this test binary, run again as [`program::entry`], read up to its
/// `@READY`; it must find no firing a previous run left in flight.
pub(super) fn start_program(place: &Place, carried: Option<Carried>) -> Running {
    let mut process = spawn_printing(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "runtime_program_process_entry", "--nocapture"])
            .env(program::STORE, place.arg())
            .env(program::TOKEN, TOKEN),
    );
    let mut seen = Vec::new();
    read_until(&mut process, &mut seen, "@READY", |l| l == "@READY");
    assert!(seen.iter().any(|l| l == "@ABANDONED 0"), "{seen:?}");
    let said = |prefix: &str| -> String {
        seen.iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {seen:?}"))
            .to_owned()
    };
    let dashboard = said("@HTTP ");
    let id = |key: &str| said(&format!("@S {key} ")).parse().unwrap();
    let carried = carried.unwrap_or_else(|| Carried {
        targets: Targets {
            cli: id("cli"),
            dashboard: id("dashboard"),
            control: Some(id("control")),
        },
        control_work: Vec::new(),
    });
    let process = Process::Plain(process);
    let mut running = Running::new((Host::Program, place), process, dashboard, carried);
    running.seen = seen;
    running
}

/// `tickstep dashboard` with actions, on a store a short demo made first (on a virtual clock).
pub(super) fn start_dashboard(place: &Place, carried: Option<Carried>) -> Running {
    let carried = carried.unwrap_or_else(|| {
        let out = run::tickstep(&["demo", "--virtual", "--duration", "2s", "--db", place.arg()]);
        assert!(out.status.success(), "{}", run::stderr(&out));
        let said: Vec<String> = run::stdout(&out).lines().map(str::to_owned).collect();
        demo_schedules(&said)
    });
    let token_file = place.token_file();
    let dashboard = Dashboard::start(
        place.path(),
        &["--action-token-file", &token_file, "--namespace", "demo"],
    );
    let addr = dashboard.addr.clone();
    Running::new(
        (Host::Dashboard, place),
        Process::Dashboard(dashboard),
        addr,
        carried,
    )
}

/// Reads `process`'s stdout into `seen` until `done` holds of a line (bounded).
pub(super) fn read_until(
    process: &mut Printing,
    seen: &mut Vec<String>,
    what: &str,
    mut done: impl FnMut(&str) -> bool,
) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match process.lines.recv_timeout(left) {
            Ok(line) => {
                let found = done(&line);
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => panic!("never printed {what}; printed {seen:#?}"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("exited before printing {what}; printed {seen:#?}")
            }
        }
    }
}

/// A clean stop: status 0, the line that says the store is committed, no word of [`LOSS`].
pub(super) fn clean(host: Host, ended: &Ended, said: &[String], committed: &str) {
    let all = || said.iter().chain(&ended.stderr);
    assert!(
        ended.status.success(),
        "the {host:?} host exited with {}: {:#?}",
        ended.status,
        all().collect::<Vec<_>>()
    );
    assert!(
        said.iter().any(|l| l.starts_with(committed)),
        "the {host:?} host never said {committed:?}: {said:#?}"
    );
    for line in all() {
        for word in LOSS {
            assert!(
                !line.contains(word),
                "the {host:?} host reported {word:?}: {line:?}"
            );
        }
    }
}

/// One of the demo's status lines, `[   3s] budget …`.
pub(super) fn is_status(line: &str) -> bool {
    line.starts_with('[') && line.split_once("s] budget").is_some()
}

/// serve's schedules: a player makes three that tell her every second, and leaves, so their
/// firings go to her mailbox; she keeps the lines that came before she left.
pub(super) fn serve_schedules(server: &Server) -> Carried {
    let mut player = server.login("player");
    let mut every = |text: &str| id_of(&player.ask(&format!("every 1 tell {text}")));
    let targets = Targets {
        cli: every("cli"),
        dashboard: every("dashboard"),
        control: Some(every("control")),
    };
    assert_eq!(player.ask("quit"), "ok: bye");
    player.expect_closed();
    let line = format!("[#{}] control", targets.control.unwrap());
    let control_work = vec![player.seen.iter().filter(|l| **l == line).count() as u64];
    Carried {
        targets,
        control_work,
    }
}

/// The demo's bell (every 2 s) and regeneration (every 1 s), from what it said at start
/// (`  created schedule 4: bell`, `  found schedule 4 from an earlier run: bell, …`).
pub(super) fn demo_schedules(said: &[String]) -> Carried {
    let id = |name: &str| {
        said.iter()
            .find_map(|line| {
                let rest = line.trim_start().strip_prefix("created schedule ")?;
                let (id, named) = rest.split_once(": ")?;
                (named == name).then(|| id.parse().unwrap())
            })
            .unwrap_or_else(|| panic!("the demo made no {name}: {said:#?}"))
    };
    Carried {
        targets: Targets {
            cli: id("bell"),
            dashboard: id("regenerate"),
            control: None,
        },
        control_work: Vec::new(),
    }
}

/// The device and inode of `path`, by `stat` (none when nothing is there): the test never
/// opens a file `SQLite` owns.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}
