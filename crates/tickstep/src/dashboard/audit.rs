//! Who did what on the dashboard (docs/serve.md §13.17): every action, single or bulk, done or
//! refused, is one `tracing` event (target `tickstep::dashboard::audit`) and one entry of a
//! bounded in-memory list that `/dashboard/audit` shows, newest first.
//!
//! Costs: one lock and one push per action; at most [`KEPT`] entries held.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::Mutex;

use maud::html;

use super::pages::{Chrome, Here, Text};
use super::when::When;

/// The most entries kept; the oldest goes first.
pub(crate) const KEPT: usize = 1_000;

/// One action as it was asked and how it ended.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Float Unix seconds.
    pub(crate) at: f64,
    /// The session's name, or the grant's for a script that gave the token.
    pub(crate) by: String,
    pub(crate) from: IpAddr,
    pub(crate) action: &'static str,
    pub(crate) id: u64,
    /// Part of a bulk action.
    pub(crate) bulk: bool,
    /// `None`: done; the refusal's sentence otherwise.
    pub(crate) refused: Option<String>,
}

/// The audit of one dashboard.
#[derive(Default)]
pub(crate) struct Audit {
    entries: Mutex<VecDeque<Entry>>,
}

impl Audit {
    /// Logs `entry` and keeps it.
    pub(crate) fn record(&self, entry: Entry) {
        tracing::info!(
            target: "tickstep::dashboard::audit",
            by = %entry.by,
            from = %entry.from,
            action = entry.action,
            schedule = entry.id,
            bulk = entry.bulk,
            refused = entry.refused.as_deref().unwrap_or(""),
            "dashboard action"
        );
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.len() >= KEPT {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    /// The kept entries, newest first.
    pub(crate) fn newest_first(&self) -> Vec<Entry> {
        let entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.iter().rev().cloned().collect()
    }
}

/// The audit page: each kept action, newest first.
pub(crate) fn page(entries: &[Entry], now: f64, chrome: &Chrome) -> String {
    let body = html! {
        p.count id="count" {
            (entries.len()) " actions since the dashboard started (the newest " (KEPT) " are kept)"
        }
        div.scroll {
            table id="audit" {
                tr {
                    th { "when" } th { "by" } th { "from" } th { "action" } th { "schedule" }
                    th { "outcome" }
                }
                @for e in entries {
                    tr {
                        td { (When { at: e.at, now }) }
                        td { (Text(&e.by)) }
                        td.mono { (e.from) }
                        td { (e.action) @if e.bulk { " " span.muted { "(bulk)" } } }
                        td { a href={ "/dashboard/schedules/" (e.id) } { "#" (e.id) } }
                        td {
                            @match &e.refused {
                                None => span.badge.ok { "done" },
                                Some(why) => span.badge.fault title=(Text(why)) { "refused" },
                            }
                        }
                    }
                }
            }
        }
    };
    chrome.page("Audit", Some(Here::Audit), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_keeps_the_newest_and_shows_them_first() {
        let audit = Audit::default();
        for id in 0..(KEPT as u64 + 5) {
            audit.record(Entry {
                at: 1.0,
                by: "alice".into(),
                from: [127, 0, 0, 1].into(),
                action: "pause",
                id,
                bulk: false,
                refused: None,
            });
        }
        let kept = audit.newest_first();
        assert_eq!(kept.len(), KEPT);
        assert_eq!(kept[0].id, KEPT as u64 + 4);
        assert_eq!(kept[KEPT - 1].id, 5);
    }
}
