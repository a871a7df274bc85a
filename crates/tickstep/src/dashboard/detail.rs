//! A schedule's page (docs/serve.md §13.2, §13.8): what it is and when it runs next at the top,
//! its fields grouped as a person reads them (cadence, policies, counters, the last fault, the
//! pause), a timeline of its recent firings with how long each took and how late it started, its
//! next runs, its actions each behind a confirm step, and every field `schedule_info` reports.
//! One template whatever the host: a runtime's and a store's schedules come here as [`Detail`]s.

use maud::{Markup, html};

use super::guard::ACTIONS;
use super::pages::{Chrome, Row, Text, badge, outcome};
use super::when::{When, span};

/// One schedule's page: its list row (what the summary shows), every `schedule_info` field as
/// text, its recent firings, newest first, and its next fire times.
pub(crate) struct Detail {
    pub(crate) row: Row,
    pub(crate) fields: Vec<(String, String)>,
    pub(crate) firings: Vec<Firing>,
    pub(crate) next_runs: Vec<f64>,
}

/// One settled firing: float Unix seconds, and its fault as text.
pub(crate) struct Firing {
    pub(crate) started: f64,
    pub(crate) ended: f64,
    /// The cadence point it served.
    pub(crate) nominal: f64,
    /// Start minus the point served, never below 0 (docs/schedules.md §9.16).
    pub(crate) lateness: f64,
    pub(crate) fault: Option<String>,
}

impl From<&crate::schedules::FiringRecord> for Firing {
    fn from(r: &crate::schedules::FiringRecord) -> Self {
        Firing {
            started: r.started,
            ended: r.ended,
            nominal: r.nominal,
            lateness: r.lateness(),
            fault: r.fault.as_ref().map(|f| {
                format!(
                    "{}: {}",
                    f.kind.as_str(),
                    super::stored::value_json(&f.value)
                )
            }),
        }
    }
}

/// How a field's text is shown.
#[derive(Clone, Copy)]
enum Shown {
    /// As given (a JSON string's quotes dropped).
    Plain,
    /// Float Unix seconds: relative, the date on hover; 0 is none.
    Time,
    /// Seconds: a span in words; 0 is none.
    Span,
    /// Nanoseconds: milliseconds.
    Nanos,
    /// Seconds to the millisecond.
    Seconds,
    /// A limit: 0 is none.
    Limit,
    /// Counts by reason, a MOO map or a JSON object of names to whole numbers: the nonzero ones
    /// in words, or none.
    Reasons,
}

/// A field on the page: its label, its `schedule_info` name and how it is shown.
type Field = (&'static str, &'static str, Shown);

/// The groups of fields. A field the host does not report is left out.
const GROUPS: [(&str, &[Field]); 4] = [
    (
        "Cadence",
        &[
            ("kind", "kind", Shown::Plain),
            ("interval", "interval", Shown::Span),
            ("cron", "cron", Shown::Plain),
            ("zone", "zone", Shown::Plain),
            ("DST gap", "dst_gap", Shown::Plain),
            ("DST fold", "dst_fold", Shown::Plain),
            ("jitter", "jitter", Shown::Span),
            ("next run", "next_run", Shown::Time),
            ("last run", "last_run", Shown::Time),
            ("created", "created_at", Shown::Time),
            ("raised to one tick", "interval_clamped", Shown::Plain),
        ],
    ),
    (
        "Policies",
        &[
            ("catch-up", "catchup", Shown::Plain),
            ("catch-up window", "catchup_window", Shown::Span),
            ("overlap", "overlap", Shown::Plain),
            ("max faults", "max_faults", Shown::Limit),
            ("on max faults", "on_max_faults", Shown::Plain),
            ("run limit", "run_limit", Shown::Limit),
            ("runs left", "remaining_runs", Shown::Limit),
            ("time limit", "seconds", Shown::Span),
            ("tick limit", "ticks", Shown::Limit),
            ("adaptive", "adaptive", Shown::Plain),
        ],
    ),
    (
        "Counters",
        &[
            ("runs", "run_count", Shown::Plain),
            ("faults", "fault_count", Shown::Plain),
            ("faults in a row", "consecutive_faults", Shown::Plain),
            ("missed", "missed_count", Shown::Plain),
            ("overlapped", "overlap_count", Shown::Plain),
            ("missed while paused", "paused_missed", Shown::Plain),
            ("missed, by reason", "missed_by", Shown::Reasons),
            ("last missed", "last_missed_at", Shown::Time),
            ("last missed because", "last_missed_reason", Shown::Plain),
            ("late, p50", "lateness_p50", Shown::Seconds),
            ("late, p99", "lateness_p99", Shown::Seconds),
            ("firings measured", "lateness_samples", Shown::Plain),
            ("last took", "last_duration_ns", Shown::Nanos),
            ("mean took", "mean_duration_ns", Shown::Nanos),
            ("p99 took", "p99_duration_ns", Shown::Nanos),
        ],
    ),
    (
        "Pause",
        &[
            ("paused", "paused", Shown::Plain),
            ("by", "paused_by", Shown::Plain),
            ("at", "paused_at", Shown::Time),
            ("note", "pause_note", Shown::Plain),
        ],
    ),
];

impl Detail {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `text` as a person reads it, shown as `how`.
fn shown(text: &str, how: Shown, now: f64) -> Markup {
    let number = text.parse::<f64>().ok();
    html! {
        @match (how, number) {
            (Shown::Time, Some(at)) => (When { at, now }),
            (Shown::Span, Some(s)) if s == 0.0 => span.muted { "none" },
            (Shown::Span, Some(s)) => (span(s)),
            (Shown::Nanos, Some(ns)) => (millis(ns / 1e9)),
            (Shown::Seconds, Some(s)) => (seconds(s)),
            (Shown::Limit, Some(n)) if n == 0.0 => span.muted { "none" },
            (Shown::Reasons, _) => @match by_reason(text) {
                Some(counts) if counts.is_empty() => span.muted { "none" },
                Some(counts) => (Text(&counts.join(", "))),
                None => (Text(text)),
            },
            _ => (Text(unquoted(text))),
        }
    }
}

/// The nonzero counts of a map of reasons to counts, as `catch-up 3` (docs/schedules.md §9.15),
/// from a runtime's MOO map (`["catchup" -> 3, …]`) or a store's JSON (`{"catchup":3,…}`);
/// `None` when `text` is neither.
fn by_reason(text: &str) -> Option<Vec<String>> {
    let inner = text
        .trim()
        .strip_prefix(['[', '{'])?
        .strip_suffix([']', '}'])?;
    let mut counts = Vec::new();
    for pair in inner.split(',').filter(|p| !p.trim().is_empty()) {
        let (name, count) = pair.split_once("->").or_else(|| pair.split_once(':'))?;
        let name = name.trim().strip_prefix('"')?.strip_suffix('"')?;
        let count: u64 = count.trim().parse().ok()?;
        if count > 0 {
            let words = match name {
                "catchup" => "catch-up",
                "catchup_window" => "catch-up window",
                "dst_gap" => "DST gap",
                other => other,
            };
            counts.push(format!("{words} {count}"));
        }
    }
    Some(counts)
}

/// A JSON or MOO string literal without its quotes, when it holds none inside.
fn unquoted(text: &str) -> &str {
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .filter(|t| !t.contains('"') && !t.contains('\\'))
        .unwrap_or(text)
}

/// A schedule's page.
pub(crate) fn page(detail: &Detail, now: f64, chrome: &Chrome) -> String {
    let row = &detail.row;
    let id = row.id;
    let fault = detail.field("last_fault").filter(|f| *f != "0");
    let body = html! {
        p.summary {
            (badge(row)) " "
            span.mono { (Text(&row.cadence())) } " · "
            (Text(&row.verb)) " " span.mono { (Text(&row.args)) }
            " · owner " b id="owner" { (Text(&row.owner)) }
            @if let Some(key) = &row.key { " · name " b.mono { (Text(key)) } }
        }
        p.summary {
            "next run " (When { at: row.next_run, now }) " · last outcome " (outcome(row, now))
        }
        div.grid {
            @for (group, fields) in GROUPS {
                @if group != "Pause" || row.pause_note.is_some() {
                    section.card {
                        h2 { (group) }
                        dl.fields {
                            @for (label, name, how) in fields {
                                @if let Some(value) = detail.field(name).filter(|v| !v.is_empty() && *v != "\"\"") {
                                    dt { (label) } dd { (shown(value, *how, now)) }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(fault) = fault {
                section.card {
                    h2 { "Last fault" }
                    p.mono id="last-fault" { (Text(fault)) }
                }
            }
        }
        h2 { "Recent firings" }
        @if detail.firings.is_empty() {
            p.muted { "none recorded yet" }
        } @else {
            div.scroll {
                table id="firings" {
                    tr {
                        th { "started" } th { "point served" } th.num { "late" } th.num { "took" }
                        th { "outcome" }
                    }
                    @for f in &detail.firings {
                        tr {
                            td { (When { at: f.started, now }) }
                            td { (When { at: f.nominal, now }) }
                            // The engine's one definition of lateness (docs/schedules.md §9.16).
                            td.num { (seconds(f.lateness)) }
                            td.num { (millis(f.ended - f.started)) }
                            td {
                                @if let Some(fault) = &f.fault {
                                    span.badge.fault title=(Text(fault)) { "fault" }
                                } @else {
                                    span.badge.ok { "ok" }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Next runs" }
        @if detail.next_runs.is_empty() {
            p.muted { "none: " (row.status.as_str()) }
        } @else {
            ol id="next-runs" {
                @for at in &detail.next_runs { li { (When { at: *at, now }) } }
            }
        }
        @if let Some(signed) = &chrome.signed {
            h2 { "Actions" }
            div.actions {
                @for action in ACTIONS {
                    a.button id={ "open-" (action) } href={ "/dashboard/schedules/" (id) "/" (action) }
                        data-confirm={ "confirm-" (action) } { (action) "…" }
                    dialog id={ "confirm-" (action) } aria-label={ (action) " schedule #" (id) } {
                        (confirm_form(row, action, true, &signed.csrf))
                    }
                }
            }
        } @else if chrome.acting_as.is_some() {
            h2 { "Actions" }
            p { a href="/dashboard/login" { "Sign in" } " to pause, resume, trigger or stop it." }
        }
        details {
            summary { "Every field, as schedule_info reports it" }
            table id="info" {
                @for (key, value) in &detail.fields {
                    tr { th { (Text(key)) } td { (Text(value)) } }
                }
            }
        }
    };
    chrome.page(&format!("Schedule #{id}"), None, &body)
}

/// A duration of `s` seconds in milliseconds: `0.274 ms`, `1250.0 ms`.
fn millis(s: f64) -> String {
    let ms = s * 1e3;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// Seconds to the millisecond, signed: `+0.012 s`.
fn seconds(s: f64) -> String {
    format!("{s:+.3} s")
}

/// The form that does `action` on `row`'s schedule once confirmed: what it will do, the
/// session's CSRF token (docs/serve.md §13.8), a note for a pause, and the buttons. In a
/// `<dialog>`, Cancel closes it; on the confirm page it goes back to the schedule.
fn confirm_form(row: &Row, action: &str, in_dialog: bool, csrf: &str) -> Markup {
    let id = row.id;
    html! {
        form.confirm method="post" action={ "/dashboard/schedules/" (id) "/" (action) } {
            p { b { (action) } " schedule #" (id) " — " (Text(&row.verb)) " (" (Text(&row.cadence())) ")?" }
            @if action == "stop" { p.muted { "A stopped schedule is gone: it cannot be resumed." } }
            input type="hidden" name="csrf" value=(csrf);
            @if action == "pause" {
                label { "note" input name="note" maxlength="200" placeholder="why, for the next person"; }
            }
            div.actions {
                button id=(action) class=[(action == "stop").then_some("danger")] { "Confirm " (action) }
                @if in_dialog {
                    button.plain type="submit" formmethod="dialog" formnovalidate { "Cancel" }
                } @else {
                    a href={ "/dashboard/schedules/" (id) } { "Cancel" }
                }
            }
        }
    }
}

/// The confirm page of `action` on a schedule, for a browser without the script (docs/serve.md
/// §13.8): the same form its page's dialog holds.
pub(crate) fn confirm(detail: &Detail, action: &str, chrome: &Chrome) -> String {
    let csrf = chrome.signed.as_ref().map_or("", |s| s.csrf.as_str());
    let body = confirm_form(&detail.row, action, false, csrf);
    chrome.page(
        &format!("{action} schedule #{}?", detail.row.id),
        None,
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::by_reason;

    #[test]
    fn misses_by_reason_read_as_words_from_a_runtime_and_from_a_store() {
        let runtime = r#"["catchup" -> 3, "overlap" -> 0, "paused" -> 0, "dst_gap" -> 1, "catchup_window" -> 2]"#;
        let store = r#"{"catchup":3,"overlap":0,"paused":0,"dst_gap":1,"catchup_window":2}"#;
        let words = ["catch-up 3", "DST gap 1", "catch-up window 2"];
        assert_eq!(by_reason(runtime).unwrap(), words);
        assert_eq!(by_reason(store).unwrap(), words);
        assert_eq!(
            by_reason(r#"["catchup" -> 0, "overlap" -> 0]"#).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(by_reason("{}").unwrap(), Vec::<String>::new());
        // Anything else is shown as it came.
        assert_eq!(by_reason("7"), None);
        assert_eq!(by_reason(r#"["catchup" -> "x"]"#), None);
    }
}
