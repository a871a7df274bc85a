//! The permission table of docs/schedules.md §6.3, in one place.
//!
//! | operation | who may |
//! |---|---|
//! | create | anyone whose permissions can call the verb now (else `E_INVARG`), naming a `player` they control (else `E_PERM`; wizards exempt) |
//! | `schedule_stop`, `schedule_info` | the owner or a wizard (`schedule_stop` of a schedule that is not live never raises) |
//! | `schedules()` | anyone: a wizard sees every live schedule, others their own |
//! | `schedules(owner)` | a wizard, or `owner` itself |
//! | `schedules_for(obj)` | anyone |
//!
//! Every check asks the host's [`World`] and must run with no engine borrow held.

use crate::{Error, ObjId, World};

/// Whether `perms` may stop or inspect a schedule owned by `owner`.
pub(crate) fn may_manage(world: &dyn World, perms: ObjId, owner: ObjId) -> bool {
    perms == owner || world.is_wizard(perms)
}

/// The creator must control the object that will be `player` in the fired verb.
pub(crate) fn check_player(world: &dyn World, perms: ObjId, player: ObjId) -> Result<(), Error> {
    if !world.valid(player) {
        return Err(Error::invalid(player, "player must be a valid object"));
    }
    if world.is_wizard(perms) || world.controls(perms, player) {
        Ok(())
    } else {
        Err(Error::perm(
            perms,
            player,
            "player must be an object the creator controls (is or owns); wizards may name any",
        ))
    }
}

/// `schedules(owner)` is for a wizard or the owner itself.
pub(crate) fn check_list_owner(world: &dyn World, perms: ObjId, owner: ObjId) -> Result<(), Error> {
    if perms == owner || world.is_wizard(perms) {
        Ok(())
    } else {
        Err(Error::perm(
            perms,
            owner,
            "schedules(owner) is for a wizard or the owner itself",
        ))
    }
}
