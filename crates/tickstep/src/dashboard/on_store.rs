//! Answering views of a store alone, with no engine running (docs/serve.md §13.10): read through
//! an `Inspector` on a blocking thread (the `PostgreSQL` client blocks); actions are the store
//! operator's (docs/serve.md §13.13). The cluster page is read here for every dashboard
//! (docs/serve.md §13.12).

use std::path::{Path as FsPath, PathBuf};

use axum::http::StatusCode;

use super::asks::{Answer, Reply, View, done, missing, now_unix_nanos};
use super::cluster_history;
use super::detail;
use super::guard::Action;
use super::names::Names;
use super::overview;
use super::pages::{self, Chrome};
use super::rows;
use super::selection::{self, Outcome};
use crate::schedules::{Inspector, Namespace, ScheduleId};

/// The cluster page of the `PostgreSQL` store at `location` (docs/serve.md §13.12).
pub(crate) fn read_cluster(location: Option<&PathBuf>, chrome: &Chrome) -> Answer {
    let none = || {
        Err((
            StatusCode::NOT_FOUND,
            "no cluster here: only a PostgreSQL store is shared by nodes (docs/serve.md §13.12)\n"
                .to_owned(),
        ))
    };
    let Some(location) = location else {
        return none();
    };
    let inspector = rows::open(location, None).map_err(unavailable)?;
    match inspector.cluster() {
        // Relative to this host's clock; live or expired is the database's word.
        Ok(Some(cluster)) => {
            let takeovers = cluster_history::Takeovers::read(&inspector)
                .map_err(|e| unavailable(rows::failed(location, &e)))?;
            let history = cluster_history::read_hour(&inspector)
                .map_err(|e| unavailable(rows::failed(location, &e)))?;
            let now = now_unix_nanos() as f64 / 1e9;
            let over_time = cluster_history::render(&cluster, &history, &takeovers, now);
            Ok(Reply::Page(pages::cluster(
                &cluster, &over_time, now, chrome,
            )))
        }
        Ok(None) => none(),
        Err(e) => Err(unavailable(rows::failed(location, &e))),
    }
}

#[allow(clippy::needless_pass_by_value)] // used as map_err(unavailable)
fn unavailable(why: String) -> (StatusCode, String) {
    // The store could not be read: the dashboard is up, its source is not.
    (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n"))
}

/// Answers a view of a store alone, on a blocking thread.
pub(crate) fn store_answer(
    location: &FsPath,
    namespace: Option<Namespace>,
    names: &Names,
    view: View,
    chrome: &Chrome,
) -> Answer {
    match view {
        View::List(filter) => {
            let page =
                rows::store_page(location, namespace, &filter, names).map_err(unavailable)?;
            let listed = pages::Listed {
                shown: &page.rows,
                matched: page.matched,
                total: page.total,
                page: page.page,
            };
            let now = now_unix_nanos() as f64 / 1e9;
            Ok(Reply::Page(pages::list_page(&listed, &filter, now, chrome)))
        }
        View::Detail(id) => rows::store_detail(location, namespace, id, now_unix_nanos(), names)
            .map_err(unavailable)?
            .map(|d| Reply::Page(detail::page(&d, now_unix_nanos() as f64 / 1e9, chrome)))
            .ok_or_else(|| missing(id)),
        View::Confirm(id, action) => {
            rows::store_detail(location, namespace, id, now_unix_nanos(), names)
                .map_err(unavailable)?
                .map(|d| Reply::Page(detail::confirm(&d, action, chrome)))
                .ok_or_else(|| missing(id))
        }
        View::Commands => Err((
            StatusCode::NOT_FOUND,
            "a store alone runs no commands: the commands view is a running host's \
             (docs/serve.md §13.11)\n"
                .to_owned(),
        )),
        View::Act(id, action, _) => {
            store_act(location, namespace, id, &action, chrome).map(|()| done(id, &action))
        }
        View::Bulk(filter, action) => {
            let (rows, count) =
                rows::store_matches(location, namespace, &filter, names, selection::MAX_BULK)
                    .map_err(unavailable)?;
            Ok(Reply::Page(selection::confirm(
                (&rows, count),
                &filter,
                action,
                chrome,
            )))
        }
        View::BulkAct(filter, action, expected, _) => {
            let (rows, count) =
                rows::store_matches(location, namespace, &filter, names, selection::MAX_BULK)
                    .map_err(unavailable)?;
            let chosen = selection::selection((&rows, count), expected)?;
            Ok(Reply::Bulk(
                chosen
                    .iter()
                    .map(|row| {
                        Outcome::of(row, store_act(location, namespace, row.id, &action, chrome))
                    })
                    .collect(),
            ))
        }
        View::Overview => {
            let minutes = overview::store_minutes(
                location,
                namespace,
                now_unix_nanos(),
                crate::schedules::MAX_PAGE_SIZE,
            )
            .map_err(unavailable)?;
            Ok(Reply::Page(overview::page(Some(&minutes), chrome)))
        }
        View::Cluster => read_cluster(Some(&location.to_path_buf()), chrome),
    }
}

/// An action on a store alone, as the store's operator does it (`tickstep schedules pause` …):
/// the store's own durable operator paths (docs/schedules.md §9.12, §11.7).
fn store_act(
    location: &FsPath,
    namespace: Option<Namespace>,
    id: u64,
    action: &Action,
    chrome: &Chrome,
) -> Result<(), (StatusCode, String)> {
    let sid = ScheduleId::from_raw(id);
    // Another namespace's schedule is not there for a dashboard of one namespace.
    let held = rows::open(location, namespace)
        .map_err(unavailable)?
        .get(sid)
        .map_err(|e| unavailable(rows::failed(location, &e)))?;
    if held.is_none() {
        return Err(missing(id));
    }
    let name = chrome.acting_as.as_deref().unwrap_or("operator");
    let result = match action {
        Action::Stop => Inspector::stop(location, sid),
        // The operator's pause has no principal: the note says who, as the handler wrote it
        // (docs/serve.md §13.13, §13.17).
        Action::Pause { note } => Inspector::pause(location, sid, note),
        Action::Resume => Inspector::resume(location, sid),
        Action::Trigger => Inspector::trigger(location, sid),
    };
    match result {
        Ok(_) => Ok(()),
        Err(e) => Err((
            StatusCode::BAD_REQUEST,
            format!("{} (acting as {name})\n", rows::failed(location, &e)),
        )),
    }
}
