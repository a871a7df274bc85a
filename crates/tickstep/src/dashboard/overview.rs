//! The overview page, `/dashboard/overview` (docs/serve.md §13.18): the last hour a minute at a
//! time — firings, faults, missed points, lateness — as charts the script draws as SVG from the
//! minutes' JSON, with the same numbers as text; and, for a runtime, the frame budget (docs/serve.md §13.6).
//! A runtime's page is filled by the live view's events; a store's carries its hour in the page,
//! read from the store at the request ([`Minutes::of_store`]).

use std::path::Path;

use maud::html;

use super::minutes::{KEPT, Minutes};
use super::pages::{Chrome, Here, live};
use super::rows;
use crate::schedules::Namespace;

/// The series the page charts, in order: the JSON field, the chart's heading.
const CHARTS: [(&str, &str); 4] = [
    ("firings", "Firings started"),
    ("faults", "Faults"),
    ("missed", "Missed points"),
    ("p99", "Lateness p50 and p99"),
];

/// The overview page; `minutes` is a store's hour (a runtime's comes by the live view).
pub(crate) fn page(minutes: Option<&serde_json::Value>, chrome: &Chrome) -> String {
    let data = minutes.map(serde_json::Value::to_string);
    let body = html! {
        section.card id="hour" data-minutes=[data.as_deref()] {
            h2 { "The last hour" }
            p id="hour-summary" {
                @match minutes {
                    Some(m) => (summary(m)),
                    None => "waiting for the first live update",
                }
            }
            p.muted {
                "per minute, the oldest on the left and this minute on the right"
                @if chrome.runtime { " — updated every second" }
            }
            div.charts {
                @for (series, heading) in CHARTS {
                    figure.minute-chart id={ "chart-" (series) } {
                        figcaption { (heading) }
                        // Drawn by the script: one bar per minute, an axis with its scale.
                        svg.minute-chart role="img" aria-label={ (heading) " per minute over the last hour" }
                            viewBox="0 0 640 140" {}
                    }
                }
            }
            details {
                summary { "the numbers, minute by minute" }
                div.scroll {
                    table id="minutes-table" {
                        tr {
                            th { "minute (UTC)" } th.num { "firings" } th.num { "faults" }
                            th.num { "missed" } th.num { "lateness p50" } th.num { "lateness p99" }
                        }
                    }
                }
            }
        }
        @if chrome.runtime { (live(chrome.online)) }
    };
    chrome.page("Overview", Some(Here::Overview), &body)
}

/// The hour in one sentence, as the script also writes it.
fn summary(minutes: &serde_json::Value) -> String {
    let sum = |name: &str| -> u64 {
        minutes[name]
            .as_array()
            .map_or(0, |a| a.iter().filter_map(serde_json::Value::as_u64).sum())
    };
    let firings = sum("firings");
    let (faults, missed) = (sum("faults"), sum("missed"));
    let head = if firings == 0 {
        "no firings in the last hour".to_owned()
    } else {
        format!(
            "{firings} {} in the last hour; lateness p50 {}, p99 {}",
            if firings == 1 { "firing" } else { "firings" },
            seconds(minutes["hour_p50"].as_f64().unwrap_or(0.0)),
            seconds(minutes["hour_p99"].as_f64().unwrap_or(0.0)),
        )
    };
    format!("{head}; faults: {faults}; missed points: {missed}")
}

/// Lateness for people: `under 1 ms`, `4.1 ms`, `2.1 s`.
fn seconds(s: f64) -> String {
    if s < 0.001 {
        "under 1 ms".to_owned()
    } else if s < 1.0 {
        format!("up to {:.1} ms", s * 1e3)
    } else {
        format!("up to {s:.1} s")
    }
}

/// A store's last hour (docs/serve.md §13.18): the history of each schedule that started a
/// firing in it (its last run says so), and each one's last miss.
pub(crate) fn store_minutes(
    location: &Path,
    namespace: Option<Namespace>,
    now_unix_nanos: u64,
) -> Result<serde_json::Value, String> {
    let inspector = rows::open(location, namespace)?;
    let failed = |e| rows::failed(location, &e);
    let saved = inspector.list().map_err(failed)?;
    let hour_start =
        (now_unix_nanos / 60_000_000_000 + 1).saturating_sub(KEPT as u64) * 60_000_000_000;
    let mut read = Vec::with_capacity(saved.len());
    for s in &saved {
        // Only a schedule whose last start is in the hour has a kept record there.
        let history = if s.last_run_unix_nanos >= hour_start {
            inspector.history(s.id).map_err(failed)?
        } else {
            Vec::new()
        };
        read.push((s.missed.last, history));
    }
    let minutes = Minutes::of_store(
        now_unix_nanos,
        read.iter()
            .map(|(last, history)| (*last, history.as_slice())),
    );
    Ok(minutes.json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_hour_says_so_and_a_busy_one_counts() {
        // docs/serve.md §13.18
        let empty = Minutes::default().json();
        assert_eq!(
            summary(&empty),
            "no firings in the last hour; faults: 0; missed points: 0"
        );
        let busy = serde_json::json!({
            "firings": [1, 2], "faults": [0, 1], "missed": [3, 0],
            "hour_p50": 0.004_096, "hour_p99": 2.097_152,
        });
        assert_eq!(
            summary(&busy),
            "3 firings in the last hour; lateness p50 up to 4.1 ms, p99 up to 2.1 s; faults: 1; missed points: 3"
        );
    }
}
