//! The runner the engine starts firings through ([`EngineRunner`]): the host's own, or the
//! core's [`KernelRunner`], which makes each firing a kernel task at the firing priority — a sync
//! verb one task, an async verb an async task — isolated by `catch_unwind`, under its limits,
//! listed while it runs, and reporting its outcome by run id when it ends. A firing run again
//! (docs/runtime.md §6.7) is the same task with its `VerbCall` told so.

use std::rc::{Rc, Weak};
use std::time::Duration;

use tickstep_kernel::clock::Clock;
use tickstep_schedules::{Firing, Refused, RunId, Runner};

use super::HostCore;
use crate::firings;
use crate::verbs::{CatchUnwind, Verb, VerbCall, call_sync, outcome_of};

/// The runner the engine starts firings through: the core's own (verbs as kernel tasks), or the
/// host's.
pub(crate) enum EngineRunner<C> {
    Kernel(KernelRunner<C>),
    Host(Box<dyn Runner>),
}

impl<C: Clock + Clone + 'static> Runner for EngineRunner<C> {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        match self {
            EngineRunner::Kernel(runner) => runner.start(firing),
            EngineRunner::Host(runner) => runner.start(firing),
        }
    }

    fn rerun(&self, firing: &Firing) -> Result<(), Refused> {
        match self {
            EngineRunner::Kernel(runner) => runner.rerun(firing),
            EngineRunner::Host(runner) => runner.rerun(firing),
        }
    }

    fn cancel(&self, run: RunId) -> bool {
        match self {
            EngineRunner::Kernel(runner) => runner.cancel(run),
            EngineRunner::Host(runner) => runner.cancel(run),
        }
    }
}

/// Each firing becomes a kernel task (sync verb) or an async kernel task (async verb) at the
/// firing priority, isolated by `catch_unwind`, under its limits; its outcome is reported by run
/// id when it ends.
pub(crate) struct KernelRunner<C> {
    pub(crate) core: Weak<HostCore<C>>,
}

impl<C: Clock + Clone + 'static> Runner for KernelRunner<C> {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        self.launch(firing, false)
    }

    /// As [`KernelRunner::start`], with the verb told it runs again (docs/runtime.md §6.7).
    fn rerun(&self, firing: &Firing) -> Result<(), Refused> {
        self.launch(firing, true)
    }

    /// Stops the task of a run the engine settled as killed under overlap `"cancel_other"`
    /// (docs/schedules.md §16.7), as [`HostCore::kill`] does: the kill it reports is ignored by
    /// the engine, which counted it already and no longer waits for the run.
    fn cancel(&self, run: RunId) -> bool {
        self.core.upgrade().is_some_and(|core| core.kill(run))
    }
}

impl<C: Clock + Clone + 'static> KernelRunner<C> {
    /// The firing's verb as a kernel task; `rerun` for a point handed back and run again.
    fn launch(&self, firing: &Firing, rerun: bool) -> Result<(), Refused> {
        let weak = self.core.clone();
        let core = weak
            .upgrade()
            .ok_or_else(|| Refused("the host has shut down".into()))?;
        let verb = core.verbs.get(&firing.verb).ok_or_else(|| {
            Refused(format!(
                "no code is registered for verb {:?}",
                &*firing.verb
            ))
        })?;
        let run = firing.run;
        let call = VerbCall::new(
            (firing.clone(), rerun),
            run,
            core.engine().clone(),
            core.kernel.clone(),
            core.context.clone(),
        );
        let tasks = core.kernel.with_origin(format!("verb {}", firing.verb));
        let tracker = core.firings.tracker(firing);
        let state = Rc::clone(&tracker.state);
        let task = match verb {
            Verb::Sync(f) => {
                let kernel = core.kernel.clone();
                tasks.schedule(
                    move || {
                        tracker.state.polls.set(1);
                        // Measured only under a time limit: a clock read is not free.
                        let timed = tracker.limits.time_limit().map(|_| kernel.now());
                        let result = call_sync(&*f, &call);
                        let ran = timed.map_or(Duration::ZERO, |started| kernel.now() - started);
                        let verdict = firings::sync_verdict(&tracker, ran);
                        if let Some(core) = weak.upgrade() {
                            let outcome = verdict.unwrap_or_else(|| outcome_of(result));
                            core.report_tracked(run, outcome, &tracker.state);
                        }
                    },
                    core.firing_priority,
                )
            }
            Verb::Async(f) => {
                let kernel = core.kernel.clone();
                tasks.spawn(
                    async move {
                        let verb = async move {
                            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(call)))
                            {
                                Ok(future) => CatchUnwind(future).await,
                                Err(payload) => Err(payload),
                            }
                        };
                        let outcome = match firings::Limited::new(verb, &tracker, &kernel).await {
                            Ok(result) => outcome_of(result),
                            Err(limit) => limit,
                        };
                        if let Some(core) = weak.upgrade() {
                            core.report_tracked(run, outcome, &tracker.state);
                        }
                    },
                    core.firing_priority,
                )
            }
        };
        // Recorded once its task exists; it runs at the earliest in the next drain.
        core.firings
            .register(run, firing, core.clock.unix_nanos(), state, task);
        Ok(())
    }
}
