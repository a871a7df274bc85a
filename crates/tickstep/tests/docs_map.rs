//! The folder map in docs/README.md ("Map of the folders") names every source folder and file of
//! every crate, so a newcomer finds each room from it (issue 35; docs/README.md).
//!
//! The map is written for people: a crate's section starts at a line naming `crates/<crate>/`
//! and runs to the next line that starts at the margin; inside it files are named by their stem,
//! alone or in lists (`handle, config, core`), with or without `.rs`. The test walks each crate's
//! `src/` and checks that every folder and every file's stem appears as a whole word in that
//! crate's section. `lib.rs`, `main.rs` and `mod.rs` are the folder itself and need no entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the workspace root")
        .to_path_buf()
}

/// The map's sections by crate folder name (`tickstep-kernel`): the text of each.
fn sections(readme: &str) -> BTreeMap<String, String> {
    let start = readme
        .find("## Map of the folders")
        .expect("docs/README.md has a map of the folders");
    let block = &readme[start..];
    let block = &block[block.find("```").expect("the map is a code block") + 3..];
    let block = &block[..block.find("```").expect("the map's block ends")];
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in block.lines() {
        if line.starts_with(char::is_whitespace) || line.is_empty() {
            if let Some(name) = &current {
                out.entry(name.clone()).or_default().push_str(line);
                out.entry(name.clone()).or_default().push('\n');
            }
            continue;
        }
        current = line
            .strip_prefix("crates/")
            .and_then(|rest| rest.split('/').next())
            .map(str::to_owned);
        if let Some(name) = &current {
            out.entry(name.clone()).or_default().push_str(line);
            out.entry(name.clone()).or_default().push('\n');
        }
    }
    out
}

/// Whether `word` appears in `text` with no letter, digit or `_` on either side.
fn names(text: &str, word: &str) -> bool {
    let inside = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(inside) && !after.is_some_and(inside)
    })
}

/// Every folder and file under `dir`, relative to it.
fn walk(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, bool)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = rel.join(path.file_name().unwrap());
        if path.is_dir() {
            out.push((name.clone(), true));
            walk(&path, &name, out);
        } else {
            out.push((name, false));
        }
    }
}

#[test]
fn the_folder_map_names_every_source_folder_and_file() {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("docs/README.md")).unwrap();
    let sections = sections(&readme);
    let mut missing = Vec::new();
    let mut crates: Vec<_> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    for krate in crates {
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        let Some(section) = sections.get(&name) else {
            missing.push(format!("crates/{name}/ (no section)"));
            continue;
        };
        let mut entries = Vec::new();
        walk(&krate.join("src"), Path::new(""), &mut entries);
        for (path, is_dir) in entries {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            if !is_dir && matches!(file.as_str(), "lib.rs" | "main.rs" | "mod.rs") {
                continue;
            }
            let stem = if is_dir {
                file.clone()
            } else {
                file.split('.').next().unwrap_or(&file).to_owned()
            };
            if !names(section, &stem) {
                missing.push(format!("crates/{name}/src/{}", path.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/README.md's map of the folders does not name {} source entries:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn names_matches_whole_words_only() {
    assert!(names("handle, config, core", "core"));
    assert!(!names("the host core_x", "core"));
    assert!(!names("scorer", "core"));
    assert!(names("src/engine/", "engine"));
}
