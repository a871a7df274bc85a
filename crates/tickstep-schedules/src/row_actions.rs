//! The rules of the operator actions that do not need an engine (docs/schedules.md §9.4–§9.12):
//! what a pause note may hold, a backfill's bounds and cadence points, and an action applied to
//! a stored row. The engine checks its calls with them, and an operator acting on a store from
//! outside any engine (the `Inspector`) checks the stored row with the same code.

use crate::fire_times::Step;
use crate::info::unix_seconds;
use crate::options::MAX_CATCHUP_FIRINGS;
use crate::store_rows::{OperatorAction, PausedRow, ScheduleRow};
use crate::{Error, ObjId, ScheduleId, Value};

/// Who pauses a schedule from outside the engine (`tickstep schedules pause`): the store's
/// operator, MOO's `#-1` (docs/schedules.md §9.12).
pub(crate) const OPERATOR: ObjId = ObjId(-1);

/// The longest pause note, in bytes (docs/schedules.md §9.5).
pub const MAX_NOTE_BYTES: usize = 200;

/// A backfill's bounds as the caller typed them, checked: finite times, `from` not after `to`,
/// `to` not after `now`; in Unix nanoseconds (docs/schedules.md §9.7).
pub(crate) fn backfill_bounds(from: f64, to: f64, now: u64) -> Result<(u64, u64), Error> {
    let bound = |v: f64, name: &str| {
        crate::limits::seconds_to_nanos(v).ok_or_else(|| {
            Error::invalid(
                Value::Float(v),
                format!(
                    "backfill {name} must be a finite Unix time in seconds from 0 to \
                     18446744073 (docs/schedules.md §9.7)"
                ),
            )
        })
    };
    let (from_ns, to_ns) = (bound(from, "from")?, bound(to, "to")?);
    if from_ns > to_ns {
        return Err(Error::invalid(
            format!("{from} > {to}"),
            "backfill from must not be after to (docs/schedules.md §9.7)",
        ));
    }
    if to_ns > now {
        return Err(Error::invalid(
            Value::Float(to),
            format!(
                "backfill fills a past range: to must not be after now ({}) (docs/schedules.md §9.7)",
                unix_seconds(now)
            ),
        ));
    }
    Ok((from_ns, to_ns))
}

/// The cadence points a backfill of `[from, to]` fires for a schedule stepping by `step`
/// (`None` for a one-shot) whose next point is `next_run`: the first, the last and how many, or
/// why there are none to fire (docs/schedules.md §9.7; a calendar's points,
/// docs/schedules.md §14.13).
/// `under_way`: a backfill of it has not finished.
pub(crate) fn backfill_points(
    (step, next_run, under_way): (Option<&Step>, u64, bool),
    (from, to): (u64, u64),
    typed: (f64, f64),
    name: ScheduleId,
) -> Result<(u64, u64, u64), Error> {
    let range = || format!("[{}, {}]", typed.0, typed.1);
    let Some(step) = step else {
        return Err(Error::invalid(
            name,
            "backfill needs a recurring schedule: a one-shot has no cadence points (docs/schedules.md §9.7)",
        ));
    };
    if under_way {
        return Err(Error::invalid(
            name,
            "a backfill of this schedule is still under way; one at a time (docs/schedules.md §9.7)",
        ));
    }
    let Some((first, last, count)) = step.points_in(next_run, from, to, MAX_CATCHUP_FIRINGS) else {
        return Err(Error::invalid(
            range(),
            "backfill range holds no cadence point of the schedule (docs/schedules.md §9.7)",
        ));
    };
    if count > MAX_CATCHUP_FIRINGS {
        return Err(Error::invalid(
            range(),
            format!(
                "backfill range holds {count} cadence points; at most {MAX_CATCHUP_FIRINGS}, \
                 the bound of catch-up: split it (docs/schedules.md §9.7)"
            ),
        ));
    }
    Ok((first, last, count))
}

/// An operator's action on a stored row, made from outside any engine (docs/schedules.md
/// §9.12): the row's operator state as the engine's own action would leave it, checked the
/// same way. Returns what the engine call returns (0 or 1 for a pause, resume or trigger that
/// changed nothing or something; the points of a backfill). A resume here only lifts the pause:
/// the engine that loads or holds the row applies catch-up (docs/schedules.md §11.8).
///
/// # Errors
///
/// As the engine's actions: a bad note or backfill, with the row unchanged.
pub(crate) fn act_on_row(
    row: &mut ScheduleRow,
    action: &OperatorAction,
    now: u64,
) -> Result<u64, Error> {
    let name = ScheduleId::from_raw(row.id);
    let c = &mut row.cadence;
    let mut ops = c.ops.as_deref().cloned().unwrap_or_default();
    let answer = match action {
        OperatorAction::Pause { note } => {
            check_note(note)?;
            if ops.paused.is_some() {
                return Ok(0);
            }
            ops.paused = Some(PausedRow {
                by: OPERATOR,
                at: now,
                note: note.clone(),
                armed: c.armed,
            });
            c.armed = false;
            1
        }
        OperatorAction::Resume => {
            let Some(paused) = ops.paused.take() else {
                return Ok(0);
            };
            c.armed = paused.armed;
            1
        }
        OperatorAction::Trigger => {
            if ops.trigger {
                return Ok(0);
            }
            ops.trigger = true;
            1
        }
        OperatorAction::Backfill { from, to } => {
            let step = Step::of(row.kind, row.interval_ns, row.calendar.as_ref());
            let (first, last, count) = backfill_points(
                (step.as_ref(), c.next_run, ops.backfill.is_some()),
                (*from, *to),
                (unix_seconds(*from), unix_seconds(*to)),
                name,
            )?;
            ops.backfill = Some((first, last));
            count
        }
    };
    c.ops = (!ops.is_empty()).then(|| Box::new(ops));
    Ok(answer)
}

/// Lays onto `row` the actions noted for it after the last note its state includes
/// (`ops.note`), oldest first: an engine that had not read them yet may have written the row
/// over with its own state meanwhile, and will apply them when it reads them
/// (docs/schedules.md §9.12). An operator's next action is judged against the state they leave,
/// so a second backfill is refused as under way, not accepted and dropped by the engine later
/// (docs/schedules.md §9.14). Each is applied as the engine applies a note: one that does nothing or is refused
/// changes nothing.
pub(crate) fn replay_pending(
    row: &mut ScheduleRow,
    pending: impl IntoIterator<Item = crate::store_rows::OperatorNote>,
    now: u64,
) {
    for note in pending {
        let seen = row.cadence.ops.as_ref().map_or(0, |ops| ops.note);
        let Some(action) = note.action.filter(|_| note.seq > seen) else {
            continue;
        };
        // Refused or not, the note is then behind the row, as the engine marks it read.
        let _ = act_on_row(row, &action, now);
        row.cadence.ops.get_or_insert_default().note = note.seq;
    }
}

/// A pause note is shown to other users and stored: short, and no control characters.
pub(crate) fn check_note(note: &str) -> Result<(), Error> {
    if note.len() > MAX_NOTE_BYTES || note.chars().any(char::is_control) {
        return Err(Error::invalid(
            crate::limits::excerpt(note),
            format!(
                "a pause note is at most {MAX_NOTE_BYTES} bytes of text without control characters (docs/schedules.md §9.5)"
            ),
        ));
    }
    Ok(())
}
