//! What a host adds to the dashboard of its runtime (docs/serve.md §13.10): who reads, how a
//! principal is named, who is online, and how an action is done under its permission rules.
//! [`PlainHost`] is the host with nothing to add: a [`TokioDriver`](crate::TokioDriver) program
//! that only wants its schedules, commands and frames seen.

use std::net::IpAddr;

use crate::Runtime;
use crate::schedules::{Error, ObjId, ScheduleId};

use super::guard::Action;

/// An action to do, checked already (grant, origin, session or token): on which schedule, as
/// whom, from which address (docs/serve.md §13.8).
///
/// ```
/// use tickstep::dashboard::{Action, ActionRequest};
/// use tickstep::schedules::ScheduleId;
/// let request = ActionRequest {
///     id: ScheduleId::from_raw(3),
///     action: Action::Trigger,
///     acting_as: "#1".into(),
///     from: std::net::Ipv4Addr::LOCALHOST.into(),
/// };
/// assert_eq!(request.action.name(), "trigger");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionRequest {
    /// The schedule.
    pub id: ScheduleId,
    /// What to do.
    pub action: Action,
    /// The name of the principal it acts as (the grant's, `--actions-as`).
    pub acting_as: String,
    /// The address the request came from (a host may count it against that address's limits).
    pub from: IpAddr,
}

/// Why an action was refused, as the HTTP status says it (docs/serve.md §13.8).
///
/// ```
/// let refused = tickstep::dashboard::Refused::forbidden("not yours");
/// assert_eq!(refused.why, "not yours");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The kind of refusal: `404`, `403` or `400`.
    pub kind: RefusedKind,
    /// The sentence shown (the host's own reply).
    pub why: String,
}

/// The kinds of [`Refused`].
///
/// ```
/// assert_ne!(tickstep::dashboard::RefusedKind::NotFound, tickstep::dashboard::RefusedKind::Invalid);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedKind {
    /// No such schedule, or one the principal may not see (`404`).
    NotFound,
    /// A permission refusal (`403`).
    Forbidden,
    /// Any other refusal (`400`).
    Invalid,
}

impl Refused {
    /// A `403` refusal.
    ///
    /// ```
    /// # use tickstep::dashboard::{Refused, RefusedKind};
    /// assert_eq!(Refused::forbidden("no").kind, RefusedKind::Forbidden);
    /// ```
    pub fn forbidden(why: impl Into<String>) -> Refused {
        Refused {
            kind: RefusedKind::Forbidden,
            why: why.into(),
        }
    }

    /// A `404` refusal.
    ///
    /// ```
    /// # use tickstep::dashboard::{Refused, RefusedKind};
    /// assert_eq!(Refused::not_found("gone").kind, RefusedKind::NotFound);
    /// ```
    pub fn not_found(why: impl Into<String>) -> Refused {
        Refused {
            kind: RefusedKind::NotFound,
            why: why.into(),
        }
    }

    /// The refusal a schedules engine error stands for: `E_PERM` is `403`, anything else `400`.
    ///
    /// ```
    /// # use tickstep::dashboard::{Refused, RefusedKind};
    /// let e = tickstep::schedules::Error::Perm {
    ///     who: tickstep::schedules::ObjId(2),
    ///     value: "#3".into(),
    ///     rule: "not the owner".into(),
    /// };
    /// assert_eq!(Refused::from_error(&e).kind, RefusedKind::Forbidden);
    /// ```
    pub fn from_error(error: &Error) -> Refused {
        Refused {
            kind: if error.code() == "E_PERM" {
                RefusedKind::Forbidden
            } else {
                RefusedKind::Invalid
            },
            why: crate::kernel::ErrorChain(error).to_string(),
        }
    }
}

/// What a host adds to its runtime's dashboard. Every method runs on the runtime's thread,
/// between frames.
///
/// ```
/// use tickstep::dashboard::DashboardHost;
/// use tickstep::schedules::ObjId;
/// struct Mud;
/// impl DashboardHost for Mud {
///     fn reader(&self) -> ObjId { ObjId(1) }
///     fn name_of(&self, who: ObjId) -> String { if who == ObjId(1) { "wizard".into() } else { who.to_string() } }
///     fn online(&self) -> Option<usize> { Some(0) }
/// }
/// assert_eq!(Mud.name_of(ObjId(1)), "wizard");
/// ```
pub trait DashboardHost: 'static {
    /// The principal whose view the pages show (every owner's schedules: a wizard).
    fn reader(&self) -> ObjId;

    /// How a principal is shown (`#3` unless the host has names).
    fn name_of(&self, who: ObjId) -> String {
        who.to_string()
    }

    /// The principal called `name` (`--actions-as`): `#N` unless the host has names.
    fn principal_named(&self, name: &str) -> Option<ObjId> {
        name.strip_prefix('#')?.parse().ok().map(ObjId)
    }

    /// Users online, for the live view's `online` field; `None` (the default) leaves it out.
    fn online(&self) -> Option<usize> {
        None
    }

    /// Does an action as `request.acting_as` under the host's permission rules. The default
    /// runs the schedules engine's own operation as that principal ([`act_as`]).
    ///
    /// # Errors
    ///
    /// [`Refused`] with the sentence to show.
    fn act(&self, rt: &Runtime, request: &ActionRequest) -> Result<(), Refused> {
        let who = self.principal_named(&request.acting_as).ok_or_else(|| {
            Refused::forbidden(format!(
                "actions act as {:?}, who is no principal here (docs/serve.md §13.8)",
                request.acting_as
            ))
        })?;
        act_as(rt, who, request.id, &request.action)
    }
}

/// Does `action` on schedule `id` as principal `who` through the schedules engine: its
/// permission rules, its durable stop, pause, resume and trigger (docs/schedules.md §9.4–§9.6).
/// A schedule `who` cannot see is `404`.
///
/// # Errors
///
/// [`Refused`]: `404` for a schedule not there, `403` for `E_PERM`, `400` otherwise.
///
/// ```
/// use tickstep::dashboard::{Action, act_as};
/// use tickstep::schedules::{ObjId, Options, Value};
/// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
/// rt.verb("ring", |_| Ok(Value::Int(0)));
/// let mut txn = rt.schedules().begin(ObjId(1));
/// let id = txn.schedule_every(ObjId(1), "ring", 60.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
/// act_as(&rt, ObjId(1), id, &Action::Pause { note: "lunch".into() }).unwrap();
/// assert!(rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap().pause.is_some());
/// act_as(&rt, ObjId(1), id, &Action::Stop).unwrap();
/// assert!(act_as(&rt, ObjId(1), id, &Action::Trigger).is_err());
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
pub fn act_as(rt: &Runtime, who: ObjId, id: ScheduleId, action: &Action) -> Result<(), Refused> {
    let engine = rt.schedules();
    let mut txn = engine.begin(who);
    if txn.schedule_info(id).is_err() {
        return Err(Refused::not_found(format!(
            "there is no schedule #{} (docs/serve.md §13.4)",
            id.get()
        )));
    }
    let done = match action {
        Action::Stop => txn.schedule_stop(id).and_then(|_| txn.commit()).map(drop),
        Action::Pause { note } => {
            drop(txn);
            engine.pause(who, id, note).map(drop)
        }
        Action::Resume => {
            drop(txn);
            engine.resume(who, id).map(drop)
        }
        Action::Trigger => {
            drop(txn);
            engine.trigger_now(who, id).map(drop)
        }
    };
    done.map_err(|e| Refused::from_error(&e))
}

/// The host with nothing to add: reads as `reader`, names principals `#N`, and acts through
/// [`act_as`] as the principal the grant names (`#N`).
///
/// ```
/// use tickstep::dashboard::{DashboardHost, PlainHost};
/// use tickstep::schedules::ObjId;
/// let host = PlainHost { reader: ObjId(1) };
/// assert_eq!(host.principal_named("#7"), Some(ObjId(7)));
/// assert_eq!(host.principal_named("alice"), None);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct PlainHost {
    /// The principal whose view the pages show.
    pub reader: ObjId,
}

impl DashboardHost for PlainHost {
    fn reader(&self) -> ObjId {
        self.reader
    }
}
