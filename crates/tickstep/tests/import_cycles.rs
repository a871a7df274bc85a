//! No import cycles: inside every crate of the workspace, no module depends on itself through
//! other modules (docs/README.md, "Rules for the code").
//!
//! The test reads each crate's `src/` (the module tree from `lib.rs` or `main.rs`, one file per
//! module), and draws an edge from module A to module B for every path in A that names B: `use`
//! declarations (nested groups, `as` renames), inline paths (`crate::a::B`, `super::x`, `self::y`)
//! and paths through a child module (`child::Item`). A path that stops at a re-export
//! (`pub use a::Item` in `lib.rs` or a `mod.rs`) names the module the item comes from. Comments and
//! `#[cfg(test)]` modules are skipped: unit tests may use anything of their parent.
//!
//! A cycle is counted between siblings, each standing for its whole subtree: an edge from
//! `scheduler::idle` to `frame_loop` is an edge between the siblings `scheduler` and `frame_loop`.
//! An edge between a module and one of its own ancestors or descendants is no cycle: a child
//! reaching its parent's items with `super::` is how a folder of Rust files is written, and its
//! parent declaring it is what makes it a child. So the crate root's children form one graph and
//! every folder's files form another, and each graph must be acyclic.
//!
//! [`KNOWN`] lists the cycles still to break, with why; the test also fails when one of them is
//! gone, so the list can only shrink.

mod source_tree;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// A module path inside its crate: `[]` is the crate root, `["scheduler", "idle"]` a file.
type ModPath = Vec<String>;

/// Cycles not broken yet: (crate folder, the siblings of one strongly connected group, sorted).
///
/// Empty: the last one, in tickstep-commands (a command's body takes a `Coroutine`, the coroutine
/// and every mechanism link to the engine, and the engine stores commands), was broken by
/// declaring those types in `scheduler/mod.rs`, the parent of the files that implement them.
const KNOWN: &[(&str, &[&str])] = &[];

/// One crate's sources: (path relative to `src/`, text).
type Sources = Vec<(String, String)>;

/// The module a file under `src/` is: `lib.rs`/`main.rs` the root, `a/mod.rs` and `a.rs` module
/// `a`. Binaries under `src/bin/` are their own crates and are left out (`None`).
fn module_of(relative: &str) -> Option<ModPath> {
    let stem = relative.strip_suffix(".rs")?;
    let mut parts: ModPath = stem.split('/').map(str::to_owned).collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return Some(Vec::new());
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// `text` without comments (line and block) and without `#[cfg(test)] mod … { … }` blocks.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else if let Some(after) = rest.strip_prefix("#[cfg(test)]") {
            let trimmed = after.trim_start();
            if trimmed.starts_with("mod ") {
                rest = skip_item(trimmed);
            } else {
                rest = after;
            }
        } else if let Some(quote) = ["'\"'", "'\\\"'"].iter().find(|q| rest.starts_with(**q)) {
            out.push_str("' '");
            rest = &rest[quote.len()..];
        } else if let Some(after) = rest.strip_prefix("r#\"") {
            out.push_str("\"\"");
            rest = after.find("\"#").map_or("", |i| &after[i + 2..]);
        } else if rest.starts_with('"') {
            // A string literal says nothing about imports (and may hold `//`).
            let mut escaped = false;
            let end = rest[1..]
                .char_indices()
                .find(|&(_, c)| {
                    let close = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    close
                })
                .map_or(rest.len(), |(i, _)| i + 2);
            out.push_str("\"\"");
            rest = &rest[end..];
        } else {
            let c = rest.chars().next().expect("rest is not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Skips one item `mod name;` or `mod name { … }` (braces balanced) at the start of `text`.
fn skip_item(text: &str) -> &str {
    let mut depth = 0_usize;
    for (i, c) in text.char_indices() {
        match c {
            ';' if depth == 0 => return &text[i + 1..],
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[i + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// Expands a use tree (`a::{b, c::{d as e}, self}`) into (path, name it binds) pairs.
fn expand_use(tree: &str) -> Vec<(Vec<String>, String)> {
    // Whitespace goes; a rename's `as` becomes `@` so it survives the squeeze.
    let tree: String = tree
        .split_whitespace()
        .map(|word| if word == "as" { "@" } else { word })
        .collect();
    let mut out = Vec::new();
    expand_into(&[], &tree, &mut out);
    out
}

fn expand_into(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim_end_matches("::");
        let mut base = prefix.to_vec();
        base.extend(
            head.split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0_usize;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_into(&base, &inner[start..], out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (path, alias) = match tree.split_once('@') {
        Some((path, alias)) => (path, Some(alias)),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    for segment in path.split("::").filter(|s| !s.is_empty()) {
        if segment != "self" || full.is_empty() {
            full.push(segment.to_owned());
        }
    }
    let name = alias.map_or_else(|| full.last().cloned().unwrap_or_default(), str::to_owned);
    out.push((full, name));
}

/// The `use` trees of a stripped text, each with whether it is a re-export (`pub …use`).
fn use_trees(text: &str) -> Vec<(bool, String)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("use ") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = text[at..].find(';') else {
            continue;
        };
        let line_start = text[..at].rfind(['\n', ';', '}', '{']).map_or(0, |i| i + 1);
        let public = text[line_start..at].trim_start().starts_with("pub");
        found.push((public, text[at + 4..at + end].to_owned()));
    }
    found
}

/// A crate's module graph: every module, and the edges between them.
struct Graph {
    modules: BTreeSet<ModPath>,
    edges: BTreeSet<(ModPath, ModPath)>,
}

/// Builds the graph of one crate from its sources.
fn graph(sources: &Sources) -> Graph {
    let mut texts = BTreeMap::new();
    for (relative, text) in sources {
        if let Some(module) = module_of(relative) {
            texts.insert(module, strip(text));
        }
    }
    let modules: BTreeSet<ModPath> = texts.keys().cloned().collect();
    // Re-exports: (module, name) -> the path it re-exports, made absolute.
    let mut reexports: BTreeMap<(ModPath, String), ModPath> = BTreeMap::new();
    for (module, text) in &texts {
        for (public, tree) in use_trees(text) {
            if !public {
                continue;
            }
            for (path, name) in expand_use(&tree) {
                if let Some(absolute) = absolute(module, &path, &modules) {
                    reexports.insert((module.clone(), name), absolute);
                }
            }
        }
    }
    let mut edges = BTreeSet::new();
    for (module, text) in &texts {
        for path in paths_in(module, text, &modules) {
            if let Some(target) = resolve(&path, &modules, &reexports, 0)
                && target != *module
            {
                edges.insert((module.clone(), target));
            }
        }
    }
    Graph { modules, edges }
}

/// `path` as written in `module` made absolute from the crate root, if it starts with `crate`,
/// `super`, `self` or the name of a child module of `module`.
fn absolute(module: &ModPath, path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let first = path.first()?;
    let mut base: ModPath;
    let mut rest = &path[1..];
    match first.as_str() {
        "crate" => base = Vec::new(),
        "self" => base = module.clone(),
        "super" => {
            base = module.clone();
            base.pop();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        child => {
            let mut candidate = module.clone();
            candidate.push(child.to_owned());
            if !modules.contains(&candidate) {
                return None;
            }
            base = module.clone();
            rest = path;
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Every path a stripped module text names: its `use` trees and inline paths.
fn paths_in(module: &ModPath, text: &str, modules: &BTreeSet<ModPath>) -> Vec<ModPath> {
    let mut paths = Vec::new();
    for (_, tree) in use_trees(text) {
        for (path, _) in expand_use(&tree) {
            paths.extend(absolute(module, &path, modules));
        }
    }
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    for (index, &(at, c)) in chars.iter().enumerate() {
        let starts_word = index == 0 || !is_name(chars[index - 1].1);
        let after_colons = index >= 2 && chars[index - 1].1 == ':' && chars[index - 2].1 == ':';
        if !is_name(c) || !starts_word || after_colons {
            continue;
        }
        let tail = &text[at..];
        let len = tail
            .find(|c: char| !(is_name(c) || c == ':'))
            .unwrap_or(tail.len());
        let path: Vec<String> = tail[..len]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if path.len() >= 2 {
            paths.extend(absolute(module, &path, modules));
        }
    }
    paths
}

/// The module an absolute path lands in: its longest module prefix, followed through
/// re-exports.
fn resolve(
    path: &[String],
    modules: &BTreeSet<ModPath>,
    reexports: &BTreeMap<(ModPath, String), ModPath>,
    depth: usize,
) -> Option<ModPath> {
    let cut = (0..=path.len())
        .rev()
        .find(|&n| modules.contains(&path[..n].to_vec()))?;
    let module = path[..cut].to_vec();
    if depth < 8
        && let Some(name) = path.get(cut)
        && let Some(target) = reexports.get(&(module.clone(), name.clone()))
        && target.as_slice() != path
    {
        let mut next = target.clone();
        next.extend(path[cut + 1..].iter().cloned());
        return resolve(&next, modules, reexports, depth + 1).or(Some(module));
    }
    Some(module)
}

/// The sibling graphs: for each parent, edges between its children (each its whole subtree).
fn sibling_graphs(graph: &Graph) -> BTreeMap<ModPath, BTreeSet<(String, String)>> {
    let mut out: BTreeMap<ModPath, BTreeSet<(String, String)>> = BTreeMap::new();
    for (from, to) in &graph.edges {
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue; // ancestor and descendant
        }
        out.entry(from[..common].to_vec())
            .or_default()
            .insert((from[common].clone(), to[common].clone()));
    }
    out
}

/// The strongly connected groups of more than one node (Tarjan), each sorted.
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        groups: Vec<Vec<String>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, node: &'a str) {
        let order = walk.index.len();
        walk.index.insert(node, order);
        walk.low.insert(node, order);
        walk.stack.push(node);
        walk.on_stack.insert(node);
        for &next in &walk.next.get(node).cloned().unwrap_or_default() {
            if !walk.index.contains_key(next) {
                visit(walk, next);
                let low = walk.low[node].min(walk.low[next]);
                walk.low.insert(node, low);
            } else if walk.on_stack.contains(next) {
                let low = walk.low[node].min(walk.index[next]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut group = Vec::new();
            while let Some(member) = walk.stack.pop() {
                walk.on_stack.remove(member);
                group.push(member.to_owned());
                if member == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                walk.groups.push(group);
            }
        }
    }
    let mut walk = Walk {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for (from, to) in edges {
        walk.next
            .entry(from.as_str())
            .or_default()
            .push(to.as_str());
    }
    let nodes: Vec<&str> = walk.next.keys().copied().collect();
    for node in nodes {
        if !walk.index.contains_key(node) {
            visit(&mut walk, node);
        }
    }
    walk.groups.sort();
    walk.groups
}

/// The cycles of one crate, as `(parent module, sorted siblings)`, with the edges inside each.
fn crate_cycles(sources: &Sources) -> Vec<(ModPath, Vec<String>, Vec<String>)> {
    let graph = graph(sources);
    let mut found = Vec::new();
    for (parent, edges) in sibling_graphs(&graph) {
        for group in cycles(&edges) {
            let inside: Vec<String> = edges
                .iter()
                .filter(|(a, b)| group.contains(a) && group.contains(b))
                .map(|(a, b)| format!("{a} -> {b}"))
                .collect();
            found.push((parent.clone(), group, inside));
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_cycle() {
    let crates = source_tree::workspace_root().join("crates");
    let mut report = String::new();
    let mut seen_known = BTreeSet::new();
    let mut checked = 0;
    let mut folders: Vec<_> = std::fs::read_dir(&crates)
        .expect("the crates folder")
        .map(|entry| entry.expect("a crate folder").path())
        .collect();
    folders.sort();
    for folder in folders {
        let src = folder.join("src");
        if !src.is_dir() {
            continue;
        }
        let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let mut sources = Sources::new();
        source_tree::files(&src, &src, &["rs"], &mut sources);
        let graph = graph(&sources);
        assert!(
            graph.edges.len() > 2 || graph.modules.len() < 4,
            "{name}: {} modules but only {} edges: the scanner is broken",
            graph.modules.len(),
            graph.edges.len()
        );
        checked += 1;
        for (parent, group, inside) in crate_cycles(&sources) {
            let known = KNOWN
                .iter()
                .any(|(c, members)| *c == name && parent.is_empty() && group == *members);
            if known {
                seen_known.insert(name.to_owned());
                continue;
            }
            let _ = writeln!(
                report,
                "{name}: cycle among the modules of `{}`: {}",
                if parent.is_empty() {
                    "crate".to_owned()
                } else {
                    parent.join("::")
                },
                inside.join(", ")
            );
        }
    }
    assert!(checked >= 5, "only {checked} crates found under {crates:?}");
    for (name, members) in KNOWN {
        if !seen_known.contains(*name) {
            let _ = writeln!(
                report,
                "{name}: the known cycle {members:?} is gone or changed: update KNOWN"
            );
        }
    }
    assert!(report.is_empty(), "import cycles:\n{report}");
}

fn fabricated(files: &[(&str, &str)]) -> Sources {
    files
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect()
}

#[test]
fn a_cycle_between_two_files_is_found() {
    let sources = fabricated(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        ("b.rs", "pub struct Thing;\nfn f() { crate::a::g(); }\n"),
    ]);
    let found = crate_cycles(&sources);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, ["a", "b"]);
    assert_eq!(found[0].2, ["a -> b", "b -> a"]);
}

#[test]
fn a_cycle_through_a_root_reexport_and_a_use_group_is_found() {
    let sources = fabricated(&[
        (
            "lib.rs",
            "mod a;\nmod b;\nmod c;\npub use c::{Deep as Renamed, Other};\n",
        ),
        ("a.rs", "use crate::{Renamed, b::{self, x::Y}};\n"),
        ("b.rs", "pub mod x;\n"),
        ("b/x.rs", "pub struct Y;\n"),
        (
            "c.rs",
            "use super::a::Z;\npub struct Deep;\npub struct Other;\n",
        ),
    ]);
    let found = crate_cycles(&sources);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, ["a", "c"]);
}

#[test]
fn a_folder_cycle_is_found_and_counted_between_the_folders_siblings() {
    let sources = fabricated(&[
        ("main.rs", "mod engine;\nmod loop_;\n"),
        ("engine/mod.rs", "mod core;\nmod idle;\n"),
        ("engine/core.rs", "use super::idle::Link;\n"),
        (
            "engine/idle.rs",
            "pub struct Link;\nimpl super::core::Core {}\nuse crate::loop_::L;\n",
        ),
        ("loop_.rs", "pub struct L(crate::engine::Engine);\n"),
    ]);
    let found = crate_cycles(&sources);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        (found[0].0.is_empty(), found[0].1.clone()),
        (true, vec!["engine".to_owned(), "loop_".to_owned()])
    );
    assert_eq!(found[1].0, ["engine"]);
    assert_eq!(found[1].1, ["core", "idle"]);
}

#[test]
fn a_child_using_its_parent_tests_strings_and_comments_are_no_cycle() {
    let sources = fabricated(&[
        ("lib.rs", "mod a;\nmod b;\npub struct Root;\n"),
        (
            "a/mod.rs",
            "mod child;\nuse child::Item;\n// crate::b::X in a comment\n\
             fn f() { let _ = ('\"', \"crate::b::X // a string\", r#\"crate::b\"#); }\n\
             #[cfg(test)]\nmod tests { use crate::b::X; }\n",
        ),
        (
            "a/child.rs",
            "use super::super::Root;\npub struct Item(super::Parent);\n",
        ),
        ("b.rs", "use crate::a::Thing;\npub struct X;\n"),
    ]);
    assert!(crate_cycles(&sources).is_empty());
    let graph = graph(&sources);
    let a = vec!["a".to_owned()];
    let b = vec!["b".to_owned()];
    assert!(graph.edges.contains(&(b.clone(), a.clone())));
    assert!(!graph.edges.contains(&(a, b)));
    // Without the test module, the comment and the strings, a -> b is an edge and a cycle.
    let plain = fabricated(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "fn f() { crate::b::X; }\n"),
        ("b.rs", "use crate::a::Thing;\n"),
    ]);
    assert_eq!(crate_cycles(&plain).len(), 1);
}
