//! Who the schedules engine sees in a served world (docs/serve.md §4): players are the only
//! objects, each controls only itself, wizards read every schedule, and schedules may run the
//! world's three verbs. Shared by the engine (as its host world) and the server's presence.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use tickstep::schedules::{self, ObjId};

use super::line_protocol::WorldVerb;

/// The schedules engine's view of the world: players are the only objects, each controls only
/// itself, one of them is the wizard, and schedules may run the world's three verbs.
pub(crate) struct Principals {
    /// The wizard `--wizard` names: the server reads every schedule with its permissions.
    pub(crate) root: ObjId,
    /// Every wizard (the configured one, and those a wizard made: docs/serve.md §10.5).
    pub(crate) wizards: RefCell<HashSet<ObjId>>,
    pub(crate) players: RefCell<HashSet<ObjId>>,
}

/// [`Principals`] as the engine's host world.
pub(crate) struct ServeWorld(pub(crate) Rc<Principals>);

impl schedules::World for ServeWorld {
    fn valid(&self, obj: ObjId) -> bool {
        self.0.players.borrow().contains(&obj)
    }
    fn is_wizard(&self, who: ObjId) -> bool {
        self.0.wizards.borrow().contains(&who)
    }
    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        who == obj
    }
    fn verb_callable(&self, _perms: ObjId, _target: ObjId, verb: &str) -> bool {
        WorldVerb::ALL.iter().any(|v| v.name() == verb)
    }
}
