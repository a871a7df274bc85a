//! What a dashboard request asks for ([`View`]) and what it gets ([`Answer`]), whoever answers
//! it: the runtime's thread (`on_runtime.rs`) or a blocking read of a store alone
//! (`on_store.rs`); the handlers in `routes.rs` hand views over and turn answers into responses
//! (docs/serve.md §13.10).

use std::net::IpAddr;
use std::sync::Arc;

use axum::http::StatusCode;
use tokio::sync::oneshot;

use super::guard::Action;
use super::pages::Chrome;
use super::query::Filter;
use super::selection::Outcome;

/// What a request asks for.
#[derive(Debug)]
pub(crate) enum View {
    List(Filter),
    Detail(u64),
    /// The confirm page of an action on a schedule (docs/serve.md §13.8).
    Confirm(u64, &'static str),
    /// An action, checked already (grant, origin, session or token), from the address that asked.
    Act(u64, Action, IpAddr),
    /// The confirm page of an action on every schedule the filter matches (docs/serve.md §13.16).
    Bulk(Filter, &'static str),
    /// That action, checked already, if the filter still matches as many as were confirmed.
    BulkAct(Filter, Action, usize, IpAddr),
    Commands,
    Cluster,
    /// The last hour and the frame budget (docs/serve.md §13.18).
    Overview,
}

/// A view's success: an HTML page, or an action done and the path to go to (`303`).
#[derive(Debug)]
pub(crate) enum Reply {
    Page(String),
    GoTo(String),
    /// A bulk action's outcome per schedule, for the handler to record and show.
    Bulk(Vec<Outcome>),
}

/// A reply, or a status and the sentence that says why not.
pub(crate) type Answer = Result<Reply, (StatusCode, String)>;

/// A view, the chrome of the request that asked, and where its answer goes (to the runtime's
/// thread).
pub(crate) type Ask = (View, Arc<Chrome>, oneshot::Sender<Answer>);

/// The refusal of a schedule that is not there.
pub(crate) fn missing(id: u64) -> (StatusCode, String) {
    (
        StatusCode::NOT_FOUND,
        format!("no live schedule #{id} (docs/serve.md §13.4)\n"),
    )
}

/// Where an action goes once done: the schedule's page, or the list after a stop.
pub(crate) fn done(id: u64, action: &Action) -> Reply {
    Reply::GoTo(match action {
        Action::Stop => "/dashboard".to_owned(),
        _ => format!("/dashboard/schedules/{id}"),
    })
}

/// Now, on the system clock, in Unix nanoseconds.
pub(crate) fn now_unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
