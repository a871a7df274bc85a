//! serve's side of the dashboard (docs/serve.md §13.8, §13.10): what serve adds to the one
//! dashboard of `tickstep::dashboard` — players' names, who is online, and actions done as a
//! player under serve's own rules. An action is that player's typed `stop`, `pause`, `resume` or
//! `trigger` command, from the address that asked: the same permission rules, replies and quota
//! counts.
//!
//! Costs: the command on the server's thread between frames, as a typed one.

use std::rc::{Rc, Weak};

use tickstep::Runtime;
use tickstep::dashboard::{Action, ActionRequest, DashboardHost, Refused, RefusedKind};
use tickstep::schedules::ObjId;

use super::line_protocol::Request;
use super::server::Server;

/// The dashboard's view of the server, held weakly (the dashboard's tasks end with the server).
pub(crate) struct ServeHost(pub(crate) Weak<Server>);

impl ServeHost {
    pub(crate) fn new(server: &Rc<Server>) -> Rc<ServeHost> {
        Rc::new(ServeHost(Rc::downgrade(server)))
    }
}

impl DashboardHost for ServeHost {
    fn reader(&self) -> ObjId {
        self.0.upgrade().map_or(ObjId(0), |s| s.principals_root())
    }

    fn name_of(&self, who: ObjId) -> String {
        self.0
            .upgrade()
            .map_or_else(|| who.to_string(), |s| s.presence.name(who))
    }

    fn principal_named(&self, name: &str) -> Option<ObjId> {
        self.0.upgrade()?.presence.player_named(name)
    }

    fn online(&self) -> Option<usize> {
        Some(self.0.upgrade().map_or(0, |s| s.presence.online_count()))
    }

    fn act(&self, _rt: &Runtime, request: &ActionRequest) -> Result<(), Refused> {
        let Some(server) = self.0.upgrade() else {
            return Err(Refused::not_found("the server is stopping"));
        };
        let name = &request.acting_as;
        let Some(who) = server.presence.player_named(name) else {
            return Err(Refused::forbidden(format!(
                "actions act as {name:?}, who has never logged in (docs/serve.md §13.8)"
            )));
        };
        let id = request.id.get();
        let command = match &request.action {
            Action::Stop => Request::Stop(id),
            Action::Pause { note } => Request::Pause {
                id,
                note: note.clone(),
            },
            Action::Resume => Request::Resume(id),
            Action::Trigger => Request::Trigger(id),
        };
        // A schedule command never waits: it answers at once, on this thread.
        let Some((lines, _)) = server.execute_now(who, request.from, command) else {
            return Err(Refused::not_found("the server is busy; try again"));
        };
        let reply = lines.join("\n");
        match refusal_of(&reply) {
            None => Ok(()),
            Some(kind) => Err(Refused { kind, why: reply }),
        }
    }
}

/// The refusal a command's reply stands for: `ok:` is done; a schedule the acting player may not
/// see, missing or another's, `404` under the one wording of docs/serve.md §4.7 (so the status
/// tells no more than the reply); any other permission refusal (`E_PERM`) `403`; any other
/// refusal `400` (docs/serve.md §13.8).
fn refusal_of(reply: &str) -> Option<RefusedKind> {
    if reply.starts_with("ok:") {
        None
    } else if reply.starts_with("error: you have no schedule #")
        || reply.starts_with("error: there is no schedule #")
    {
        Some(RefusedKind::NotFound)
    } else if reply.contains("E_PERM") {
        Some(RefusedKind::Forbidden)
    } else {
        Some(RefusedKind::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_map_to_refusals() {
        // docs/serve.md §13.8, §4.7
        assert_eq!(refusal_of("ok: paused #3"), None);
        assert_eq!(
            refusal_of("error: you have no schedule #3"),
            Some(RefusedKind::NotFound)
        );
        assert_eq!(
            refusal_of("error: there is no schedule #3"),
            Some(RefusedKind::NotFound)
        );
        assert_eq!(
            refusal_of("error: E_PERM: #2 may not use #3: not the owner"),
            Some(RefusedKind::Forbidden)
        );
        assert_eq!(
            refusal_of("error: the note has a control character"),
            Some(RefusedKind::Invalid)
        );
    }
}
