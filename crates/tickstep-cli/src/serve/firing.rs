//! What a firing does in the world: the three verbs a schedule may run — `tell` its player,
//! `say` to everyone within the world's rate of scheduled says, `ring` the bell
//! (docs/serve.md §3, §11.6) — and the one-shot's end in the quota. Runs inside the frame.

use std::rc::{Rc, Weak};
use std::time::Instant;

use tickstep::schedules::{ObjId, ScheduleId, Value};
use tickstep::{VerbCall, VerbResult};
use tickstep_host::shown;

use super::bell::Hall;
use super::fair_use::ScheduledSay;
use super::limits;
use super::line_protocol::WorldVerb;
use super::server::Server;

/// A schedule firing one of the world's verbs.
fn fire(server: &Weak<Server>, verb: WorldVerb, call: &VerbCall) -> VerbResult {
    let Some(server) = server.upgrade() else {
        return Err(Value::from("the server has stopped"));
    };
    let firing = call.firing();
    let (id, owner) = (firing.schedule, firing.authority);
    server.schedules.fired(owner, id);
    let arg = firing.args.first().and_then(Value::as_text).unwrap_or("");
    match verb {
        WorldVerb::Tell => server.tell(firing.player, format!("[#{}] {}", id.get(), shown(arg))),
        WorldVerb::Say => server.scheduled_say(id, owner, arg),
        WorldVerb::Ring => {
            let priority = arg.parse().unwrap_or(0);
            let reply = server.bell.ring(&server, owner, priority, Some(id));
            server.tell(owner, format!("[#{}] {reply}", id.get()));
        }
    }
    Ok(Value::Int(0))
}

impl Server {
    /// The world's verbs, each firing through [`fire`], in the runtime's verb table.
    pub(super) fn register_verbs(self: &Rc<Self>) {
        for verb in WorldVerb::ALL {
            let server = Rc::downgrade(self);
            self.rt
                .verb(verb.name(), move |call| fire(&server, verb, call));
        }
    }

    /// A schedule's `say`, within the world's rate of scheduled says (docs/serve.md §11.6): over
    /// it the line is dropped and counted, and its owner is told at most once a minute.
    fn scheduled_say(&self, id: ScheduleId, owner: ObjId, text: &str) {
        let verdict = self
            .fair_use
            .borrow_mut()
            .take_scheduled_say(owner, Instant::now());
        if verdict == ScheduledSay::Said {
            self.presence.broadcast(&format!(
                "[#{}] {} says: {}",
                id.get(),
                self.presence.name(owner),
                shown(text)
            ));
            return;
        }
        if verdict == ScheduledSay::Dropped {
            return;
        }
        let rate = limits::SCHEDULED_SAYS;
        self.presence.tell(
            owner,
            format!(
                "[#{}] not said: the world carries at most {} scheduled says a second; \
                 some of yours were dropped (told once a minute)",
                id.get(),
                rate.per_second
            ),
        );
    }
}
