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
use crate::schedules::{ListOrder, ListQuery, ListedSchedule, Namespace};

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
            @if let Some(partial) = minutes.and_then(|m| m["partial"].as_str()) {
                p id="hour-partial" { (partial) }
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

/// A store's last hour (docs/serve.md §13.18): the kept records of the schedules that started a
/// firing in it and the last misses in it, from one page of each — the schedules that ran most
/// recently and those that missed most recently (docs/schedules.md §9.19) — so a request reads
/// at most `bound` schedules twice and `bound` histories however large the store.
pub(crate) fn store_minutes(
    location: &Path,
    namespace: Option<Namespace>,
    now_unix_nanos: u64,
    bound: usize,
) -> Result<serde_json::Value, String> {
    let inspector = rows::open(location, namespace)?;
    let failed = |e| rows::failed(location, &e);
    let hour_start =
        (now_unix_nanos / 60_000_000_000 + 1).saturating_sub(KEPT as u64) * 60_000_000_000;
    // The first `bound` rows in `order`, and whether the row after them is in the hour too.
    let recent = |order, in_hour: &dyn Fn(&ListedSchedule) -> bool| {
        let page = inspector
            .page(&ListQuery {
                order,
                ..ListQuery::new(bound)
            })
            .map_err(failed)?;
        let rows: Vec<ListedSchedule> = page.rows.into_iter().take_while(in_hour).collect();
        let more = rows.len() == bound
            && page.matched > bound as u64
            && inspector
                .page(&ListQuery {
                    order,
                    page: bound + 1,
                    ..ListQuery::new(1)
                })
                .map_err(failed)?
                .rows
                .first()
                .is_some_and(in_hour);
        Ok::<_, String>((rows, more))
    };
    let (ran, more_ran) = recent(ListOrder::LastRun, &|s| s.last_run_unix_nanos >= hour_start)?;
    // Only a schedule whose last start is in the hour has a kept record there.
    let mut histories = Vec::with_capacity(ran.len());
    for s in &ran {
        histories.push(inspector.history(s.id).map_err(failed)?);
    }
    #[allow(clippy::cast_precision_loss)]
    let hour_start_secs = hour_start as f64 / 1e9;
    let (missed, more_missed) = recent(ListOrder::LastMiss, &|s| {
        s.last_miss.is_some_and(|(at, _)| at >= hour_start_secs)
    })?;
    let records = histories.iter().map(|h| (None, h.as_slice()));
    let misses = missed.iter().map(|s| (s.last_miss, &[][..]));
    let mut json = Minutes::of_store(now_unix_nanos, records.chain(misses)).json();
    let partial = partial(bound, more_ran, more_missed);
    if !partial.is_empty() {
        json["partial"] = serde_json::Value::String(partial);
    }
    Ok(json)
}

/// What a store's hour leaves out when more schedules ran, or missed, in it than one page holds
/// (docs/serve.md §13.18); empty when nothing was left out.
fn partial(bound: usize, more_ran: bool, more_missed: bool) -> String {
    let mut said = Vec::new();
    if more_ran {
        said.push(format!(
            "Firings, faults and lateness are counted from the {bound} schedules that ran most \
             recently; more than {bound} ran in the last hour."
        ));
    }
    if more_missed {
        said.push(format!(
            "Missed points are counted from the {bound} schedules that missed one most \
             recently; more than {bound} missed in the last hour."
        ));
    }
    said.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Runtime;
    use crate::kernel::ManualClock;
    use crate::schedules::{ObjId, Options, Value};
    use std::time::Duration;

    /// A store at `db` whose `ran` schedules every 60 s each fired twice in the 5 minutes
    /// before `now`, and whose `missed` ones, paused all along, each missed points there; with
    /// one schedule that never fired.
    fn store(db: &Path, now: u64, ran: usize, missed: usize) {
        let rt = Runtime::builder()
            .manual_clock(ManualClock::starting_at_unix_nanos(now - 300_000_000_000))
            .store_path(db)
            .build()
            .unwrap();
        rt.verb("ring", |_| Ok(Value::Int(0)));
        let wiz = ObjId(1);
        let mut txn = rt.schedules().begin(wiz);
        let mut paused = Vec::new();
        for n in 0..ran + missed {
            let id = txn
                .schedule_every(wiz, "ring", 60.0, vec![], Options::new())
                .unwrap();
            if n >= ran {
                paused.push(id);
            }
        }
        txn.schedule_every(wiz, "ring", 86_400.0, vec![], Options::new())
            .unwrap();
        txn.commit().unwrap();
        for id in &paused {
            assert!(rt.schedules().pause(wiz, *id, "held").unwrap());
        }
        rt.run_for(Duration::from_secs(150)).unwrap();
        for id in &paused {
            assert!(rt.schedules().resume(wiz, *id).unwrap());
        }
        rt.run_for(Duration::from_secs(1)).unwrap();
        rt.shutdown().unwrap();
    }

    fn total(json: &serde_json::Value, series: &str) -> u64 {
        json[series]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(serde_json::Value::as_u64)
            .sum()
    }

    #[test]
    fn a_store_with_more_schedules_than_the_bound_answers_from_the_most_recent_and_says_so() {
        // docs/serve.md §13.18, docs/schedules.md §9.19
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let now = super::super::asks::now_unix_nanos();
        store(&db, now, 5, 4);
        // Enough for all: every firing and miss, nothing left out.
        let whole = store_minutes(&db, None, now, 10).unwrap();
        assert_eq!((total(&whole, "firings"), total(&whole, "missed")), (10, 4));
        assert!(whole.get("partial").is_none(), "{whole}");
        // Exactly enough: still whole.
        let exact = store_minutes(&db, None, now, 5).unwrap();
        assert_eq!((total(&exact, "firings"), total(&exact, "missed")), (10, 4));
        assert!(exact.get("partial").is_none(), "{exact}");
        // Fewer than ran: the most recent 3 of them, 2 firings each, and the page says so.
        let part = store_minutes(&db, None, now, 3).unwrap();
        assert_eq!((total(&part, "firings"), total(&part, "missed")), (6, 3));
        let said = part["partial"].as_str().unwrap();
        assert_eq!(
            said,
            "Firings, faults and lateness are counted from the 3 schedules that ran most recently; \
             more than 3 ran in the last hour. Missed points are counted from the 3 schedules that \
             missed one most recently; more than 3 missed in the last hour."
        );
        let chrome = Chrome {
            title: "t".into(),
            runtime: false,
            online: false,
            cluster: false,
            acting_as: None,
            signed: None,
        };
        assert!(page(Some(&part), &chrome).contains(said));
        assert!(!page(Some(&whole), &chrome).contains("hour-partial"));
        // Only firings left out: 5 ran, 4 missed.
        let ran_only = store_minutes(&db, None, now, 4).unwrap();
        assert_eq!(
            (total(&ran_only, "firings"), total(&ran_only, "missed")),
            (8, 4)
        );
        let said = ran_only["partial"].as_str().unwrap();
        assert!(
            said.starts_with("Firings, faults") && !said.contains("Missed"),
            "{said}"
        );
    }

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
