//! Creating a schedule that may carry a name (docs/schedules.md §5.12–§5.15), the way the demo
//! and `serve` both need it: one transaction that creates it and commits, and, when another task
//! or node committed the same name first meanwhile (the key refused at commit), one more run that
//! gets that schedule instead.

use tickstep::schedules::{Error, ObjId, Options, ScheduleId, Schedules, Txn};

/// Runs `create` in a transaction opened with `perms`, with `options` (plus `key` if any),
/// and commits; returns the schedule's id and whether this call created it. A key taken
/// meanwhile is refused at commit, and the creation runs once more to get that schedule.
pub(crate) fn create_named(
    engine: &Schedules,
    perms: ObjId,
    (key, options): (Option<&str>, &Options),
    create: impl Fn(&mut Txn, Options) -> Result<ScheduleId, Error>,
) -> Result<(ScheduleId, bool), Error> {
    let attempt = || {
        let mut txn = engine.begin(perms);
        let options = key.map_or_else(|| options.clone(), |k| options.clone().key(k));
        let id = create(&mut txn, options)?;
        let new = txn.is_new(id);
        txn.commit().map(|()| (id, new))
    };
    match attempt() {
        Err(Error::KeyTaken { .. }) if key.is_some() => attempt(),
        made => made,
    }
}
