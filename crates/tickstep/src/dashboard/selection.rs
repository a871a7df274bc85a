//! What a bulk action acts on (docs/serve.md §13.16): every schedule the list's filter matches,
//! the first [`MAX_BULK`] by id, if they are still as many as were confirmed; the confirm page
//! that names the count and the filter, and the page of each schedule's outcome.
//!
//! Costs: a runtime's matched rows are already read; a store reads the first [`MAX_BULK`] by
//! id and the count as one page in the store (`Inspector::page`).

use axum::http::StatusCode;
use maud::html;

use super::guard::Refusal;
use super::pages::{Chrome, Row, Text};
use super::query::Filter;

/// The most schedules one bulk action acts on: each is its own durable action (a store's commit,
/// its sync to disk), so the bound keeps a request to seconds (docs/serve.md §13.14, §13.16).
pub(crate) const MAX_BULK: usize = 200;
/// How many of the matched schedules the confirm page names.
const NAMED: usize = 10;

/// One schedule's outcome in a bulk action.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) id: u64,
    pub(crate) verb: String,
    /// `None`: done; the refusal's sentence otherwise.
    pub(crate) refused: Option<String>,
}

/// The filter in words, as the confirm page names it: `kind=cron state=active`.
fn described(filter: &Filter) -> String {
    let mut words = Vec::new();
    for (key, value) in [
        ("q", &filter.search),
        ("owner", &filter.owner),
        ("verb", &filter.verb),
        ("namespace", &filter.namespace),
    ] {
        if let Some(v) = value {
            words.push(format!("{key}={v}"));
        }
    }
    if let Some(kind) = filter.kind {
        words.push(format!("kind={}", kind.as_str()));
    }
    if let Some(state) = filter.state {
        words.push(format!("state={}", state.as_str()));
    }
    words.join(" ")
}

/// "matching kind=cron state=active", or "(every live schedule)".
fn matching(filter: &Filter) -> String {
    let words = described(filter);
    if words.is_empty() {
        "(every live schedule)".to_owned()
    } else {
        format!("matching {words}")
    }
}

/// The confirm page of `action` on the `count` schedules the filter matches, of which `rows` are
/// the first (at least [`MAX_BULK`] of them, by id).
pub(crate) fn confirm(
    (rows, count): (&[Row], usize),
    filter: &Filter,
    action: &str,
    chrome: &Chrome,
) -> String {
    let acted = count.min(MAX_BULK);
    let csrf = chrome.signed.as_ref().map_or("", |s| s.csrf.as_str());
    let query = filter.query(1);
    let body = html! {
        form.confirm method="post" action={ "/dashboard/bulk/" (action) (query) } {
            p id="bulk-what" { b { (action) } " " (acted) " schedules " (Text(&matching(filter))) }
            @if count > MAX_BULK {
                p id="bulk-more" {
                    (count) " match; one request acts on at most " (MAX_BULK)
                    ", the first by id. Confirm again for the rest."
                }
            }
            @if rows.is_empty() { p { "No schedule matches: there is nothing to do." } }
            @else {
                p.muted {
                    @for row in rows.iter().take(NAMED) { "#" (row.id) " " (Text(&row.verb)) "; " }
                    @if count > NAMED { "and " (acted - NAMED.min(acted)) " more." }
                }
            }
            @if action == "stop" { p.muted { "Stopped schedules are gone: they cannot be resumed." } }
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="count" value=(count);
            @if action == "pause" {
                label { "note" input name="note" maxlength="200" placeholder="why, for the next person"; }
            }
            div.actions {
                @if !rows.is_empty() {
                    button id="bulk-confirm" class=[(action == "stop").then_some("danger")] {
                        "Confirm " (action) " of " (acted)
                    }
                }
                a href={ "/dashboard" (query) } { "Cancel" }
            }
        }
    };
    chrome.page(&format!("{action} {acted} schedules?"), None, &body)
}

/// The first [`MAX_BULK`] of `rows` (the first of the `count` the filter matches, by id), if the
/// filter still matches `expected`; otherwise the refusal (`409`), and nothing is done.
pub(crate) fn selection(
    (rows, count): (&[Row], usize),
    expected: usize,
) -> Result<&[Row], Refusal> {
    if count != expected {
        return Err((
            StatusCode::CONFLICT,
            format!(
                "the filter now matches {count} schedules, not the {expected} confirmed: nothing \
                 was done; confirm again (docs/serve.md §13.16)\n"
            ),
        ));
    }
    Ok(&rows[..rows.len().min(MAX_BULK)])
}

impl Outcome {
    /// How the action on `row`'s schedule ended.
    pub(crate) fn of(row: &Row, result: Result<(), Refusal>) -> Outcome {
        Outcome {
            id: row.id,
            verb: row.verb.clone(),
            refused: result.err().map(|(_, why)| why.trim_end().to_owned()),
        }
    }
}

/// The result page: each schedule acted on, done or refused.
pub(crate) fn result_page(
    outcomes: &[Outcome],
    filter: &Filter,
    action: &str,
    chrome: &Chrome,
) -> String {
    let refused = outcomes.iter().filter(|o| o.refused.is_some()).count();
    let body = html! {
        p.count id="bulk-result" {
            (action) ": " (outcomes.len() - refused) " done, " (refused) " refused, of the "
            (outcomes.len()) " schedules " (Text(&matching(filter)))
        }
        div.scroll {
            table id="outcomes" {
                tr { th { "schedule" } th { "verb" } th { "outcome" } }
                @for o in outcomes {
                    tr {
                        td { a href={ "/dashboard/schedules/" (o.id) } { "#" (o.id) } }
                        td { (Text(&o.verb)) }
                        td {
                            @match &o.refused {
                                None => span.badge.ok { "done" },
                                Some(why) => { span.badge.fault { "refused" } " " (Text(why)) },
                            }
                        }
                    }
                }
            }
        }
        p { a href={ "/dashboard" (filter.query(1)) } { "Back to the list" } }
    };
    chrome.page(&format!("{action}: the outcome"), None, &body)
}
