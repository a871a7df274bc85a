//! `tickstep serve`: a small world server that real clients reach over TCP — raw lines or
//! telnet — and, with `--http` (also `--ws`), over a WebSocket from a browser, with a dashboard
//! of the schedules beside it (docs/serve.md).
//!
//! One tokio current-thread runtime runs everything: the [`TokioDriver`] runs the tickstep
//! runtime's frames (sleeping on tokio's timer, straight through idle time), the accept loop and
//! one task per connection share the thread between frames. Players log in by name; each is a
//! principal of the schedules engine (the wizard named by `--wizard` may manage anyone's
//! schedules). Commands reach all three layers: durable schedules (`remind`, `every`, `at`,
//! `stop`, `info`, `schedules`), kernel tasks (every firing runs as one), and a coroutine command
//! on a mechanism with priorities (`ring`, the shared bell).
//!
//! * [`line_protocol`]: the line protocol and the help text;
//! * [`connection`]: one connection — capped lines, login with a password, replies;
//! * [`telnet`]: the telnet codec, sans-IO (negotiation, line ends, NAWS, TTYPE, CHARSET, ECHO);
//! * [`wire`]: what a session reads and writes, a socket's bytes or a WebSocket's frames;
//! * [`http`]: the HTTP side (`--http`): the play page, the WebSocket endpoint, served by the same
//!   sessions, and the dashboard (`tickstep::dashboard`, the one every tokio host mounts);
//! * [`actions`]: what serve adds to the dashboard — players' names, who is online, actions as a
//!   player's typed commands;
//! * [`gmcp`]: the GMCP packages (`Char.Name`, `tickstep.Schedules`, `tickstep.Client`);
//! * [`accounts`]: passwords' rules and their Argon2id hashes;
//! * [`limits`]: fair use — token buckets per player, per address and for the world;
//! * one player's text is made safe for another's screen by [`tickstep_host::shown`];
//! * [`store_watch`]: the store file watched for deletion, replacement, loss of write access;
//! * [`server`]: the world's state in owned parts, and the one dispatcher of every command
//!   (docs/serve.md §4.10): [`schedule_commands`] (the schedule commands and the quota),
//!   [`presence`] (who is known and online, and their mail), [`fair_use`] (the buckets),
//!   [`firing`] (what the world's verbs do when a schedule fires), [`server_stats`] (`stats`);
//! * [`bell`]: the bell mechanism and its on-demand command cycle;
//! * [`frame_times`]: the frames' step times, on the wall clock and in CPU time (`stats`);
//! * [`registry`]: names → durable ids, and the offline mailbox, beside the store.
//!
//! Costs: docs/serve.md's essay has the bench's numbers and the load they were taken at. Per
//! frame the server's own work is the schedules tick (bounded to 1.5 ms of starts,
//! docs/runtime.md §3.4), one kernel task per firing (a line put on a connection's queue, or on
//! the mail queue), and, after the frame, one write of the mail queue (a transaction of the `SQLite`
//! file, or one statement on a `PostgreSQL` database, sent from its own task); sockets are
//! read and written by the connections' own tasks, between frames. An idle server runs no
//! frames, however many players chat.
//!
//! Decisions: a name is an account with a password (hashed with Argon2id); the wizard's account
//! is named by `--wizard` and its password given by `TICKSTEP_WIZARD_PASSWORD`, never claimed by
//! typing the name; one connection per name; `every` has a 1 s floor for players; a per-player
//! quota of live schedules (`--quota`, 100 by default, the wizard included) and rates of creation
//! per player and per address; lines are capped at `--max-line` bytes (1,024) and a longer line
//! closes the connection; a client that does not log in within `--login-timeout` (60 s) is
//! dropped; a connection is telnet from the first IAC its client sends (the server offers its
//! options at connect), and a telnet client's echo is off while it types a password; `--http`
//! (alias `--ws`) is off unless given, and a WebSocket from a page of another origin is refused;
//! the dashboard is read-only unless `--action-token-file` is given, and its actions are one
//! named player's line commands (the wizard unless `--actions-as`). Each login's hash costs about
//! 19 MiB and some tens of milliseconds of one core, on two hashing threads of its own.

mod accounts;
mod actions;
mod bell;
mod colour;
mod fair_use;
mod firing;
mod frame_times;
mod gmcp;
mod limits;
// The login's state-machine test, beside the session and the transports it drives (a child of
// the session would make session and ws import each other).
mod connection;
mod http;
mod line_protocol;
#[cfg(test)]
mod login_tests;
mod metrics;
mod presence;
mod principals;
mod quota;
pub(crate) mod registry;
mod schedule_commands;
mod server;
mod server_stats;
mod store_watch;
mod telnet;
mod wire;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use clap::Args;
use tickstep::kernel::ErrorChain;
use tickstep::prometheus::PrometheusHandle;
use tickstep::schedules::Namespace;
use tickstep::{Runtime, TokioDriver};
use tokio::net::TcpListener;

use crate::console::say;
use crate::units::parse_positive_duration;
use connection::Limits;
use fair_use::FairUse;
use limits::Rate;
use principals::{Principals, ServeWorld};
use registry::Registry;
use server::Server;

/// Arguments of `tickstep serve`.
#[derive(Args, Debug)]
#[command(after_help = line_protocol::HELP)]
pub(crate) struct ServeArgs {
    /// Address to listen on (loopback by default; port 0 picks a free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:4000")]
    listen: SocketAddr,
    /// The schedule store: a file (players and mail live beside it in FILE.world) or a
    /// postgres:// URL (players and mail in the same database, shared by every server on it).
    #[arg(long, value_name = "FILE|URL", default_value = "./tickstep-serve.db")]
    db: PathBuf,
    /// The player name that is the wizard (may stop and inspect anyone's schedules). Its
    /// password is the environment variable `TICKSTEP_WIZARD_PASSWORD` at a start (which sets it);
    /// nobody can claim the name by typing it.
    #[arg(long, value_name = "NAME", default_value = "wizard")]
    wizard: String,
    /// Most live schedules one player may have.
    #[arg(long, default_value_t = 100)]
    quota: usize,
    /// New schedules one player may make a second (bursts of four seconds' worth); 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 5)]
    creates_per_player: u32,
    /// New schedules the players of one address may make a second, together (bursts of four
    /// seconds' worth); 0: no limit (for a load test whose clients share one address).
    #[arg(long, value_name = "N", default_value_t = 10)]
    creates_per_address: u32,
    /// New names one address may register, then one more every 10 minutes; 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 5)]
    names_per_address: u32,
    /// Longest line accepted, in bytes; a longer one closes the connection.
    #[arg(long, default_value_t = 1024)]
    max_line: usize,
    /// How long a new connection has to type its name.
    #[arg(long, value_parser = parse_positive_duration, default_value = "60s")]
    login_timeout: Duration,
    /// Frames per second of the runtime.
    #[arg(long, default_value_t = 60)]
    frame_rate: u32,
    /// On a postgres:// store: how long this server's claims outlive its last heartbeat, so how
    /// soon another server takes its schedules over after it dies.
    #[arg(long, value_parser = parse_positive_duration, default_value = "10s")]
    lease: Duration,
    /// Also serve HTTP on ADDR: the play page at /, its WebSocket at /ws and the dashboard at
    /// /dashboard (off unless given; use a loopback address such as 127.0.0.1:4001; port 0
    /// picks one). `--ws` is the same option under its first name.
    #[arg(long, alias = "ws", value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Allow the dashboard's actions (stop, pause, resume, trigger) to whoever signs in with the
    /// token in FILE (its first line, at least 16 bytes), or gives it as token= from a script;
    /// without it the dashboard is read-only.
    #[arg(long, value_name = "FILE", requires = "http")]
    action_token_file: Option<PathBuf>,
    /// The player the dashboard's actions act as, under the same permissions (the wizard
    /// unless given; the player must have logged in once).
    #[arg(long, value_name = "NAME", requires = "action_token_file")]
    actions_as: Option<String>,
    /// The dashboard is reached over HTTPS through a proxy that ends TLS: its session cookie is
    /// marked Secure (docs/serve.md §13.8).
    #[arg(long, requires = "http")]
    http_behind_tls: bool,
    /// Serve HTTP without /metrics: no recorder is installed, so the engines' metric updates
    /// cost nothing (for measuring what they cost, docs/serve.md §14.6).
    #[arg(long, requires = "http")]
    no_metrics: bool,
}

/// The environment variable that gives the wizard's password (docs/serve.md §10.4).
const WIZARD_PASSWORD: &str = "TICKSTEP_WIZARD_PASSWORD";

/// Runs the server until Ctrl-C, SIGTERM, SIGHUP or the wizard's `shutdown` (docs/serve.md §1.3).
pub(crate) fn run(args: &ServeArgs) -> Result<(), String> {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    tokio::task::LocalSet::new().block_on(&threads, serve(args))
}

async fn serve(args: &ServeArgs) -> Result<(), String> {
    // Listening at once: a SIGTERM while the server starts stops it cleanly after its first
    // frame, rather than ending it by the signal's default action (docs/runtime.md §9.23).
    let stop = tickstep::shutdown_signal();
    let wizard_name =
        line_protocol::parse_name(&args.wizard).map_err(|e| format!("--wizard: {e}"))?;
    let grant = action_grant(args, &wizard_name)?;
    if args.max_line == 0 {
        return Err("--max-line must be at least 1 byte".to_owned());
    }
    let wizard_password = std::env::var(WIZARD_PASSWORD).ok();
    if let Some(password) = &wizard_password {
        accounts::acceptable(password).map_err(|rule| format!("{WIZARD_PASSWORD}: {rule}"))?;
    }
    // The ports first: a start that cannot listen leaves no files behind (docs/serve.md §12.3).
    let listener = TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let browsers = match args.http {
        Some(addr) => Some(Browsers {
            listener: http::bind(addr).await?,
            grant,
            behind_tls: args.http_behind_tls,
            metrics: if args.no_metrics {
                None
            } else {
                metrics_recorder()
            },
        }),
        None => None,
    };
    let fresh = files_not_there(&args.db);
    let started = start(args, &wizard_name, wizard_password).await;
    let (driver, server, announcements) = match started {
        Ok(started) => started,
        Err(error) => {
            for file in fresh.iter().filter(|file| file.exists()) {
                let _ = std::fs::remove_file(file);
            }
            return Err(error);
        }
    };
    let listeners = (listener, browsers);
    let started = (driver, server, announcements);
    run_server(args, listeners, started, &wizard_name, stop).await
}

/// The files a start on `db` may create: the store, the world file beside it, and their WAL
/// and shared-memory files; those not there yet are removed again if the start fails
/// (docs/serve.md §12.3). A `postgres://` store creates no file.
fn files_not_there(db: &Path) -> Vec<PathBuf> {
    if tickstep::schedules::is_server_location(db) {
        return Vec::new();
    }
    let mut world = db.as_os_str().to_owned();
    world.push(".world");
    let world = PathBuf::from(world);
    [db.to_owned(), world]
        .iter()
        .flat_map(|base| {
            ["", "-wal", "-shm", "-journal"].map(|suffix| {
                let mut name = base.as_os_str().to_owned();
                name.push(suffix);
                PathBuf::from(name)
            })
        })
        .filter(|file| !file.exists())
        .collect()
}

type Started = (
    TokioDriver,
    Rc<Server>,
    Option<tokio::sync::mpsc::UnboundedReceiver<registry::Event>>,
);

/// Opens the registry and the store, and makes sure of the wizard's account
/// (docs/serve.md §10.4).
async fn start(
    args: &ServeArgs,
    wizard_name: &str,
    wizard_password: Option<String>,
) -> Result<Started, String> {
    let chain = |e: registry::RegistryError| ErrorChain(&e).to_string();
    let (registry, announcements) = Registry::open(&args.db).await.map_err(chain)?;
    let wizard = registry.id_for(wizard_name).await.map_err(chain)?;
    registry.set_wizard(wizard).await.map_err(chain)?;
    if let Some(password) = wizard_password {
        let hash = accounts::hash(password).await?;
        registry.set_hash(wizard, &hash).await.map_err(chain)?;
    } else {
        let account = registry.account(wizard_name).await.map_err(chain)?;
        if account.is_some_and(|a| a.hash.is_none()) {
            eprintln!(
                "tickstep serve: the wizard {wizard_name} has no password yet, so nobody can \
                 log in as {wizard_name}; set {WIZARD_PASSWORD} and start again"
            );
        }
    }
    let players = registry.players().await.map_err(chain)?;
    let wizards = registry.wizards().await.map_err(chain)?;
    let principals = Rc::new(Principals {
        root: wizard,
        wizards: std::cell::RefCell::new(wizards.into_iter().collect()),
        players: std::cell::RefCell::new(players.iter().map(|(id, _)| *id).collect()),
    });
    let builder = Runtime::builder()
        .store_path(&args.db)
        .namespace(Namespace::new(NAMESPACE).expect("a valid namespace"))
        .frame_rate(args.frame_rate)
        .lease(args.lease)
        .without_commands()
        .world(ServeWorld(Rc::clone(&principals)));
    let driver = TokioDriver::new(builder).map_err(|e| ErrorChain(&e).to_string())?;
    let server = Server::new(
        Rc::clone(driver.runtime()),
        driver.handle(),
        registry,
        players,
        principals,
        (
            args.quota,
            FairUse {
                creates_per_player: Rate::per_second(args.creates_per_player),
                creates_per_address: Rate::per_second(args.creates_per_address),
                names_per_address: Rate::names(args.names_per_address),
            },
        ),
    );
    Ok((driver, server, announcements))
}

async fn run_server(
    args: &ServeArgs,
    (listener, browsers): (TcpListener, Option<Browsers>),
    (mut driver, server, announcements): Started,
    wizard_name: &str,
    stop: impl Future<Output = ()>,
) -> Result<(), String> {
    let watch_task = {
        let watching = if tickstep::schedules::is_server_location(&args.db) {
            store_watch::Watching::Database
        } else {
            store_watch::Watching::Files(files_watched(&args.db))
        };
        Some(tokio::task::spawn_local(store_watch::watch(
            watching,
            Rc::downgrade(&server),
        )))
    };
    let listener_task = announcements
        .map(|events| tokio::task::spawn_local(follow_other_nodes(events, Rc::downgrade(&server))));
    server
        .stats
        .frames
        .set_period(driver.runtime().frame_loop().period());
    let starter = Rc::downgrade(&server);
    driver.before_frame(move |_| {
        if let Some(server) = starter.upgrade() {
            server.stats.frames.step_starts();
        }
    });
    let recorder = Rc::downgrade(&server);
    driver.on_frame(move |rt| {
        if let Some(server) = recorder.upgrade() {
            server.stats.frames.record(rt.frame_loop().heartbeat_time());
            server.presence.between_frames();
        }
    });

    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    say(format!("tickstep serve: listening on {bound}"));
    say(format!(
        "tickstep serve: {} schedules loaded from {} (namespace {NAMESPACE}); the wizard is \
         {wizard_name}; try: nc {} {}",
        driver.runtime().schedules().live_count(),
        crate::store::shown(&args.db),
        bound.ip(),
        bound.port()
    ));
    if let Some(held) = driver.runtime().schedules().held_back() {
        say(format!("tickstep serve: {held}"));
    }
    let limits = Limits {
        max_line: args.max_line,
        login_timeout: args.login_timeout,
    };
    let acceptor = tokio::task::spawn_local(accept(listener, Rc::clone(&server), limits));
    let browsers = browsers.map(|browsers| start_browsers(browsers, Rc::clone(&server), limits));
    let result = driver.run_until(stop).await;
    acceptor.abort();
    for task in [listener_task, watch_task, browsers].into_iter().flatten() {
        task.abort();
    }
    server.presence.close().await;
    let trouble = server.schedules.store_trouble();
    drop(server);
    result.map_err(|e| ErrorChain(&e).to_string())?;
    if let Some(why) = trouble {
        return Err(format!(
            "stopped; the store is NOT committed where a restart will find it: {why}"
        ));
    }
    say("tickstep serve: stopped; the store is committed");
    Ok(())
}

/// The dashboard's action grant, if `--action-token-file` is given (docs/serve.md §13.8).
fn action_grant(
    args: &ServeArgs,
    wizard_name: &str,
) -> Result<Option<tickstep::dashboard::ActionGrant>, String> {
    let Some(path) = &args.action_token_file else {
        return Ok(None);
    };
    let name = match &args.actions_as {
        Some(name) => line_protocol::parse_name(name).map_err(|e| format!("--actions-as: {e}"))?,
        None => wizard_name.to_owned(),
    };
    tickstep::dashboard::ActionGrant::from_file(path, name).map(Some)
}

/// Starts the HTTP side (`--http`, docs/serve.md §9, §13) and prints where it listens.
fn start_browsers(
    Browsers {
        listener,
        grant,
        behind_tls,
        metrics,
    }: Browsers,
    server: Rc<Server>,
    limits: Limits,
) -> tokio::task::JoinHandle<()> {
    if let Ok(bound) = listener.local_addr() {
        say(format!("tickstep serve: browsers on http://{bound}/"));
    }
    let access = http::Access { grant, behind_tls };
    tokio::task::spawn_local(http::serve(listener, server, limits, access, metrics))
}

/// The HTTP side, bound before any file is made (docs/serve.md §12.3): its listener, the action
/// grant of `--action-token-file`, and the recorder behind `/metrics`.
struct Browsers {
    listener: TcpListener,
    grant: Option<tickstep::dashboard::ActionGrant>,
    /// `--http-behind-tls`: the session cookie is `Secure`.
    behind_tls: bool,
    metrics: Option<PrometheusHandle>,
}

/// The process's Prometheus recorder for `/metrics` (docs/serve.md §13.9), installed before the
/// runtime is built because the engines register their metric handles when they are built
/// (docs/observability.md). A process holds one recorder: if one is already installed, serve
/// goes on without `/metrics` and says so.
fn metrics_recorder() -> Option<PrometheusHandle> {
    match tickstep::prometheus::install_recorder() {
        Ok(handle) => Some(handle),
        Err(error) => {
            say(format!("tickstep serve: no /metrics: {error}"));
            None
        }
    }
}

/// The files the store watch looks at: the store and the world file, which must also never
/// shrink, and the store's WAL and WAL index (none for `postgres://`; a file missing at the start
/// is not watched). The world file keeps its WAL index in memory (docs/serve.md §12.4).
fn files_watched(db: &Path) -> Vec<store_watch::Watched> {
    if tickstep::schedules::is_server_location(db) {
        return Vec::new();
    }
    let with = |base: &Path, suffix: &str| {
        let mut name = base.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let world = with(db, ".world");
    [
        store_watch::Watched::database(db),
        store_watch::Watched::new(&with(db, "-wal")),
        store_watch::Watched::new(&with(db, "-shm")),
        store_watch::Watched::database(&world),
        store_watch::Watched::new(&with(&world, "-wal")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

async fn accept(listener: TcpListener, server: Rc<Server>, limits: Limits) {
    loop {
        match listener.accept().await {
            Ok((socket, _)) => {
                let open = server.metrics.connected(metrics::Transport::Tcp);
                let server = Rc::clone(&server);
                tokio::task::spawn_local(async move {
                    connection::serve(server, socket, limits).await;
                    drop(open);
                });
            }
            // Out of descriptors and the like: the listener stays; back off briefly.
            Err(error) => {
                eprintln!("tickstep serve: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Acts on what other server nodes on the same database announce (docs/serve.md §6): a new
/// player joins this world too, and mail for a player connected here is shown at once.
async fn follow_other_nodes(
    mut events: tokio::sync::mpsc::UnboundedReceiver<registry::Event>,
    server: std::rc::Weak<Server>,
) {
    while let Some(event) = events.recv().await {
        let Some(server) = server.upgrade() else {
            return;
        };
        match event {
            registry::Event::Player(who, name) => server.presence.add_player(who, name),
            registry::Event::Mail(who) => server.presence.deliver_mail(who).await,
        }
    }
}

/// Completes when either future does (the other is dropped); `a` is polled first. tokio's
/// `select!` would need its `macros` feature, which rebuilds `syn` with its `full` feature and
/// every derive after it: a minute of build for two lines of code.
pub(crate) async fn either(a: impl Future<Output = ()>, b: impl Future<Output = ()>) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    std::future::poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() || b.as_mut().poll(cx).is_ready() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

/// The namespace serve's schedules live in (docs/schedules.md §15.4): another application on the
/// same database keeps its own.
const NAMESPACE: &str = "serve";
