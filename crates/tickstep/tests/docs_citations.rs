//! No dangling citations: every rule the repository cites (`docs/kernel.md §4.2`) exists.
//!
//! The specification in `docs/` numbers its sections `## N. Title` and its rules `**N.M**` at the
//! start of a line (docs/README.md). This test reads every `.rs` and `.md` file of the workspace
//! (hidden folders and `target/` excluded), finds every citation, and fails naming the file, the
//! line and the missing rule. Forms recognised:
//!
//! * `docs/<layer>.md §N` or `§N.M`, also without the `docs/` prefix, where `<layer>` is one of
//!   `kernel`, `commands`, `schedules`, `runtime`, `bevy`, `serve`, `nt4`, `observability`,
//!   `crates`, `peers`;
//! * lists and ranges after one document: `docs/kernel.md §4.2, §4.3 and §5–§6` (a citation may
//!   wrap onto the next comment line);
//! * inside `docs/<layer>.md`, a bare `§N.M` cites that same document.
//!
//! A `§` followed by a number anywhere else cites no document, and is reported too. The test also
//! checks that each document's numbering is well formed (sections 1, 2, 3…; rules N.1, N.2… inside
//! section N), so a rule number means one thing.

mod source_tree;

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The documents that hold numbered rules.
const LAYERS: [&str; 10] = [
    "kernel",
    "commands",
    "schedules",
    "runtime",
    "bevy",
    "serve",
    "nt4",
    "observability",
    "crates",
    "peers",
];

/// One problem, already phrased as `path:line: what`.
type Problem = String;

/// The rule numbers a document defines (`"4"` for a section, `"4.2"` for a rule), and the
/// problems in its numbering.
fn rules_of(path: &str, text: &str) -> (BTreeSet<String>, Vec<Problem>) {
    let mut rules = BTreeSet::new();
    let mut problems = Vec::new();
    let mut section = 0_u32;
    let mut rule = 0_u32;
    for (index, line) in text.lines().enumerate() {
        let at = index + 1;
        if let Some(rest) = line.strip_prefix("## ") {
            let Some(number) = leading_number(rest).filter(|(_, tail)| tail.starts_with(". "))
            else {
                problems.push(format!(
                    "{path}:{at}: section heading without a number `N. `"
                ));
                continue;
            };
            if number.0 != section + 1 {
                problems.push(format!(
                    "{path}:{at}: section {} follows section {section}",
                    number.0
                ));
            }
            section = number.0;
            rule = 0;
            rules.insert(section.to_string());
        } else if let Some(rest) = line.strip_prefix("**") {
            let Some((major, tail)) = leading_number(rest) else {
                continue; // bold text, not a rule
            };
            let Some((minor, tail)) = tail.strip_prefix('.').and_then(leading_number) else {
                continue;
            };
            if !tail.starts_with("**") {
                continue;
            }
            if major != section || minor != rule + 1 {
                problems.push(format!(
                    "{path}:{at}: rule {major}.{minor} follows rule {section}.{rule}"
                ));
            }
            rule = minor;
            rules.insert(format!("{major}.{minor}"));
        }
    }
    (rules, problems)
}

/// Splits a leading decimal number off `s`.
fn leading_number(s: &str) -> Option<(u32, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok().map(|n| (n, &s[end..]))
}

/// A rule cited at a line: `layer` is `None` when the citation names no document.
#[derive(Debug, PartialEq)]
struct Citation {
    line: usize,
    layer: Option<&'static str>,
    rule: String,
}

/// Every citation in `text`; `own` is the layer of the document `text` is, if it is one.
fn citations(text: &str, own: Option<&'static str>) -> Vec<Citation> {
    let mut found = Vec::new();
    let mut consumed = BTreeSet::new(); // byte offsets of `§` already attributed to a document
    for layer in LAYERS {
        let needle = format!("{layer}.md");
        for (start, _) in text.match_indices(&needle) {
            let before = text[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') {
                continue; // e.g. `my-kernel.md`
            }
            let mut at = start + needle.len();
            let mut first = true;
            loop {
                let skip = if first {
                    skip_gap(text, at, false)
                } else {
                    skip_gap(text, at, true)
                };
                let Some(sign) = skip.filter(|&i| text[i..].starts_with('§')) else {
                    break;
                };
                let Some((rule, end)) = rule_after(text, sign) else {
                    break;
                };
                consumed.insert(sign);
                found.push(Citation {
                    line: line_of(text, sign),
                    layer: Some(layer),
                    rule,
                });
                at = end;
                first = false;
            }
        }
    }
    for (sign, _) in text.match_indices('§') {
        if consumed.contains(&sign) {
            continue;
        }
        if let Some((rule, _)) = rule_after(text, sign) {
            found.push(Citation {
                line: line_of(text, sign),
                layer: own,
                rule,
            });
        }
    }
    found.sort_by_key(|c| c.line);
    found
}

/// From `at`, skips what may stand between a document and its rule numbers: spaces, line breaks
/// and comment markers (`//!`, `///`, `*`, `>`), plus, between two rule numbers, the list and
/// range words `,` `and` `or` `to` `–` `-`. Returns where the next `§` would be.
fn skip_gap(text: &str, mut at: usize, between_rules: bool) -> Option<usize> {
    let words: &[&str] = if between_rules {
        &[",", "and ", "or ", "to ", "–", "-"]
    } else {
        &[]
    };
    'outer: loop {
        let rest = &text[at..];
        let c = rest.chars().next()?;
        if c == ' ' || c == '\t' || c == '\n' || c == '\r' || "/!*>".contains(c) {
            at += c.len_utf8();
            continue;
        }
        for word in words {
            if rest.starts_with(word) {
                at += word.len();
                continue 'outer;
            }
        }
        return Some(at);
    }
}

/// The rule number after the `§` at `sign` (`4`, `4.2`; deeper numbers are kept whole so they
/// are reported), and the offset just past it.
fn rule_after(text: &str, sign: usize) -> Option<(String, usize)> {
    let start = sign + '§'.len_utf8();
    let bytes = text.as_bytes();
    let mut end = start;
    loop {
        let digits = bytes[end..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            break;
        }
        end += digits;
        // A dot continues the number only when a digit follows (a final dot ends a sentence).
        if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end += 1;
        } else {
            break;
        }
    }
    (end > start).then(|| (text[start..end].to_owned(), end))
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Checks `files` (path relative to the workspace, text) against `docs` (layer, text): the
/// numbering of each document and every citation. Returns the problems, one per line.
fn check(docs: &[(&'static str, String)], files: &[(String, String)]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut defined = Vec::new();
    for (layer, text) in docs {
        let (rules, mut bad) = rules_of(&format!("docs/{layer}.md"), text);
        problems.append(&mut bad);
        defined.push((*layer, rules));
    }
    for (path, text) in files {
        let own = LAYERS
            .iter()
            .copied()
            .find(|layer| *path == format!("docs/{layer}.md"));
        for citation in citations(text, own) {
            let Some(layer) = citation.layer else {
                problems.push(format!(
                    "{path}:{}: §{} names no document (write docs/<layer>.md §{})",
                    citation.line, citation.rule, citation.rule
                ));
                continue;
            };
            let exists = defined
                .iter()
                .any(|(l, rules)| *l == layer && rules.contains(&citation.rule));
            if !exists {
                problems.push(format!(
                    "{path}:{}: docs/{layer}.md §{} does not exist",
                    citation.line, citation.rule
                ));
            }
        }
    }
    problems
}

#[test]
fn every_cited_rule_exists_in_docs() {
    let root = source_tree::workspace_root();
    let docs: Vec<(&'static str, String)> = LAYERS
        .iter()
        .map(|layer| {
            let path = root.join("docs").join(format!("{layer}.md"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (*layer, text)
        })
        .collect();
    let mut files = Vec::new();
    source_tree::files(&root, &root, &["rs", "md"], &mut files);
    assert!(
        files.len() > 50,
        "the scan found only {} files under {}",
        files.len(),
        root.display()
    );
    let cited = files
        .iter()
        .map(|(path, text)| {
            let own = LAYERS
                .iter()
                .copied()
                .find(|l| *path == format!("docs/{l}.md"));
            citations(text, own).len()
        })
        .sum::<usize>();
    assert!(cited > 0, "no citation found: the scanner is broken");
    let problems = check(&docs, &files);
    let mut report = String::new();
    for problem in &problems {
        let _ = writeln!(report, "{problem}");
    }
    assert!(problems.is_empty(), "dangling citations:\n{report}");
}

// The fabricated texts below spell the section sign as `\u{a7}`, so that this file itself holds
// no citation for the scan above to check.

/// A small document: sections 1 and 2, rules 1.1, 1.2 and 2.1.
fn sample_doc() -> Vec<(&'static str, String)> {
    let text = "# K\n\n## 1. One\n\n**1.1** a\n\n**1.2** b\n\n## 2. Two\n\n**2.1** c\n";
    vec![("kernel", text.to_owned())]
}

#[test]
fn a_dangling_citation_is_reported_with_its_file_line_and_rule() {
    let file = (
        "crates/x/src/lib.rs".to_owned(),
        "//! fine: docs/kernel.md \u{a7}1.2\n//! dangling: docs/kernel.md \u{a7}9.1\n".to_owned(),
    );
    assert_eq!(
        check(&sample_doc(), &[file]),
        ["crates/x/src/lib.rs:2: docs/kernel.md \u{a7}9.1 does not exist"]
    );
}

#[test]
fn lists_ranges_and_wrapped_lines_are_each_checked() {
    let file = (
        "a.rs".to_owned(),
        "// see kernel.md \u{a7}1.1, \u{a7}1.3 and \u{a7}2\n// docs/kernel.md\n// \u{a7}2.4.\n"
            .to_owned(),
    );
    assert_eq!(
        check(&sample_doc(), &[file]),
        [
            "a.rs:1: docs/kernel.md \u{a7}1.3 does not exist",
            "a.rs:3: docs/kernel.md \u{a7}2.4 does not exist",
        ]
    );
}

#[test]
fn a_bare_section_sign_cites_its_own_document_or_none() {
    let doc_with_self_reference = (
        "docs/kernel.md".to_owned(),
        format!("{}\nSee \u{a7}2.1 and \u{a7}3.\n", sample_doc()[0].1),
    );
    let code = ("b.rs".to_owned(), "// as \u{a7}1.1 says\n".to_owned());
    let problems = check(&sample_doc(), &[doc_with_self_reference, code]);
    assert_eq!(
        problems,
        [
            "docs/kernel.md:13: docs/kernel.md \u{a7}3 does not exist",
            "b.rs:1: \u{a7}1.1 names no document (write docs/<layer>.md \u{a7}1.1)",
        ]
    );
}

#[test]
fn a_misnumbered_document_is_reported() {
    let text = "## 1. A\n**1.1** x\n**1.3** y\n## 3. C\n".to_owned();
    let (_, problems) = rules_of("docs/kernel.md", &text);
    assert_eq!(
        problems,
        [
            "docs/kernel.md:3: rule 1.3 follows rule 1.1",
            "docs/kernel.md:4: section 3 follows section 1",
        ]
    );
}

#[test]
fn a_three_level_number_is_not_a_rule() {
    let file = ("c.md".to_owned(), "runtime.md \u{a7}1.1.1\n".to_owned());
    let docs = vec![("runtime", "## 1. R\n**1.1** r\n".to_owned())];
    assert_eq!(
        check(&docs, &[file]),
        ["c.md:1: docs/runtime.md \u{a7}1.1.1 does not exist"]
    );
}
