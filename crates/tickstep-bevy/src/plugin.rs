//! [`TickstepPlugin`] and its builder: role, frame target, budget, store, clock and where the
//! kernel steps.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use bevy_app::{App, Last, Plugin};
use bevy_ecs::schedule::ScheduleLabel;
use tickstep_host::{FiringLimits, HostCore, HostSettings};
use tickstep_kernel::clock::{Clock, ManualClock, SystemClock};
use tickstep_kernel::{FramePhase, Kernel, KernelConfig, Priority, Role, ScheduleError};
use tickstep_schedules::OpenWorld;

use crate::cycle_placement::CyclePlacement;
use crate::frame_meter::FrameMeter;
use crate::resources::{CommandsCycle, FrameParts};
use crate::settings::Settings;
use crate::{
    GameClock, PluginError, RealClock, TickstepCommands, TickstepKernel, TickstepSchedules,
    WorldQueue,
};

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
                host: HostSettings::default(),
                store: None,
                manual_clock: None,
                kernel_schedule: Last.intern(),
                per_cycle_events: false,
                phases: Vec::new(),
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
    /// use tickstep_bevy::kernel::Role;
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
    /// [`PluginError::Host`] when the schedule store cannot be opened; [`PluginError::Kernel`]
    /// when the kernel refuses a setting.
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
        let kernel = Kernel::boot(
            clock.clone(),
            s.host.role_of(),
            s.host.kernel_config(KernelConfig::default()),
        );
        let meter = Rc::new(FrameMeter::default());
        kernel.scheduler().set_frame_stats(meter.clone());
        let overloads = Rc::new(RefCell::new(Vec::new()));
        if s.host.diagnostics_on() {
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

        // The host core, shared with the `Runtime`: verbs reach the ECS through the world
        // queue it hands them (docs/bevy.md §7.7).
        let schedules = HostCore::new(
            clock.clone(),
            kernel.scheduler().clone(),
            &s.host,
            Some(Rc::new(world.clone())),
        );
        // A game has no MOO permissions: every object valid, every principal a wizard, and a
        // verb callable once code is registered for it.
        let abandoned = schedules.open(s.store.as_deref(), Box::new(OpenWorld), None)?;

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
            schedules: Rc::clone(&schedules),
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
                conditions: crate::ecs_conditions::EcsConditions::default(),
            }),
            mechanisms: RefCell::default(),
        });
        app.insert_non_send(TickstepSchedules {
            core: schedules,
            store_path: s.store.clone(),
            abandoned,
        });
        crate::systems::install(app, s);
        Ok(())
    }
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
    /// let p = tickstep_bevy::TickstepPlugin::builder().role(tickstep_bevy::kernel::Role::Client).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn role(self, role: Role) -> Self {
        self.host(|s| s.role(role))
    }

    /// The frame target: selects the frame-aware budget against it (the kernel spends what the
    /// target leaves after the rest of the Bevy frame). Default on a server: 16.5 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// let p = tickstep_bevy::TickstepPlugin::builder().frame_target(Duration::from_micros(8_000)).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn frame_target(self, target: Duration) -> Self {
        self.host(|s| s.frame_target(target))
    }

    /// The budget: the fixed slice per frame, or the floor of the frame-aware budget when a frame
    /// target is set. Given alone on either role it selects the fixed mode. Default 1.5 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// let p = tickstep_bevy::TickstepPlugin::builder().budget(Duration::from_millis(3)).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn budget(self, budget: Duration) -> Self {
        self.host(|s| s.budget(budget))
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
    ///     .manual_clock(tickstep_bevy::kernel::ManualClock::new())
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
    pub fn schedules_tick(self, tick: Duration) -> Self {
        self.host(|s| s.schedules_tick(tick))
    }

    /// Turns the kernel's overload diagnostics on or off (default: on for a server, off for a
    /// client; a client cannot have them).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().diagnostics(false).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn diagnostics(self, on: bool) -> Self {
        self.host(|s| s.diagnostics(on))
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
    /// use tickstep_bevy::kernel::FramePhase;
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
    /// let p = tickstep_bevy::TickstepPlugin::builder().firing_priority(tickstep_bevy::kernel::Priority::Low).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn firing_priority(self, priority: Priority) -> Self {
        self.host(|s| s.firing_priority(priority))
    }

    /// The most time one schedules tick spends starting firings (a backlog of due firings is
    /// started a slice per tick). Default [`DEFAULT_SCHEDULES_TICK_TIME`](crate::DEFAULT_SCHEDULES_TICK_TIME)
    /// (1.5 ms); `None` bounds a tick by count alone.
    ///
    /// ```
    /// use std::time::Duration;
    /// let p = tickstep_bevy::TickstepPlugin::builder().schedules_tick_time(Some(Duration::from_millis(3))).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn schedules_tick_time(self, slice: Option<Duration>) -> Self {
        self.host(|s| s.schedules_tick_time(slice))
    }

    /// The limits every firing runs under unless its schedule has its own (its `seconds` and
    /// `ticks` options, or [`TickstepSchedules::set_firing_limits`]). Default: none.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_bevy::FiringLimits;
    /// let p = tickstep_bevy::TickstepPlugin::builder()
    ///     .firing_limits(FiringLimits::none().seconds(Duration::from_secs(5)))
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn firing_limits(self, limits: FiringLimits) -> Self {
        self.host(|s| s.firing_limits(limits))
    }

    /// Seeds the schedules' jitter generator (deterministic tests).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder().rng_seed(7).build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn rng_seed(self, seed: u64) -> Self {
        self.host(|s| s.rng_seed(seed))
    }

    /// How long this app's claims on a shared `PostgreSQL` store outlive its last heartbeat (the
    /// schedules' `Config::lease`, default 10 s; docs/schedules.md §11.25), as
    /// `RuntimeBuilder::lease` sets it. Ignored by the `SQLite` store and an in-memory one.
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder()
    ///     .lease(std::time::Duration::from_secs(2))
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn lease(self, lease: Duration) -> Self {
        self.host(|s| s.lease(lease))
    }

    /// Runs handed-back firings again instead of abandoning them, as
    /// `RuntimeBuilder::rerun_interrupted` does (docs/runtime.md §6.7). Off by default.
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder()
    ///     .rerun_interrupted(true)
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn rerun_interrupted(self, on: bool) -> Self {
        self.host(|s| s.rerun_interrupted(on))
    }

    /// The app's namespace in its store (docs/schedules.md §15), as `RuntimeBuilder::namespace`
    /// sets it; default: the program's name (docs/runtime.md §6.6).
    ///
    /// ```
    /// let p = tickstep_bevy::TickstepPlugin::builder()
    ///     .namespace(tickstep_bevy::schedules::Namespace::new("arena").unwrap())
    ///     .build()?;
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn namespace(self, namespace: tickstep_schedules::Namespace) -> Self {
        self.host(|s| s.namespace(namespace))
    }

    /// One knob of the host settings set: each shared knob's setter above is this one line, the
    /// knob's own setter on [`HostSettings`] (docs/runtime.md §8.3).
    fn host(mut self, set: impl FnOnce(HostSettings) -> HostSettings) -> Self {
        self.plugin.settings.host = set(self.plugin.settings.host);
        self
    }

    /// Checks the settings and returns the plugin.
    ///
    /// # Errors
    ///
    /// [`PluginError::Settings`] for a zero frame target, budget or schedules tick, a budget
    /// (the floor) above the frame target, or diagnostics on a client (the checks every host
    /// shares, docs/runtime.md §8.3);
    /// [`PluginError::Kernel`] with [`ScheduleError::PreRenderOnServer`] for the `PreRender`
    /// phase on a server.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_bevy::{PluginError, SettingsError, TickstepPlugin};
    /// let err = TickstepPlugin::builder()
    ///     .frame_target(Duration::from_millis(5))
    ///     .budget(Duration::from_millis(6))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(err, PluginError::Settings(SettingsError::BudgetAboveTarget { .. })));
    /// ```
    pub fn build(self) -> Result<TickstepPlugin, PluginError> {
        let s = &self.plugin.settings;
        s.host.check()?;
        if s.phases.iter().any(|p| !s.host.role_of().runs(*p)) {
            return Err(ScheduleError::PreRenderOnServer.into());
        }
        Ok(self.plugin)
    }
}
