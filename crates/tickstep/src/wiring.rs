//! The runtime's own wiring around the host core: the command cycle, failures, overload
//! listeners and the counters that are the runtime's alone.
//!
//! # Ownership (why nothing leaks and a clean shutdown commits)
//!
//! The [`Wiring`] is owned by the `Runtime` alone. Everything that runs later — the command cycle,
//! and through the host core the schedules wake, each firing's task and the engine's runner —
//! holds a `Weak`, so no reference cycle keeps the engine alive after the runtime is dropped, and
//! the engine's last handle going away performs its final group commit.
//!
//! # The schedules wake
//!
//! The host core arms one kernel `after()` for the engine's earliest deadline and re-arms it
//! after every tick and every settled firing (docs/runtime.md §8); the wiring asks it again after
//! every command cycle and at the start of every `run_*` call — the places where a new, earlier
//! deadline can appear. An idle runtime is therefore an idle kernel: the frame loop sleeps
//! straight to the next deadline, which is what makes a simulated day take milliseconds.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::{FrameScheduler, Overload, Priority, TaskHandle};

use crate::RuntimeClock;
use crate::error::RuntimeError;
use crate::host::HostCore;

/// The kernel origin label of the command cycle job (its name in the profiler).
pub(crate) const COMMAND_CYCLE_ORIGIN: &str = "tickstep commands run()";

/// Counters only the runtime keeps (the host core keeps the schedules' own).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) command_cycles: Cell<u64>,
    pub(crate) task_panics: Cell<u64>,
    pub(crate) overloads: Cell<u64>,
}

fn bump(cell: &Cell<u64>, by: u64) {
    cell.set(cell.get() + by);
}

type OverloadListener = Rc<dyn Fn(&Overload)>;
type CycleObserver = Rc<dyn Fn(&crate::CycleView<'_>)>;

pub(crate) struct Wiring {
    pub(crate) core: Rc<HostCore<RuntimeClock>>,
    pub(crate) kernel: FrameScheduler,
    pub(crate) commands: tickstep_commands::CommandScheduler,
    pub(crate) counters: Counters,
    /// The first failure a `run_*` call has not returned yet.
    failure: RefCell<Option<RuntimeError>>,
    command_job: RefCell<Option<TaskHandle>>,
    /// The command cycle's period (`None`: built without commands).
    command_period: Cell<Option<Duration>>,
    overload_listeners: RefCell<Vec<OverloadListener>>,
    last_overload: RefCell<Option<Overload>>,
    /// Called after every command cycle (`Runtime::after_command_cycle`).
    cycle_observers: RefCell<Vec<CycleObserver>>,
}

impl Wiring {
    pub(crate) fn new(
        core: Rc<HostCore<RuntimeClock>>,
        kernel: FrameScheduler,
        commands: tickstep_commands::CommandScheduler,
    ) -> Rc<Wiring> {
        Rc::new(Wiring {
            core,
            kernel,
            commands,
            counters: Counters::default(),
            failure: RefCell::new(None),
            command_job: RefCell::new(None),
            command_period: Cell::new(None),
            overload_listeners: RefCell::new(Vec::new()),
            last_overload: RefCell::new(None),
            cycle_observers: RefCell::new(Vec::new()),
        })
    }

    /// Records a failure for the next `run_*` return and stops the command cycle (a failed
    /// command crashes the robot program in the command layer's model; here it stops the cycle).
    pub(crate) fn fail(&self, error: RuntimeError) {
        tracing::error!(target: "tickstep", "{error}");
        if let Some(job) = self.command_job.borrow_mut().take() {
            job.cancel();
        }
        self.failure.borrow_mut().get_or_insert(error);
    }

    pub(crate) fn take_failure(&self) -> Option<RuntimeError> {
        self.failure.borrow_mut().take()
    }

    /// Starts the per-cycle command job.
    pub(crate) fn start_command_cycle(
        self: &Rc<Self>,
        period: Duration,
    ) -> Result<(), RuntimeError> {
        let wiring = Rc::downgrade(self);
        let job = self.kernel.with_origin(COMMAND_CYCLE_ORIGIN).every(
            period,
            move || {
                if let Some(wiring) = wiring.upgrade() {
                    wiring.run_command_cycle();
                }
            },
            Priority::High,
        )?;
        *self.command_job.borrow_mut() = Some(job);
        self.command_period.set(Some(period));
        Ok(())
    }

    /// Starts the command cycle again after a failure stopped it. Returns whether it was
    /// restarted (false: it is running, or the runtime was built without commands).
    pub(crate) fn restart_command_cycle(self: &Rc<Self>) -> Result<bool, RuntimeError> {
        match self.command_period.get() {
            Some(period) if !self.command_cycle_running() => {
                self.start_command_cycle(period)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// One command cycle. Its failure is recognised by type here, at the call, not afterwards by
    /// the kernel's error hook: a command's panic is caught around `run()` (and resumed nowhere:
    /// it becomes [`RuntimeError::CommandPanicked`]), so no user task, whatever its origin label,
    /// can be mistaken for the command cycle.
    fn run_command_cycle(self: &Rc<Self>) {
        bump(&self.counters.command_cycles, 1);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commands.run()));
        match run {
            Ok(Ok(())) => {}
            Ok(Err(error)) => self.fail(RuntimeError::Command(error)),
            Err(payload) => self.fail(RuntimeError::CommandPanicked {
                message: tickstep_kernel::panic_message(payload.as_ref()),
            }),
        }
        self.core.rearm();
        self.notify_cycle_observers();
    }

    pub(crate) fn after_command_cycle(&self, observer: CycleObserver) {
        self.cycle_observers.borrow_mut().push(observer);
    }

    /// Calls the cycle observers, each taken out of the list before its call (no borrow held,
    /// so an observer may register another; no allocation per cycle).
    fn notify_cycle_observers(&self) {
        let view = crate::CycleView {
            commands: &self.commands,
            kernel: &self.kernel,
            core: &self.core,
        };
        let mut i = 0;
        while let Some(observe) = self.cycle_observers.borrow().get(i).cloned() {
            observe(&view);
            i += 1;
        }
    }

    pub(crate) fn command_cycle_running(&self) -> bool {
        self.command_job.borrow().is_some()
    }

    pub(crate) fn on_overload(&self, listener: OverloadListener) {
        self.overload_listeners.borrow_mut().push(listener);
    }

    pub(crate) fn publish_overload(&self, overload: &Overload) {
        bump(&self.counters.overloads, 1);
        *self.last_overload.borrow_mut() = Some(overload.clone());
        let listeners = self.overload_listeners.borrow().clone();
        for listener in listeners {
            listener(overload);
        }
    }

    pub(crate) fn last_overload(&self) -> Option<Overload> {
        self.last_overload.borrow().clone()
    }

    pub(crate) fn note_task_panic(&self) {
        bump(&self.counters.task_panics, 1);
    }
}
