//! [`TickstepPlugin`] and its builder: role, frame target, budget, store, clock and where the
//! kernel steps.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use bevy_app::{App, Last, Plugin};
use bevy_ecs::schedule::ScheduleLabel;
use tickstep_kernel::clock::{Clock, ManualClock, SystemClock};
use tickstep_kernel::{FramePhase, Kernel, KernelConfig, Priority, Role, ScheduleError};
use tickstep_schedules::{Config, Schedules};

use crate::cycle_placement::CyclePlacement;
use crate::frame_meter::FrameMeter;
use crate::resources::{CommandsCycle, FrameParts};
use crate::schedules_host::{Driver, GameWorld, KernelRunner};
use crate::settings::Settings;
use crate::{
    GameClock, PluginError, RealClock, TickstepCommands, TickstepKernel, TickstepSchedules,
    WorldQueue,
};

/// The default schedules tick: the engine is ticked at most this often (10 ms).
pub const DEFAULT_SCHEDULES_TICK: Duration = tickstep_schedules::DEFAULT_TICK;

/// The plugin: tickstep's kernel, commands and durable schedules inside a Bevy app.
///
/// ```
/// use bevy_app::App;
/// use tickstep_bevy::TickstepPlugin;
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::default()); // server role, in-memory schedules, real clock
/// app.update();
/// ```
///
/// It needs `bevy_time`'s `TimePlugin` (part of Bevy's `MinimalPlugins`): add it first, or the
/// plugin adds it.
///
/// # Panics
///
/// Installing (`App::add_plugins`) panics when the schedule store cannot be opened; use
/// [`TickstepPlugin::try_install`] to get the error instead.
#[derive(Clone, Debug)]
pub struct TickstepPlugin {
    pub(crate) settings: Settings,
}

impl Default for TickstepPlugin {
    fn default() -> Self {
        TickstepPlugin {
            settings: Settings {
                role: Role::Server,
                frame_target: None,
                budget: None,
                store: None,
                manual_clock: None,
                kernel_schedule: Last.intern(),
                schedules_tick: DEFAULT_SCHEDULES_TICK,
                diagnostics: None,
                per_cycle_events: false,
                phases: Vec::new(),
                firing_priority: Priority::Normal,
            },
        }
    }
}

impl TickstepPlugin {
    /// A builder with the defaults: server role (frame-aware budget against 16.5 ms, 1.5 ms floor),
    /// the kernel stepping in `Last`, in-memory schedules, the system clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_bevy::TickstepPlugin;
    /// use tickstep_kernel::Role;
    /// let plugin = TickstepPlugin::builder()
    ///     .role(Role::Client)
    ///     .budget(Duration::from_millis(2))
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn builder() -> TickstepPluginBuilder {
        TickstepPluginBuilder {
            plugin: TickstepPlugin::default(),
        }
    }

    /// Installs the plugin into `app`, returning what went wrong instead of panicking.
    /// (`App::add_plugins` calls this and panics on an error.)
    ///
    /// # Errors
    ///
    /// [`PluginError::Store`] or [`PluginError::StoreDir`] when the schedule store cannot be
    /// opened; [`PluginError::Kernel`] when the kernel refuses a setting.
    ///
    /// ```
    /// use bevy_app::App;
    /// use tickstep_bevy::{TickstepKernel, TickstepPlugin};
    /// let mut app = App::new();
    /// TickstepPlugin::default().try_install(&mut app)?;
    /// assert!(app.world().get_non_send::<TickstepKernel>().is_some());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn try_install(&self, app: &mut App) -> Result<(), PluginError> {
        let s = &self.settings;
        let clock = match &s.manual_clock {
            Some(manual) => RealClock::Manual(manual.clone()),
            None => RealClock::System(SystemClock::new()),
        };
        let mut config = KernelConfig::default();
        if let Some(target) = s.frame_target {
            config = config.target_frame(target);
        }
        if let Some(budget) = s.budget {
            config = config.budget(budget);
        }
        let kernel = Kernel::boot(clock.clone(), s.role, config);
        let meter = Rc::new(FrameMeter::default());
        kernel.scheduler().set_frame_stats(meter.clone());
        let overloads = Rc::new(RefCell::new(Vec::new()));
        if s.diagnostics.unwrap_or(s.role == Role::Server) {
            let sink = Rc::downgrade(&overloads);
            kernel.enable_diagnostics(move |overload| {
                if let Some(sink) = sink.upgrade() {
                    sink.borrow_mut().push(overload.clone());
                }
            })?;
        }
        let world = WorldQueue::default();

        let game_clock = GameClock::starting_at_unix_nanos(clock.unix_nanos());
        let commands = tickstep_commands::CommandScheduler::new(game_clock.clone());
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::downgrade(&events);
        let per_cycle_events = s.per_cycle_events;
        commands.on_event(move |event| {
            let per_cycle = matches!(
                event.kind,
                tickstep_commands::EventKind::Mounted | tickstep_commands::EventKind::Yielded
            );
            if per_cycle && !per_cycle_events {
                return;
            }
            if let Some(sink) = sink.upgrade() {
                sink.borrow_mut().push(crate::CommandEvent::from(event));
            }
        });

        let driver = Driver::new(
            clock.clone(),
            kernel.scheduler().clone(),
            world.clone(),
            s.schedules_tick,
        );
        let (engine, abandoned) = open_engine(s, &clock, &driver)?;
        if driver.engine.set(engine).is_err() {
            unreachable!("the engine is set once");
        }

        let phases = s
            .phases
            .iter()
            .filter(|p| **p != FramePhase::Heartbeat)
            .map(|p| TickstepKernel::new_phase(&clock, kernel.scheduler(), *p))
            .collect();
        let parts = Rc::new(FrameParts {
            frames: kernel.frame_loop().clone(),
            main: kernel.scheduler().clone(),
            clock,
            world: world.clone(),
            meter,
            driver: Rc::clone(&driver),
            overloads,
            command_events: Rc::clone(&events),
            published_steps: std::cell::Cell::new(0),
            game_clock: game_clock.clone(),
            commands: commands.clone(),
            cycle_placement: RefCell::new(CyclePlacement::Absent),
        });
        app.insert_non_send(TickstepKernel {
            kernel,
            phases,
            parts,
        });
        app.insert_non_send(TickstepCommands {
            cycle: Rc::new(CommandsCycle {
                scheduler: commands,
                clock: game_clock,
                world,
                events,
                failure: RefCell::new(None),
            }),
            mechanisms: RefCell::default(),
        });
        app.insert_non_send(TickstepSchedules {
            driver,
            store_path: s.store.clone(),
            abandoned,
        });
        crate::systems::install(app, s);
        Ok(())
    }
}

fn open_engine(
    s: &Settings,
    clock: &RealClock,
    driver: &Rc<Driver>,
) -> Result<(Schedules, usize), PluginError> {
    let world = GameWorld {
        verbs: Rc::clone(&driver.verbs),
    };
    let runner = KernelRunner {
        driver: Rc::downgrade(driver),
        priority: s.firing_priority,
    };
    let mut config = Config::default();
    config.tick = s.schedules_tick;
    let Some(path) = &s.store else {
        return Ok((
            Schedules::in_memory(clock.clone(), world, runner, config),
            0,
        ));
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| PluginError::StoreDir {
            path: dir.to_owned(),
            source,
        })?;
    }
    let engine = Schedules::open(path, clock.clone(), world, runner, config).map_err(|source| {
        PluginError::Store {
            path: path.clone(),
            source,
        }
    })?;
    // A Rust closure cannot resume from disk: firings in flight at the last save are abandoned
    // (each a fault "interrupted by restart", counted towards max_faults).
    let interrupted = engine.interrupted();
    for in_flight in &interrupted {
        engine.abandon(in_flight.run);
    }
    Ok((engine, interrupted.len()))
}

impl Plugin for TickstepPlugin {
    fn build(&self, app: &mut App) {
        if let Err(err) = self.try_install(app) {
            panic!("TickstepPlugin: {}", tickstep_kernel::ErrorChain(&err));
        }
    }
}

/// Builds a [`TickstepPlugin`], checking every setting.
#[derive(Clone, Debug)]
#[must_use]
pub struct TickstepPluginBuilder {
    plugin: TickstepPlugin,
}

impl TickstepPluginBuilder {
    /// The kernel's role: `Server` (frame-aware budget, overload diagnostics) or `Client` (a fixed
    /// 1.5 ms slice, the `PreRender` phase).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().role(tickstep_kernel::Role::Client).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.plugin.settings.role = role;
        self
    }

    /// The frame target: selects the frame-aware budget against it (the kernel spends what the
    /// target leaves after the rest of the Bevy frame). Default on a server: 16.5 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// let p = tickstep_bevy::TickstepPlugin::builder().frame_target(Duration::from_micros(8_000)).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn frame_target(mut self, target: Duration) -> Self {
        self.plugin.settings.frame_target = Some(target);
        self
    }

    /// The budget: the fixed slice per frame, or the floor of the frame-aware budget when a frame
    /// target is set. Given alone on either role it selects the fixed mode. Default 1.5 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// let p = tickstep_bevy::TickstepPlugin::builder().budget(Duration::from_millis(3)).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn budget(mut self, budget: Duration) -> Self {
        self.plugin.settings.budget = Some(budget);
        self
    }

    /// Keeps the durable schedules in the `SQLite` file at `path` (created, with its directory, if
    /// missing). Without it the schedules live in memory and vanish with the app: a game names
    /// its own save file rather than sharing one global store.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = tickstep_bevy::TickstepPlugin::builder().store_path(dir.path().join("schedules.db")).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn store_path(mut self, path: impl AsRef<Path>) -> Self {
        self.plugin.settings.store = Some(path.as_ref().to_owned());
        self
    }

    /// Runs everything on a [`ManualClock`]: Bevy's `Time<Real>` then follows it too (the plugin
    /// feeds Bevy the clock's movement each frame), so a test advances the clock and calls
    /// `App::update()`.
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder()
    ///     .manual_clock(tickstep_kernel::ManualClock::new())
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn manual_clock(mut self, clock: ManualClock) -> Self {
        self.plugin.settings.manual_clock = Some(clock);
        self
    }

    /// The Bevy schedule the kernel's main scheduler steps in, once per frame (default `Last`,
    /// so it spends what the frame has left).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().kernel_schedule(bevy_app::PostUpdate).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    #[allow(clippy::needless_pass_by_value)] // by value, as Bevy's own `add_systems(Last, ..)`
    pub fn kernel_schedule(mut self, label: impl ScheduleLabel) -> Self {
        self.plugin.settings.kernel_schedule = label.intern();
        self
    }

    /// How often at most the durable schedules engine is ticked (default 10 ms).
    ///
    /// ```
    /// use std::time::Duration;
    /// let p = tickstep_bevy::TickstepPlugin::builder().schedules_tick(Duration::from_millis(50)).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn schedules_tick(mut self, tick: Duration) -> Self {
        self.plugin.settings.schedules_tick = tick;
        self
    }

    /// Turns the kernel's overload diagnostics on or off (default: on for a server, off for a
    /// client; a client cannot have them).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().diagnostics(false).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn diagnostics(mut self, on: bool) -> Self {
        self.plugin.settings.diagnostics = Some(on);
        self
    }

    /// Also publishes the per-cycle command events, `Mounted` and `Yielded` (two per running
    /// command per fixed step; off by default: the volume is rarely wanted, and each costs a
    /// message).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().per_cycle_events(true).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn per_cycle_events(mut self, on: bool) -> Self {
        self.plugin.settings.per_cycle_events = on;
        self
    }

    /// Kernel phases besides `Heartbeat` that get their own scheduler, each stepped from its Bevy
    /// schedule (see [`TickstepKernel::phase_scheduler`]). None by default: a phase adds a system
    /// (and a schedule run per fixed step) to every frame.
    ///
    /// ```
    /// use tickstep_kernel::FramePhase;
    /// let p = tickstep_bevy::TickstepPlugin::builder()
    ///     .phases([FramePhase::PreSimulation, FramePhase::PostSimulation])
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn phases(mut self, phases: impl IntoIterator<Item = FramePhase>) -> Self {
        self.plugin.settings.phases = phases.into_iter().collect();
        self.plugin.settings.phases.dedup();
        self
    }

    /// The kernel priority durable-schedule firings run at (default Normal).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().firing_priority(tickstep_kernel::Priority::Low).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn firing_priority(mut self, priority: Priority) -> Self {
        self.plugin.settings.firing_priority = priority;
        self
    }

    /// Checks the settings and returns the plugin.
    ///
    /// # Errors
    ///
    /// [`PluginError::ZeroDuration`] for a zero frame target, budget or schedules tick;
    /// [`PluginError::BudgetAboveTarget`] when the budget (the floor) exceeds the frame target;
    /// [`PluginError::DiagnosticsOnClient`] for diagnostics on a client;
    /// [`PluginError::Kernel`] with [`ScheduleError::PreRenderOnServer`] for the `PreRender`
    /// phase on a server.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_bevy::{PluginError, TickstepPlugin};
    /// let err = TickstepPlugin::builder()
    ///     .frame_target(Duration::from_millis(5))
    ///     .budget(Duration::from_millis(6))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(err, PluginError::BudgetAboveTarget { .. }));
    /// ```
    pub fn build(self) -> Result<TickstepPlugin, PluginError> {
        let s = &self.plugin.settings;
        for (what, value) in [
            ("frame target", s.frame_target),
            ("budget", s.budget),
            ("schedules tick", Some(s.schedules_tick)),
        ] {
            if let Some(got) = value.filter(Duration::is_zero) {
                return Err(PluginError::ZeroDuration { what, got });
            }
        }
        if let (Some(target), Some(budget)) = (s.frame_target, s.budget)
            && budget > target
        {
            return Err(PluginError::BudgetAboveTarget { budget, target });
        }
        if s.diagnostics == Some(true) && s.role != Role::Server {
            return Err(PluginError::DiagnosticsOnClient { role: s.role });
        }
        if s.phases.iter().any(|p| !s.role.runs(*p)) {
            return Err(ScheduleError::PreRenderOnServer.into());
        }
        Ok(self.plugin)
    }
}
