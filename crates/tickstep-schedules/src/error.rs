//! Typed errors. Each names the offending value and the rule it broke, and maps to the MOO error
//! code docs/schedules.md §12.1 names ([`Error::code`]), so a host can translate it to its own
//! language.

use std::fmt::Display;
use std::path::PathBuf;

use crate::ObjId;

/// Everything the schedule engine can refuse.
///
/// A refused call changes nothing: no half-created schedule, no id that later fires, no row
/// written.
///
/// ```
/// use tickstep_schedules::Error;
/// let e = Error::InvalidArg { value: "-1".into(), rule: "interval must be a finite number of seconds >= 0".into() };
/// assert_eq!(e.code(), "E_INVARG");
/// assert_eq!(e.to_string(), "E_INVARG: -1: interval must be a finite number of seconds >= 0");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A bad argument (MOO `E_INVARG`): `value` is what was passed, `rule` what it must satisfy.
    #[error("E_INVARG: {value}: {rule}")]
    InvalidArg {
        /// The offending value, as the caller wrote it.
        value: String,
        /// The rule the value broke.
        rule: String,
    },
    /// A calendar schedule's expression, zone or DST policy was refused
    /// ([`CalendarError`](crate::CalendarError) names the field and the rule of
    /// docs/schedules.md §14); nothing was created (docs/schedules.md §14.12).
    ///
    /// ```
    /// let e = tickstep_schedules::Error::from(tickstep_schedules::CalendarError::Empty);
    /// assert_eq!(e.code(), "E_INVARG");
    /// ```
    #[error("E_INVARG: {0}")]
    Calendar(#[from] crate::CalendarError),
    /// A permission refusal (MOO `E_PERM`): `who` may not do this to `value`, because of `rule`.
    #[error("E_PERM: {who} may not use {value}: {rule}")]
    Perm {
        /// The permissions of the calling task.
        who: ObjId,
        /// The schedule, object or owner the caller named.
        value: String,
        /// The rule that refused it.
        rule: String,
    },
    /// A schedule key is taken (MOO `E_INVARG`, docs/schedules.md §5.14, §5.15): `existing` is the
    /// live schedule of `owner` that holds `key`, and `rule` says why this creation could not
    /// return it — its definition differs, or it was committed after this transaction created
    /// its own (by another task or another node: run the task again, and the creation returns
    /// `existing`). Nothing was created.
    ///
    /// `existing` shows itself as `schedule N`, so the message names it once:
    ///
    /// ```
    /// use tickstep_schedules::{Error, ObjId, ScheduleId};
    /// let e = Error::KeyTaken {
    ///     key: "hourly".into(),
    ///     owner: ObjId(2),
    ///     existing: ScheduleId::from_raw(3),
    ///     rule: "its definition differs".into(),
    /// };
    /// assert_eq!(e.to_string(), "E_INVARG: key \"hourly\" of #2 names schedule 3: its definition differs");
    /// ```
    #[error("E_INVARG: key {key:?} of {owner} names {existing}: {rule}")]
    KeyTaken {
        /// The key.
        key: String,
        /// The owner the key belongs to (the creating task's permissions).
        owner: ObjId,
        /// The schedule that holds the key.
        existing: crate::ScheduleId,
        /// Why the creation could not return it.
        rule: String,
    },
    /// The SQLite store failed; the operation was not applied.
    #[error("schedule store failed while {context}")]
    Store {
        /// What the engine was doing.
        context: &'static str,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The node [`Config::node`](crate::Config::node) names is still alive: its lease was
    /// renewed all the while the open waited for it to run out (docs/schedules.md §11.49). Two
    /// engines must not share a node id; nothing was opened.
    #[error(
        "node {node} is in use: its lease was renewed for the {waited:?} this open waited \
         (docs/schedules.md §11.49: two live engines must not share a node id)"
    )]
    NodeInUse {
        /// The node id.
        node: u64,
        /// How long the open waited.
        waited: std::time::Duration,
    },
    /// The `PostgreSQL` store failed (connection, statement, or a row it could not decode); the
    /// operation was not applied. `source` is the client's error, or the decoding failure naming
    /// the value.
    #[error("schedule store (PostgreSQL) failed while {context}")]
    Database {
        /// What the engine was doing.
        context: &'static str,
        /// The client's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The store was written by a newer build whose schema this one does not know.
    #[error("schedule store has schema version {found}; this build supports up to {supported}")]
    SchemaTooNew {
        /// The version found in the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The file is not a schedule store this build may use: not `SQLite`; another application's
    /// database (its tables or `application_id`), which [`Schedules::open`](crate::Schedules::open)
    /// refuses unless [`Config::share_file`](crate::Config::share_file) opts in; or, for an
    /// [`Inspector`](crate::Inspector), no migration table or an unmigrated older schema.
    /// Nothing was written.
    #[error("{} is not a tickstep schedule store: {detail}", path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What was wrong with it.
        detail: String,
    },
    /// The store file is damaged: SQLite reads it as corrupt, or `quick_check` found a problem.
    /// It was refused before anything wrote to it; the message says how to recover it.
    #[error("schedule store {} is damaged ({detail}); {}", path.display(), recover_hint(path))]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What SQLite reported.
        detail: String,
    },
}

/// Recovery advice for [`Error::Damaged`], naming the file.
fn recover_hint(path: &std::path::Path) -> String {
    let p = path.display();
    format!(
        "nothing was written to it. Recover what it still holds with \
         `sqlite3 {p} .recover | sqlite3 {p}.recovered`, check the copy with \
         `tickstep schedules --db {p}.recovered list`, then move it in place of the damaged file"
    )
}

impl Error {
    /// The MOO error code a host should raise: `"E_INVARG"` (a bad argument, including a path
    /// that names no store), `"E_PERM"`, or `"E_QUOTA"` for a store failure (the nearest MOO has
    /// to "the server could not save this").
    ///
    /// ```
    /// use tickstep_schedules::{Error, ObjId};
    /// let e = Error::Perm { who: ObjId(5), value: "schedule 1".into(), rule: "owner or wizard only".into() };
    /// assert_eq!(e.code(), "E_PERM");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArg { .. }
            | Error::KeyTaken { .. }
            | Error::NotAStore { .. }
            | Error::Calendar(_) => "E_INVARG",
            Error::Perm { .. } => "E_PERM",
            Error::Store { .. }
            | Error::Database { .. }
            | Error::SchemaTooNew { .. }
            | Error::NodeInUse { .. }
            | Error::Damaged { .. } => "E_QUOTA",
        }
    }

    pub(crate) fn invalid(value: impl Display, rule: impl Into<String>) -> Self {
        Error::InvalidArg {
            value: value.to_string(),
            rule: rule.into(),
        }
    }

    pub(crate) fn perm(who: ObjId, value: impl Display, rule: impl Into<String>) -> Self {
        Error::Perm {
            who,
            value: value.to_string(),
            rule: rule.into(),
        }
    }

    pub(crate) fn store(context: &'static str) -> impl FnOnce(rusqlite::Error) -> Self {
        move |source| Error::Store { context, source }
    }
}
