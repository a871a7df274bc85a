//! The measuring harness every section uses: interleaved rounds, medians, one table or one JSON.
//!
//! A shared two-core virtual machine drifts by tens of percent between runs, so an absolute time
//! means little. Every comparison therefore runs *ours* and the *peer* alternately, round after
//! round, in one process, and reports the median of each side and their ratio. A section is a
//! list of [`Row`]s; `main` prints them as a table or as
//! `{"<section>": {"<measure>": {"ours_ns", "peer", "peer_ns", "ratio", "goal"}}}`.

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Map, Value, json};

/// Command-line options every section sees.
pub(crate) struct Opts {
    /// Smaller sizes and fewer rounds: the whole binary finishes in under a minute.
    pub(crate) quick: bool,
}

impl Opts {
    /// Rounds of an interleaved comparison.
    pub(crate) fn rounds(&self) -> usize {
        if self.quick { 7 } else { 21 }
    }
}

/// What one row measured.
pub(crate) enum Measure {
    /// Ours against a peer or baseline, both in nanoseconds per operation; goal is a ratio bound.
    Ratio {
        ours_ns: f64,
        peer: &'static str,
        peer_ns: f64,
        goal_ratio: f64,
    },
    /// Ours alone in nanoseconds per operation (an overhead or a cost), with an upper bound.
    Ns { ours_ns: f64, goal_ns: f64 },
    /// A count or a size, with an upper bound.
    Value {
        value: f64,
        unit: &'static str,
        goal: f64,
    },
    /// A worst-case time with an upper bound, beside the machine's own stalls measured in the
    /// same run (what no code can get under on this machine).
    ValueBesideNoise {
        value: f64,
        unit: &'static str,
        goal: f64,
        noise_floor_ns: f64,
    },
}

/// One measure of a section.
pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) measure: Measure,
    /// What exactly was measured, in one line (sizes, scaling, caveats).
    pub(crate) note: String,
}

/// A section's rows, in the order they print.
pub(crate) type Section = Vec<Row>;

/// What `main` calls to run one section.
pub(crate) type SectionFn = fn(&Opts) -> Section;

/// Nanoseconds per operation of one run of `batch`, which performs `ops` operations.
pub(crate) fn ns_per_op(ops: usize, batch: impl FnOnce()) -> f64 {
    let start = Instant::now();
    batch();
    black_box(());
    start.elapsed().as_nanos() as f64 / ops as f64
}

/// Runs `ours` and `peer` alternately for `rounds` rounds (each returns ns per op for one batch)
/// and returns the two medians. One warm-up round of each is discarded.
pub(crate) fn interleave(
    rounds: usize,
    mut ours: impl FnMut() -> f64,
    mut peer: impl FnMut() -> f64,
) -> (f64, f64) {
    ours();
    peer();
    let mut a = Vec::with_capacity(rounds);
    let mut b = Vec::with_capacity(rounds);
    for round in 0..rounds {
        // Alternate who goes first so neither side always inherits the other's cache state.
        if round % 2 == 0 {
            a.push(ours());
            b.push(peer());
        } else {
            b.push(peer());
            a.push(ours());
        }
    }
    (median(&mut a), median(&mut b))
}

/// The median of `samples` (sorted in place). Zero for no samples.
pub(crate) fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

impl Row {
    /// Whether the measure meets its goal.
    pub(crate) fn meets_goal(&self) -> bool {
        match self.measure {
            Measure::Ratio {
                ours_ns,
                peer_ns,
                goal_ratio,
                ..
            } => ours_ns / peer_ns <= goal_ratio,
            Measure::Ns { ours_ns, goal_ns } => ours_ns <= goal_ns,
            Measure::Value { value, goal, .. } | Measure::ValueBesideNoise { value, goal, .. } => {
                value <= goal
            }
        }
    }

    fn to_json(&self) -> Value {
        let mut object = match self.measure {
            Measure::Ratio {
                ours_ns,
                peer,
                peer_ns,
                goal_ratio,
            } => json!({
                "ours_ns": round2(ours_ns),
                "peer": peer,
                "peer_ns": round2(peer_ns),
                "ratio": round3(ours_ns / peer_ns),
                "goal": goal_text("ratio", goal_ratio),
            }),
            Measure::Ns { ours_ns, goal_ns } => json!({
                "ours_ns": round2(ours_ns),
                "goal": format!("ours_ns <= {goal_ns}"),
            }),
            Measure::Value { value, unit, goal } => json!({
                "value": round3(value),
                "unit": unit,
                "goal": goal_text("value", goal),
            }),
            Measure::ValueBesideNoise {
                value,
                unit,
                goal,
                noise_floor_ns,
            } => json!({
                "value": round3(value),
                "unit": unit,
                "goal": format!("value <= {goal}"),
                "noise_floor_ns": round3(noise_floor_ns),
            }),
        };
        object["meets_goal"] = json!(self.meets_goal());
        object["note"] = json!(self.note);
        object
    }

    fn to_line(&self) -> String {
        let verdict = if self.meets_goal() { "ok" } else { "MISSED" };
        match self.measure {
            Measure::Ratio {
                ours_ns,
                peer,
                peer_ns,
                goal_ratio,
            } => format!(
                "  {:<22} ours {:>10.1} ns  {:<34} {:>10.1} ns  ratio {:>6.3} ({}) {verdict}",
                self.name,
                ours_ns,
                peer,
                peer_ns,
                ours_ns / peer_ns,
                goal_text("goal", goal_ratio),
            ),
            Measure::Ns { ours_ns, goal_ns } => format!(
                "  {:<22} ours {:>10.1} ns  (goal <= {goal_ns} ns) {verdict}",
                self.name, ours_ns
            ),
            Measure::Value { value, unit, goal } => format!(
                "  {:<22} {:>10.3} {unit}  ({}) {verdict}",
                self.name,
                value,
                goal_text("goal", goal),
            ),
            Measure::ValueBesideNoise {
                value,
                unit,
                goal,
                noise_floor_ns,
            } => format!(
                "  {:<22} {:>10.3} {unit}  (goal <= {goal}; noise floor {noise_floor_ns:.0} ns) {verdict}",
                self.name, value
            ),
        }
    }
}

/// `"<what> <= <bound>"`, or `"no goal"` for a row that only reports (an infinite bound).
fn goal_text(what: &str, bound: f64) -> String {
    if bound.is_finite() {
        format!("{what} <= {bound}")
    } else {
        "no goal".to_owned()
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Prints sections as a human table.
pub(crate) fn print_table(sections: &[(&str, Section)]) {
    for (name, rows) in sections {
        println!("[{name}]");
        for row in rows {
            println!("{}", row.to_line());
            println!("  {:<22} {}", "", row.note);
        }
    }
}

/// Prints sections as one JSON object.
pub(crate) fn print_json(sections: &[(&str, Section)]) {
    let mut top = Map::new();
    for (name, rows) in sections {
        let mut section = Map::new();
        for row in rows {
            section.insert(row.name.to_owned(), row.to_json());
        }
        top.insert((*name).to_owned(), Value::Object(section));
    }
    println!("{}", Value::Object(top));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_samples() {
        assert!((median(&mut [3.0, 1.0, 2.0]) - 2.0).abs() < f64::EPSILON);
        assert!((median(&mut [4.0, 1.0, 3.0, 2.0]) - 3.0).abs() < f64::EPSILON);
        assert!(median(&mut []).abs() < f64::EPSILON);
    }

    #[test]
    fn json_row_carries_ratio_and_verdict() {
        let row = Row {
            name: "x",
            measure: Measure::Ratio {
                ours_ns: 50.0,
                peer: "p",
                peer_ns: 100.0,
                goal_ratio: 1.0,
            },
            note: String::new(),
        };
        let json = row.to_json();
        assert!((json["ratio"].as_f64().unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(json["meets_goal"], json!(true));
    }

    #[test]
    fn interleave_reports_each_side_separately() {
        let (ours, peer) = interleave(3, || 1.0, || 2.0);
        assert!((ours - 1.0).abs() < f64::EPSILON);
        assert!((peer - 2.0).abs() < f64::EPSILON);
    }
}
