//! Answering views on the runtime's thread (docs/serve.md §13.10): one task reads the engine
//! between frames, a view at a time, since a runtime is not `Send`; a bulk action gives the thread
//! back between schedules (docs/serve.md §13.16).

use std::net::IpAddr;
use std::rc::Weak;

use axum::http::StatusCode;
use tokio::sync::mpsc;

use super::asks::{Answer, Ask, Reply, View, done, missing};
use super::detail;
use super::guard::Action;
use super::host::{ActionRequest, DashboardHost, RefusedKind};
use super::on_store::read_cluster;
use super::overview;
use super::pages::{self, Chrome, Row};
use super::query::Filter;
use super::rows;
use super::selection::{self, Outcome};
use crate::schedules::ScheduleId;
use crate::{Runtime, RuntimeHandle};

/// Answers views on the runtime's thread, one at a time, between frames.
pub(crate) async fn render_loop(
    rt: Weak<Runtime>,
    host: Weak<dyn DashboardHost>,
    handle: RuntimeHandle,
    mut inbox: mpsc::Receiver<Ask>,
) {
    let weak = (rt, host);
    while let Some((view, chrome, reply)) = inbox.recv().await {
        let (Some(rt), Some(host)) = (weak.0.upgrade(), weak.1.upgrade()) else {
            return;
        };
        let answer = match view {
            View::List(filter) => Ok(Reply::Page(pages::list(
                rows::runtime_rows(&rt, &*host),
                &filter,
                rt.schedules().now_unix_seconds(),
                &chrome,
            ))),
            View::Detail(id) => rows::runtime_detail(&rt, &*host, id)
                .map(|d| Reply::Page(detail::page(&d, rt.schedules().now_unix_seconds(), &chrome)))
                .ok_or_else(|| missing(id)),
            View::Confirm(id, action) => rows::runtime_detail(&rt, &*host, id)
                .map(|d| Reply::Page(detail::confirm(&d, action, &chrome)))
                .ok_or_else(|| missing(id)),
            View::Commands => Ok(Reply::Page(pages::commands(
                &rt.commands().running(),
                &chrome,
            ))),
            View::Overview => Ok(Reply::Page(overview::page(None, &chrome))),
            View::Act(id, action, from) => {
                let result = runtime_act(&rt, &*host, &chrome, id, &action, from);
                // A resumed or triggered schedule's deadline is armed again: wake an idle driver.
                let _ = handle.wake();
                result.map(|()| done(id, &action))
            }
            View::Bulk(filter, action) => {
                let rows = matched(rows::runtime_rows(&rt, &*host), &filter);
                Ok(Reply::Page(selection::confirm(
                    (&rows, rows.len()),
                    &filter,
                    action,
                    &chrome,
                )))
            }
            View::BulkAct(filter, action, expected, from) => {
                let rows = matched(rows::runtime_rows(&rt, &*host), &filter);
                drop((rt, host));
                bulk_on_runtime(&weak, &chrome, &handle, &rows, expected, &action, from).await
            }
            // Answered by `read_cluster` off this thread; never sent here.
            View::Cluster => read_cluster(None, &chrome),
        };
        let _ = reply.send(answer);
    }
}

/// A bulk action on a runtime: one schedule's action per turn of the runtime's thread, so frames
/// run between them rather than waiting for the whole selection (docs/serve.md §13.16). A
/// runtime or host gone meanwhile ends it with what was done.
async fn bulk_on_runtime(
    (rt, host): &(Weak<Runtime>, Weak<dyn DashboardHost>),
    chrome: &Chrome,
    handle: &RuntimeHandle,
    rows: &[Row],
    expected: usize,
    action: &Action,
    from: IpAddr,
) -> Answer {
    let chosen = selection::selection((rows, rows.len()), expected)?;
    let mut outcomes = Vec::with_capacity(chosen.len());
    for row in chosen {
        let (Some(rt), Some(host)) = (rt.upgrade(), host.upgrade()) else {
            break;
        };
        outcomes.push(Outcome::of(
            row,
            runtime_act(&rt, &*host, chrome, row.id, action, from),
        ));
        drop((rt, host));
        let _ = handle.wake();
        tokio::task::yield_now().await;
    }
    Ok(Reply::Bulk(outcomes))
}

/// Does `action` on schedule `id` through the host, as the grant's principal.
fn runtime_act(
    rt: &Runtime,
    host: &dyn DashboardHost,
    chrome: &Chrome,
    id: u64,
    action: &Action,
    from: IpAddr,
) -> Result<(), (StatusCode, String)> {
    let request = ActionRequest {
        id: ScheduleId::from_raw(id),
        action: action.clone(),
        acting_as: chrome.acting_as.clone().unwrap_or_default(),
        from,
    };
    host.act(rt, &request).map_err(|r| {
        let status = match r.kind {
            RefusedKind::NotFound => StatusCode::NOT_FOUND,
            RefusedKind::Forbidden => StatusCode::FORBIDDEN,
            RefusedKind::Invalid => StatusCode::BAD_REQUEST,
        };
        (
            status,
            format!("{} (acting as {})\n", r.why, request.acting_as),
        )
    })
}

/// The rows `filter` matches, by id.
fn matched(mut rows: Vec<Row>, filter: &Filter) -> Vec<Row> {
    rows.retain(|row| pages::keep(row, filter));
    rows.sort_unstable_by_key(|row| row.id);
    rows
}
