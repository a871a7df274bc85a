//! [`RuntimeBuilder`]: every knob of a [`Runtime`], with the defaults of docs/runtime.md §1–§4.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::{ManualClock, SystemClock};
use tickstep_kernel::{FrameLoop, Kernel, KernelConfig, Priority, Role};
use tickstep_schedules::{OpenWorld, Runner, World};

use crate::host::{HostCore, HostSettings};
use crate::hosted::{FrameWaits, HostedClock};
use crate::wiring::Wiring;
use crate::{FiringLimits, Runtime, RuntimeClock, RuntimeError, SettingsError};

/// The command cycle's default period: one 20 ms robot loop.
///
/// ```
/// assert_eq!(tickstep::DEFAULT_COMMAND_PERIOD.as_millis(), 20);
/// ```
pub const DEFAULT_COMMAND_PERIOD: Duration = Duration::from_millis(20);
/// The default frame rate: 60 fps.
///
/// ```
/// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
/// assert_eq!(rt.frame_loop().period(), std::time::Duration::from_secs(1) / tickstep::DEFAULT_FRAME_RATE);
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
pub const DEFAULT_FRAME_RATE: u32 = 60;
/// The store's file name inside the data directory.
///
/// ```
/// assert!(tickstep::default_store_path().ends_with(tickstep::STORE_FILE_NAME));
/// ```
pub const STORE_FILE_NAME: &str = "tickstep.db";

/// Where the durable schedules live.
///
/// ```
/// use tickstep::Store;
/// assert_eq!(Store::default(), Store::DefaultPath);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Store {
    /// [`default_store_path`]: the platform's data directory, or `./tickstep.db`.
    #[default]
    DefaultPath,
    /// This `SQLite` file (created if missing, with its directory).
    Path(PathBuf),
    /// No file: schedules vanish with the runtime (tests, one-off tools).
    InMemory,
}

/// The default store file: `$XDG_DATA_HOME/tickstep/tickstep.db`, else
/// `~/.local/share/tickstep/tickstep.db` on Unix, `~/Library/Application Support/tickstep/...` on
/// macOS, `%APPDATA%\tickstep\...` on Windows, and `./tickstep.db` when none of those is known.
///
/// ```
/// let path = tickstep::default_store_path();
/// assert!(path.ends_with("tickstep.db"));
/// ```
pub fn default_store_path() -> PathBuf {
    data_dir().map_or_else(
        || PathBuf::from(STORE_FILE_NAME),
        |dir| dir.join("tickstep").join(STORE_FILE_NAME),
    )
}

fn data_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        return var("APPDATA");
    }
    if cfg!(target_os = "macos") {
        return var("HOME").map(|h| h.join("Library").join("Application Support"));
    }
    var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
}

/// Builds a [`Runtime`]. Start from [`Runtime::builder`].
///
/// Defaults: server role, 60 fps, the system clock, the [default store](default_store_path),
/// diagnostics on for a server and off for a client (as the kernel boots them), a 20 ms command
/// cycle, a 10 ms schedules tick, firings at Normal priority, and [`OpenWorld`].
///
/// ```
/// use std::time::Duration;
/// use tickstep::Runtime;
/// use tickstep::kernel::{ManualClock, Role};
///
/// let rt = Runtime::builder()
///     .role(Role::Client)
///     .frame_rate(30)
///     .manual_clock(ManualClock::new())
///     .in_memory_store()
///     .command_period(Duration::from_millis(50))
///     .build()?;
/// assert_eq!(rt.kernel().role(), Role::Client);
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
pub struct RuntimeBuilder {
    /// What every host shares: role, budget, frame target, schedules, firings.
    settings: HostSettings,
    frame_rate: u32,
    clock: Option<RuntimeClock>,
    store: Store,
    command_period: Option<Duration>,
    world: Box<dyn World>,
    runner: Option<Box<dyn Runner>>,
    /// Set by the tokio driver: frames ask the host to wait instead of sleeping the thread.
    host_waits: Option<FrameWaits>,
}

/// The builder is the way into a runtime: it lives here, beside the builder, so the runtime's
/// file names nothing of the builder.
impl Runtime {
    /// A builder with the defaults (see [`RuntimeBuilder`]).
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        RuntimeBuilder {
            settings: HostSettings::default(),
            frame_rate: DEFAULT_FRAME_RATE,
            clock: None,
            store: Store::DefaultPath,
            command_period: Some(DEFAULT_COMMAND_PERIOD),
            world: Box::new(OpenWorld),
            runner: None,
            host_waits: None,
        }
    }
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("settings", &self.settings)
            .field("frame_rate", &self.frame_rate)
            .field("clock", &self.clock)
            .field("store", &self.store)
            .field("command_period", &self.command_period)
            .finish_non_exhaustive()
    }
}

impl RuntimeBuilder {
    /// Server (frame-aware budget, diagnostics) or client (fixed 1.5 ms slice, `PreRender` phase).
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().role(tickstep::kernel::Role::Client);
    /// ```
    #[must_use]
    pub fn role(self, role: Role) -> Self {
        self.host(|s| s.role(role))
    }

    /// Target frame rate of the frame loop (1 to 1000).
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().frame_rate(30);
    /// ```
    #[must_use]
    pub fn frame_rate(mut self, fps: u32) -> Self {
        self.frame_rate = fps;
        self
    }

    /// The main scheduler's budget: its fixed slice per step, or the floor of the frame-aware
    /// budget when a [frame target](RuntimeBuilder::frame_target) is set (docs/runtime.md §8.3,
    /// kernel.md §4). Default: the role's, 1.5 ms.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use tickstep::kernel::{BudgetMode, Role};
    /// let rt = tickstep::Runtime::builder().role(Role::Client).budget(Duration::from_millis(3))
    ///     .in_memory_store().build()?;
    /// assert_eq!(rt.scheduler().budget_mode(), BudgetMode::Fixed(Duration::from_millis(3)));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    #[must_use]
    pub fn budget(self, budget: Duration) -> Self {
        self.host(|s| s.budget(budget))
    }

    /// The frame-aware budget's target frame time: a server's main scheduler spends what the
    /// target leaves after the rest of the frame (docs/runtime.md §8.3, kernel.md §4). Default:
    /// the role's.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use tickstep::kernel::BudgetMode;
    /// let rt = tickstep::Runtime::builder().frame_target(Duration::from_millis(30)).in_memory_store().build()?;
    /// assert!(matches!(rt.scheduler().budget_mode(),
    ///     BudgetMode::FrameAware { target, .. } if target == Duration::from_millis(30)));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    #[must_use]
    pub fn frame_target(self, target: Duration) -> Self {
        self.host(|s| s.frame_target(target))
    }

    /// Runs on real time (the default).
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().system_clock();
    /// ```
    #[must_use]
    pub fn system_clock(mut self) -> Self {
        self.clock = Some(RuntimeClock::System(SystemClock::new()));
        self
    }

    /// Runs in virtual time on `clock`: frames, waits and deadlines move it, never the thread.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().manual_clock(tickstep::kernel::ManualClock::new());
    /// ```
    #[must_use]
    pub fn manual_clock(mut self, clock: ManualClock) -> Self {
        self.clock = Some(RuntimeClock::Manual(clock));
        self
    }

    /// Keeps durable schedules in the `SQLite` file at `path` — or, with this crate's `postgres`
    /// feature, in the `PostgreSQL` database a `postgres://user:password@host/db` URL names,
    /// which several runtimes (nodes) may share: each holds the schedules it claimed, and a
    /// standby takes a dead node's over within a [lease](Self::lease) and a third
    /// (docs/runtime.md §6.1, §6.3). Opening a URL is safe inside a tokio runtime (the
    /// `TokioDriver` of the `tokio` feature builds there): the store's connection lives on its
    /// own thread.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().store_path("/tmp/world.db");
    /// let _node = tickstep::Runtime::builder().store_path("postgres://world@db.local/tickstep");
    /// ```
    #[must_use]
    pub fn store_path(mut self, path: impl AsRef<Path>) -> Self {
        self.store = Store::Path(path.as_ref().to_owned());
        self
    }

    /// How long this node's claims on a shared `PostgreSQL` store outlive its last heartbeat
    /// (the schedules' `Config::lease`, default 10 s; docs/schedules.md §11.25): a standby
    /// takes over a dead node's schedules within about one lease and a third. Shorter leases
    /// take over sooner and renew more often (one statement per third of a lease). Ignored by
    /// the `SQLite` store and an in-memory one.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().lease(std::time::Duration::from_secs(2));
    /// ```
    #[must_use]
    pub fn lease(self, lease: Duration) -> Self {
        self.host(|s| s.lease(lease))
    }

    /// Runs again each firing handed back as interrupted — in flight at the last save, or
    /// running on a node whose schedules this one takes over — instead of abandoning it
    /// (docs/runtime.md §6.2) or settling it as taken over (docs/runtime.md §6.5): at least
    /// once, for verbs that check with `VerbCall::is_rerun` what an earlier run did
    /// (docs/runtime.md §6.7). Off by default.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().rerun_interrupted(true);
    /// ```
    #[must_use]
    pub fn rerun_interrupted(self, on: bool) -> Self {
        self.host(|s| s.rerun_interrupted(on))
    }

    /// The application's namespace in its store (docs/schedules.md §15): the engine loads,
    /// fires and retires only this namespace's schedules, so several programs share one store
    /// without touching each other's. Default: the program's name ([`program_namespace`];
    /// docs/runtime.md §6.6). Name it when the executable's name may change, or when several
    /// programs are one application (the nodes of one service on `PostgreSQL`).
    ///
    /// ```
    /// let ns = tickstep::schedules::Namespace::new("billing").unwrap();
    /// let _b = tickstep::Runtime::builder().namespace(ns);
    /// ```
    ///
    /// [`program_namespace`]: crate::host::program_namespace
    #[must_use]
    pub fn namespace(self, namespace: tickstep_schedules::Namespace) -> Self {
        self.host(|s| s.namespace(namespace))
    }

    /// Keeps schedules in memory only.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().in_memory_store();
    /// ```
    #[must_use]
    pub fn in_memory_store(mut self) -> Self {
        self.store = Store::InMemory;
        self
    }

    /// Chooses the store.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().store(tickstep::Store::DefaultPath);
    /// ```
    #[must_use]
    pub fn store(mut self, store: Store) -> Self {
        self.store = store;
        self
    }

    /// Kernel overload diagnostics (server only; see
    /// [`Kernel::enable_diagnostics`](crate::kernel::Kernel::enable_diagnostics)).
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().diagnostics(false);
    /// ```
    #[must_use]
    pub fn diagnostics(self, on: bool) -> Self {
        self.host(|s| s.diagnostics(on))
    }

    /// Period of the command cycle (`commands().run()` as a kernel job). Default 20 ms.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _b = tickstep::Runtime::builder().command_period(Duration::from_millis(10));
    /// ```
    #[must_use]
    pub fn command_period(mut self, period: Duration) -> Self {
        self.command_period = Some(period);
        self
    }

    /// No command cycle at all: a runtime of kernel tasks and schedules only, which sleeps
    /// through idle time entirely.
    ///
    /// **Use it for a server with no commands.** The cycle is not skipped on its own: triggers,
    /// periodic callbacks and sideloaded work live inside the command scheduler, and an empty
    /// `run()` is how they are polled. An empty cycle costs one kernel job every command period
    /// plus a step every frame (a 20 ms job keeps the kernel attached, inside its 34 ms wake
    /// window, so an idle loop never sleeps); docs/runtime.md §10.3 measures it.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().without_commands();
    /// ```
    #[must_use]
    pub fn without_commands(mut self) -> Self {
        self.command_period = None;
        self
    }

    /// The schedules engine's tick (interval floor, and the most often the runtime ticks it).
    /// Default 10 ms.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _b = tickstep::Runtime::builder().schedules_tick(Duration::from_millis(50));
    /// ```
    #[must_use]
    pub fn schedules_tick(self, tick: Duration) -> Self {
        self.host(|s| s.schedules_tick(tick))
    }

    /// The most time one schedules tick spends starting firings (docs/runtime.md §3.4): the tick
    /// is one kernel task the budget cannot split, so a backlog of due firings is started a
    /// slice per tick, the rest at the next ticks in deadline order. Default
    /// [`DEFAULT_SCHEDULES_TICK_TIME`](crate::DEFAULT_SCHEDULES_TICK_TIME) (1.5 ms); `None` bounds a tick by count alone (1,024
    /// firings).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _b = tickstep::Runtime::builder().schedules_tick_time(Some(Duration::from_millis(4)));
    /// ```
    #[must_use]
    pub fn schedules_tick_time(self, slice: Option<Duration>) -> Self {
        self.host(|s| s.schedules_tick_time(slice))
    }

    /// The kernel priority firings run at. Default Normal.
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().firing_priority(tickstep::kernel::Priority::Low);
    /// ```
    #[must_use]
    pub fn firing_priority(self, priority: Priority) -> Self {
        self.host(|s| s.firing_priority(priority))
    }

    /// The host's object model for schedule permissions. Default [`OpenWorld`].
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().world(tickstep::OpenWorld);
    /// ```
    #[must_use]
    pub fn world(mut self, world: impl World + 'static) -> Self {
        self.world = Box::new(world);
        self
    }

    /// Starts firings through the host's own task system instead of as kernel tasks: the
    /// "bring your own task system" form (with [`RuntimeBuilder::world`] for your own object
    /// database). The engine calls `runner.start(firing)` at each firing; the host runs it its
    /// own way and reports the outcome with [`Runtime::report`](crate::Runtime::report) when it
    /// ends — never from inside `start`. [`QueueRunner`](crate::schedules::QueueRunner) is the
    /// ready-made hand-off: `start` queues, the host takes the queue each frame. Verbs
    /// registered with [`Runtime::verb`](crate::Runtime::verb) are not used then, and the host's
    /// world alone says which verbs are callable. The runtime still drives the engine (ticks it
    /// when a deadline comes due, re-arms after each report): no driver loop to write. See the
    /// `own_host` example.
    ///
    /// ```
    /// use tickstep::schedules::QueueRunner;
    /// let jobs = QueueRunner::new();
    /// let rt = tickstep::Runtime::builder().runner(jobs.clone()).in_memory_store().build()?;
    /// assert_eq!(jobs.pending(), 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    #[must_use]
    pub fn runner(mut self, runner: impl Runner + 'static) -> Self {
        self.runner = Some(Box::new(runner));
        self
    }

    /// The limits every firing runs under unless its schedule has its own (its `seconds` and
    /// `ticks` options, or [`Runtime::set_firing_limits`](crate::Runtime::set_firing_limits)).
    /// Default: none. See
    /// [`FiringLimits`] for what `seconds` and `ticks` do to sync and async verbs.
    ///
    /// ```
    /// use std::time::Duration;
    /// let _b = tickstep::Runtime::builder()
    ///     .firing_limits(tickstep::FiringLimits::none().seconds(Duration::from_secs(30)));
    /// ```
    #[must_use]
    pub fn firing_limits(self, limits: FiringLimits) -> Self {
        self.host(|s| s.firing_limits(limits))
    }

    /// Seeds the schedules' jitter generator (deterministic tests).
    ///
    /// ```
    /// let _b = tickstep::Runtime::builder().rng_seed(7);
    /// ```
    #[must_use]
    pub fn rng_seed(self, seed: u64) -> Self {
        self.host(|s| s.rng_seed(seed))
    }

    /// One knob of the host settings set: each shared knob's setter above is this one line, the
    /// knob's own setter on [`HostSettings`] (docs/runtime.md §8.3).
    fn host(mut self, set: impl FnOnce(HostSettings) -> HostSettings) -> Self {
        self.settings = set(self.settings);
        self
    }

    /// Frames leave their waits in `waits` for an async host to do (see `hosted.rs`).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn host_waits(mut self, waits: FrameWaits) -> Self {
        self.host_waits = Some(waits);
        self
    }

    /// Boots the kernel, opens the store and wires the layers together.
    ///
    /// Firings that were in flight when the store was last saved are abandoned (their schedules
    /// record a fault, "interrupted by restart"): a Rust closure's progress cannot be restored
    /// (the host core's settlement, docs/runtime.md §8.2). On a shared `PostgreSQL` store,
    /// firings another node had in flight are settled by the engine as taken over instead
    /// (docs/runtime.md §6.5).
    ///
    /// # Errors
    ///
    /// [`RuntimeError::FrameLoop`] for a frame rate outside 1–1000; [`RuntimeError::Settings`] for
    /// a zero command period, schedules tick, budget or frame target, a budget above the frame
    /// target, or diagnostics on a client;
    /// [`RuntimeError::Host`] (`HostError::StoreDir`, `HostError::Store`) when the store cannot be
    /// opened.
    ///
    /// ```
    /// use tickstep::Runtime;
    /// use tickstep::kernel::{ManualClock, Role};
    /// let err = Runtime::builder().role(Role::Client).diagnostics(true)
    ///     .manual_clock(ManualClock::new()).in_memory_store().build().unwrap_err();
    /// assert!(err.to_string().contains("server-only"));
    /// ```
    pub fn build(self) -> Result<Runtime, RuntimeError> {
        if let Some(got) = self.command_period.filter(Duration::is_zero) {
            return Err(SettingsError::ZeroDuration {
                what: "command period",
                got,
            }
            .into());
        }
        let settings = self.settings;
        settings.check()?;
        let clock = self
            .clock
            .unwrap_or_else(|| RuntimeClock::System(SystemClock::new()));
        // Checked here so a bad rate is an error, not the kernel's boot panic.
        FrameLoop::try_new(clock.clone(), settings.role_of(), self.frame_rate)?;

        let kernel_config = settings.kernel_config(KernelConfig::default().fps(self.frame_rate));
        let kernel = match self.host_waits {
            Some(waits) => {
                let hosted = HostedClock {
                    clock: clock.clone(),
                    waits,
                };
                Kernel::boot(hosted, settings.role_of(), kernel_config)
            }
            None => Kernel::boot(clock.clone(), settings.role_of(), kernel_config),
        };
        let commands = tickstep_commands::CommandScheduler::new(clock.clone());
        let core = HostCore::new(clock, kernel.scheduler().clone(), &settings, None);
        let store_path = match self.store {
            Store::InMemory => None,
            Store::DefaultPath => Some(default_store_path()),
            Store::Path(path) => Some(path),
        };
        let abandoned = core.open(store_path.as_deref(), self.world, self.runner)?;
        let wiring = Wiring::new(core, kernel.scheduler().clone(), commands);

        let on_error = Rc::downgrade(&wiring);
        kernel.scheduler().on_error(move |_err| {
            let Some(wiring) = on_error.upgrade() else {
                return;
            };
            // The command cycle catches its own panics (see `Wiring::run_command_cycle`): whatever
            // reaches the kernel's hook is some other task's.
            wiring.note_task_panic();
        });
        if settings.diagnostics_on() {
            let publish = Rc::downgrade(&wiring);
            kernel.enable_diagnostics(move |overload| {
                if let Some(wiring) = publish.upgrade() {
                    wiring.publish_overload(overload);
                }
            })?;
        }
        if let Some(period) = self.command_period {
            wiring.start_command_cycle(period)?;
        }
        Ok(Runtime::assemble(wiring, kernel, store_path, abandoned))
    }
}
