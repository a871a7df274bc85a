//! The shared bell: a mechanism of the command layer that one ring (a coroutine command) owns
//! at a time, so two players contend for it by priority and the loser is told why
//! (docs/serve.md §5).
//!
//! The server's runtime has no always-on command cycle (it would keep an idle server busy every
//! 20 ms); instead a ring starts a kernel job that runs the command scheduler once per command
//! period while a command is queued or running, and cancels itself when the bell is quiet.

use std::cell::RefCell;
use std::rc::{Rc, Weak};
use std::time::Duration;

use tickstep::commands::{Mechanism, ScheduleResult};
use tickstep::kernel::ErrorChain;
use tickstep::kernel::{Priority, TaskHandle};
use tickstep::schedules::{ObjId, ScheduleId};
use tickstep::{DEFAULT_COMMAND_PERIOD, Runtime};

/// What the bell needs of the server it rings in: names, messages and the runtime. A trait here
/// (implemented by the world's `Server`) so the bell names nothing of the world, which owns it.
pub(crate) trait Hall {
    /// A player's name.
    fn name(&self, who: ObjId) -> String;
    /// Sends `line` to one player.
    fn tell(&self, who: ObjId, line: String);
    /// Sends `line` to every player online.
    fn broadcast(&self, line: &str);
    /// The server's runtime.
    fn runtime(&self) -> &Rc<Runtime>;
}

/// How long a ring holds the bell.
pub(crate) const RING_TIME: Duration = Duration::from_secs(3);

/// The bell and who holds (or was last granted) it.
pub(crate) struct Bell {
    mechanism: Mechanism,
    holder: Rc<RefCell<Option<(String, i32)>>>,
    pump: Rc<RefCell<Option<TaskHandle>>>,
}

impl Bell {
    pub(crate) fn new(rt: &Runtime) -> Bell {
        Bell {
            mechanism: Mechanism::new(rt.commands(), "bell"),
            holder: Rc::new(RefCell::new(None)),
            pump: Rc::new(RefCell::new(None)),
        }
    }

    /// Asks for the bell on behalf of `who`; the reply says whether they got it and, if not, why.
    pub(crate) fn ring<S: Hall + 'static>(
        &self,
        server: &Rc<S>,
        who: ObjId,
        priority: i32,
        from: Option<ScheduleId>,
    ) -> String {
        let name = server.name(who);
        let by = from.map_or_else(String::new, |id| format!(" (schedule #{})", id.get()));
        let weak = Rc::downgrade(server);
        let (ringer, holder) = (name.clone(), Rc::clone(&self.holder));
        let body = move |co: tickstep::commands::Coroutine| {
            let (server, ringer, holder) = (weak.clone(), ringer.clone(), Rc::clone(&holder));
            async move {
                announce(
                    &server,
                    &format!("[bell] DING! {ringer} rings the bell (priority {priority})"),
                );
                co.wait(RING_TIME).await;
                announce(&server, &format!("[bell] the bell falls silent ({ringer})"));
                holder.borrow_mut().take();
            }
        };
        let (cut_server, cut_holder) = (Rc::downgrade(server), Rc::clone(&self.holder));
        let command = self
            .mechanism
            .run(body)
            .with_priority(priority)
            .on_cancel(move || {
                let Some(server) = cut_server.upgrade() else {
                    return;
                };
                let taker = cut_holder
                    .borrow()
                    .as_ref()
                    .map_or_else(|| "someone".to_owned(), |(n, p)| format!("{n} (priority {p})"));
                server.tell(
                    who,
                    format!("[bell] your ring was cut off: {taker} took the bell from you (your priority {priority})"),
                );
            })
            .named(format!("{name}'s ring"));
        let result = server.runtime().commands().schedule(&command);
        match result {
            ScheduleResult::Success => {
                *self.holder.borrow_mut() = Some((name, priority));
                self.start_pump(server.runtime());
                format!("ok: you ring the bell{by} (priority {priority})")
            }
            ScheduleResult::LowerPriorityThanRunning {
                running,
                running_priority,
                ..
            }
            | ScheduleResult::LowerPriorityThanQueued {
                queued: running,
                queued_priority: running_priority,
                ..
            } => format!(
                "error: the bell is busy{by}: {running} has priority {running_priority}, yours is \
                 {priority}; a lower priority loses"
            ),
            other => format!("error: the bell refused{by}: {other}"),
        }
    }

    /// Runs the command scheduler every command period until nothing is queued or running.
    fn start_pump(&self, rt: &Runtime) {
        if self.pump.borrow().is_some() {
            return;
        }
        let commands = rt.commands().clone();
        let pump = Rc::downgrade(&self.pump);
        let job = rt.scheduler().with_origin("tickstep serve bell").every(
            DEFAULT_COMMAND_PERIOD,
            move || {
                if let Err(error) = commands.run() {
                    eprintln!(
                        "tickstep serve: a bell command failed: {}",
                        ErrorChain(&error)
                    );
                }
                if commands.running().is_empty() && commands.queued().is_empty() {
                    stop_pump(&pump);
                }
            },
            Priority::High,
        );
        match job {
            Ok(handle) => *self.pump.borrow_mut() = Some(handle),
            Err(error) => eprintln!("tickstep serve: cannot run the bell: {error}"),
        }
    }
}

fn stop_pump(pump: &Weak<RefCell<Option<TaskHandle>>>) {
    if let Some(pump) = pump.upgrade()
        && let Some(job) = pump.borrow_mut().take()
    {
        job.cancel();
    }
}

fn announce<S: Hall>(server: &Weak<S>, line: &str) {
    if let Some(server) = server.upgrade() {
        server.broadcast(line);
    }
}
