//! The files an operator deploys beside tickstep (docs/observability.md §7): the Prometheus alert
//! rules and the Grafana dashboard under `deploy/`. Each reads only metric families the layers
//! really describe, the dashboard shows every one of them, and `promtool` — Prometheus' own
//! checker, from Debian's `prometheus` package — accepts the rules and passes their unit tests.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The families the libraries describe (`metrics::describe_*!("name", ...)`, docs/observability.md
/// §4.6), each with whether it is a histogram.
fn described() -> Vec<(String, bool)> {
    let mut files = Vec::new();
    for krate in [
        "tickstep-kernel",
        "tickstep-commands",
        "tickstep-schedules",
        "tickstep",
        "tickstep-cli",
    ] {
        sources(&root().join("crates").join(krate).join("src"), &mut files);
    }
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for kind in ["counter", "gauge", "histogram"] {
            let mark = format!("describe_{kind}!(");
            for (at, _) in text.match_indices(&mark) {
                let rest = text[at + mark.len()..].trim_start();
                if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                    out.push((name.to_owned(), kind == "histogram"));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The `tickstep_*` series names an expression reads.
fn series_in(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("tickstep_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        out.push(name);
    }
    out
}

/// Checks every series `expr` reads against the described families; returns the families used.
fn check_expr(expr: &str, families: &[(String, bool)], whence: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for series in series_in(expr) {
        let (family, is_histogram_series) = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| series.strip_suffix(s).map(|f| (f.to_owned(), true)))
            .filter(|(f, _)| families.iter().any(|(n, _)| n == f))
            .unwrap_or((series.clone(), false));
        let Some((_, histogram)) = families.iter().find(|(n, _)| *n == family) else {
            panic!("{whence} reads {series}, which no layer records ({expr})");
        };
        assert_eq!(
            is_histogram_series, *histogram,
            "{whence}: {series} — a histogram is read through _bucket/_sum/_count, nothing else is"
        );
        used.insert(family);
    }
    used
}

#[test]
fn the_grafana_dashboard_shows_every_family_and_only_real_ones() {
    let families = described();
    assert!(families.len() >= 26, "{families:?}");
    let dashboard: serde_json::Value =
        serde_json::from_str(&read("deploy/grafana/tickstep.json")).expect("valid JSON");
    assert_eq!(dashboard["uid"], "tickstep-overview");
    let panels = dashboard["panels"].as_array().expect("panels");
    let mut used = BTreeSet::new();
    for panel in panels {
        let title = panel["title"].as_str().expect("every panel has a title");
        let grid = &panel["gridPos"];
        let (x, w) = (grid["x"].as_u64().unwrap(), grid["w"].as_u64().unwrap());
        assert!(x + w <= 24, "{title} is wider than Grafana's 24 columns");
        if panel["type"] == "row" {
            continue;
        }
        assert!(
            panel["description"]
                .as_str()
                .is_some_and(|d| d.ends_with('.')),
            "{title} says what it shows"
        );
        let targets = panel["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title} has a query");
        let ids: BTreeSet<_> = targets
            .iter()
            .map(|t| t["refId"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), targets.len(), "{title}: refIds are unique");
        for target in targets {
            let expr = target["expr"].as_str().expect("a PromQL expression");
            assert!(
                expr.contains(r#"instance=~"$instance""#),
                "{title} follows the instance picker: {expr}"
            );
            used.extend(check_expr(expr, &families, title));
        }
    }
    let all: BTreeSet<String> = families.into_iter().map(|(n, _)| n).collect();
    let missing: Vec<_> = all.difference(&used).collect();
    assert!(
        missing.is_empty(),
        "the dashboard shows no panel for {missing:?}"
    );
}

#[test]
fn the_alert_rules_read_only_real_families() {
    let families = described();
    let rules = read("deploy/prometheus/alerts.yml");
    let mut exprs = 0;
    // Each `expr:` is one line, or a folded block of the lines indented below it.
    let lines: Vec<&str> = rules.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(start) = line.trim_start().strip_prefix("expr:") else {
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let mut expr = start.trim().trim_start_matches(">-").to_owned();
        for next in &lines[i + 1..] {
            if next.len() - next.trim_start().len() <= indent {
                break;
            }
            expr.push(' ');
            expr.push_str(next.trim());
        }
        exprs += 1;
        check_expr(&expr, &families, "alerts.yml");
    }
    assert_eq!(exprs, 5, "every rule was read");
}

/// `promtool`, or `None` outside CI when it is not installed; under `CI` a missing `promtool`
/// fails (.ci/run installs Debian's `prometheus` package).
fn promtool() -> Option<&'static str> {
    if Command::new("promtool").arg("--version").output().is_ok() {
        return Some("promtool");
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "promtool is missing: .ci/run installs Debian's prometheus package"
    );
    eprintln!("skipped: no promtool (apt-get install prometheus)");
    None
}

#[test]
fn promtool_accepts_the_rules_and_their_unit_tests_pass() {
    let Some(promtool) = promtool() else {
        return;
    };
    let dir = root().join("deploy/prometheus");
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts_test.yml"],
    ] {
        let out = Command::new(promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
