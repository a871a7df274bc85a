//! The three layers as Bevy non-send resources.
//!
//! tickstep's schedulers are single-threaded by design: their handles are `Rc`s and `!Send`.
//! Bevy's way to hold such state is a *non-send resource* (`App::insert_non_send`), read with the
//! [`NonSend`](bevy_ecs::system::NonSend) system parameter; Bevy then runs every system that
//! touches it on the main thread. Everything in these resources uses interior mutability, so
//! `NonSend<T>` (shared) is all a system needs: `NonSend<TickstepSchedules>` to call
//! `schedule_every`, `NonSend<TickstepCommands>` to schedule an ability, `NonSend<TickstepKernel>`
//! to queue budgeted work.

use std::any::TypeId;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bevy_ecs::entity::Entity;
use tickstep_commands::{Mechanism, RunError};
use tickstep_kernel::{FrameLoop, FramePhase, FrameScheduler, Kernel, SchedulerConfig};

use crate::cycle_placement::CyclePlacement;
use crate::ecs_conditions::EcsConditions;
use crate::frame_meter::FrameMeter;
use tickstep_host::HostCore;

use crate::{GameClock, RealClock, WorldQueue};

/// The kernel: the main frame-budgeted scheduler (stepped once per Bevy frame in the kernel's
/// schedule, `Last` by default), its phase schedulers, and the world queue.
///
/// ```
/// use bevy_app::App;
/// use tickstep_bevy::{TickstepKernel, TickstepPlugin};
/// use tickstep_bevy::kernel::{ManualClock, Priority};
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
/// let kernel = app.world().non_send::<TickstepKernel>();
/// let _t = kernel.scheduler().schedule(|| println!("next frame"), Priority::Low);
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
pub struct TickstepKernel {
    pub(crate) kernel: Kernel,
    pub(crate) phases: Vec<PhaseScheduler>,
    pub(crate) parts: Rc<FrameParts>,
}

/// What the per-frame systems use, behind one `Rc`: an exclusive system pays one resource lookup
/// per frame, not one per handle.
pub(crate) struct FrameParts {
    pub(crate) frames: FrameLoop,
    pub(crate) main: FrameScheduler,
    pub(crate) clock: RealClock,
    pub(crate) world: WorldQueue,
    pub(crate) meter: Rc<FrameMeter>,
    pub(crate) schedules: Rc<HostCore<RealClock>>,
    pub(crate) overloads: Rc<RefCell<Vec<tickstep_kernel::Overload>>>,
    pub(crate) command_events: Rc<RefCell<Vec<crate::CommandEvent>>>,
    pub(crate) published_steps: Cell<u64>,
    /// The commands' clock, published at the end of every fixed main loop (docs/bevy.md §4.2).
    pub(crate) game_clock: GameClock,
    /// The commands scheduler, asked before and after each fixed main loop whether it has work
    /// (docs/bevy.md §6.5, §6.6).
    pub(crate) commands: tickstep_commands::CommandScheduler,
    /// Where the commands cycle's system is.
    pub(crate) cycle_placement: RefCell<CyclePlacement>,
}

/// A phase scheduler and the one-phase frame loop that steps it from its Bevy schedule.
#[derive(Clone)]
pub(crate) struct PhaseScheduler {
    pub(crate) phase: FramePhase,
    pub(crate) scheduler: FrameScheduler,
    pub(crate) frames: FrameLoop,
}

impl std::fmt::Debug for TickstepKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickstepKernel")
            .field("kernel", &self.kernel)
            .field("clock", &self.parts.clock)
            .finish_non_exhaustive()
    }
}

impl TickstepKernel {
    /// The main scheduler (the kernel's Heartbeat phase): frame-aware on a server, a fixed slice
    /// on a client.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepKernel, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let kernel = app.world().non_send::<TickstepKernel>();
    /// assert_eq!(kernel.scheduler().phase(), tickstep_bevy::kernel::FramePhase::Heartbeat);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn scheduler(&self) -> &FrameScheduler {
        self.kernel.scheduler()
    }

    /// The kernel itself (role, diagnostics).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepKernel, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let kernel = app.world().non_send::<TickstepKernel>();
    /// assert_eq!(kernel.kernel().role(), tickstep_bevy::kernel::Role::Server);
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The real clock the kernel and the schedules run on.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepKernel, TickstepPlugin};
    /// use tickstep_bevy::kernel::{ManualClock, clock::Clock};
    /// let manual = ManualClock::new();
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().manual_clock(manual.clone()).build()?);
    /// let kernel = app.world().non_send::<TickstepKernel>();
    /// assert_eq!(kernel.clock().now(), manual.now());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn clock(&self) -> &RealClock {
        &self.parts.clock
    }

    /// The queue of deferred world operations (shared by all three layers).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepKernel, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let kernel = app.world().non_send::<TickstepKernel>();
    /// kernel.world().push(|world| { world.spawn(()); });
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn world(&self) -> &WorldQueue {
        &self.parts.world
    }

    /// The scheduler of a kernel phase, if the plugin was built with it
    /// ([`TickstepPluginBuilder::phases`](crate::TickstepPluginBuilder::phases)); `Heartbeat` is
    /// the main scheduler. Each steps from its Bevy schedule: `PreSimulation` in `FixedPreUpdate`,
    /// `PostSimulation` in `FixedPostUpdate` (once per fixed step, lined up with the simulation),
    /// `PreRender` in `PostUpdate` (client only), under a fixed budget equal to the main
    /// scheduler's floor. A phase not asked for adds no system and costs nothing per frame.
    ///
    /// ```
    /// use bevy_app::App;
    /// use tickstep_bevy::{TickstepKernel, TickstepPlugin};
    /// use tickstep_bevy::kernel::FramePhase;
    ///
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().phases([FramePhase::PreSimulation]).build()?);
    /// let kernel = app.world().non_send::<TickstepKernel>();
    /// assert!(kernel.phase_scheduler(FramePhase::PreSimulation).is_some());
    /// assert!(kernel.phase_scheduler(FramePhase::PostSimulation).is_none()); // not asked for
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn phase_scheduler(&self, phase: FramePhase) -> Option<FrameScheduler> {
        if phase == FramePhase::Heartbeat {
            return Some(self.scheduler().clone());
        }
        self.phase(phase).map(|p| p.scheduler)
    }

    pub(crate) fn phase(&self, phase: FramePhase) -> Option<PhaseScheduler> {
        self.phases.iter().find(|p| p.phase == phase).cloned()
    }

    /// A phase scheduler and its one-phase frame loop.
    pub(crate) fn new_phase(
        clock: &RealClock,
        main: &FrameScheduler,
        phase: FramePhase,
    ) -> PhaseScheduler {
        let role = main.role();
        let scheduler = FrameScheduler::new(
            clock.clone(),
            SchedulerConfig::for_role(role)
                .budget(main.budget_mode().floor())
                .phase(phase),
        );
        let frames = FrameLoop::new(clock.clone(), role, 60);
        scheduler
            .bind(&frames)
            .expect("the builder only accepts phases the role runs");
        scheduler.on_error(move |err| {
            tracing::warn!(target: "tickstep_bevy", "[tickstep {phase:?}] {err}");
        });
        PhaseScheduler {
            phase,
            scheduler,
            frames,
        }
    }
}

/// The commands: a coroutine command scheduler run once per fixed step in `FixedUpdate`, on the
/// [`GameClock`], with mechanisms that belong to entities.
///
/// ```
/// use bevy_app::App;
/// use tickstep_bevy::{TickstepCommands, TickstepPlugin};
/// use tickstep_bevy::commands::Command;
/// use tickstep_bevy::kernel::ManualClock;
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
/// let commands = app.world().non_send::<TickstepCommands>();
/// let wave = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("wave");
/// assert!(commands.scheduler().schedule(&wave).is_success());
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
pub struct TickstepCommands {
    pub(crate) cycle: Rc<CommandsCycle>,
    pub(crate) mechanisms: RefCell<HashMap<(TypeId, Entity), Mechanism>>,
}

/// What the commands cycle uses, behind one `Rc` (one resource lookup per fixed step).
pub(crate) struct CommandsCycle {
    pub(crate) scheduler: tickstep_commands::CommandScheduler,
    pub(crate) clock: GameClock,
    pub(crate) world: WorldQueue,
    pub(crate) events: Rc<RefCell<Vec<crate::CommandEvent>>>,
    pub(crate) failure: RefCell<Option<RunError>>,
    /// The conditions of the triggers on ECS state, run before each cycle (docs/bevy.md §6.7).
    pub(crate) conditions: EcsConditions,
}

impl std::fmt::Debug for TickstepCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickstepCommands")
            .field("clock", &self.cycle.clock)
            .field("mechanisms", &self.mechanisms.borrow().len())
            .finish_non_exhaustive()
    }
}

impl TickstepCommands {
    /// The command scheduler.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepCommands, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let commands = app.world().non_send::<TickstepCommands>();
    /// assert!(commands.scheduler().running().is_empty());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn scheduler(&self) -> &tickstep_commands::CommandScheduler {
        &self.cycle.scheduler
    }

    /// The game clock the commands wait on.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepCommands, TickstepPlugin};
    /// use tickstep_bevy::kernel::clock::{Clock, Instant};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let commands = app.world().non_send::<TickstepCommands>();
    /// assert_eq!(commands.clock().now(), Instant::ZERO); // no fixed step yet
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn clock(&self) -> &GameClock {
        &self.cycle.clock
    }

    /// The queue of deferred world operations, applied after each commands cycle.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepCommands, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// let commands = app.world().non_send::<TickstepCommands>();
    /// assert!(commands.world().is_empty());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn world(&self) -> &WorldQueue {
        &self.cycle.world
    }

    /// The error that stopped the commands cycle, if one did (a command body returned `Err`).
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepCommands, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert!(app.world().non_send::<TickstepCommands>().failure().is_none());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn failure(&self) -> Option<String> {
        self.cycle
            .failure
            .borrow()
            .as_ref()
            .map(ToString::to_string)
    }

    /// Restarts a commands cycle stopped by a failure; returns the error that stopped it.
    ///
    /// ```
    /// # use bevy_app::App;
    /// # use tickstep_bevy::{TickstepCommands, TickstepPlugin};
    /// # let mut app = App::new();
    /// # app.add_plugins(TickstepPlugin::builder().build()?);
    /// assert!(app.world().non_send::<TickstepCommands>().resume().is_none());
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn resume(&self) -> Option<RunError> {
        self.cycle.failure.borrow_mut().take()
    }
}
