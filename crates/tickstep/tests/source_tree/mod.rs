//! The workspace's own files as text, for the tests that check the tree itself (rule citations,
//! import cycles): one walker, so both read the same files the same way.

use std::path::{Path, PathBuf};

/// The workspace root: `crates/tickstep` sits two levels below it.
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/tickstep sits two levels below the workspace root")
        .to_path_buf()
}

/// Every file under `dir` whose extension is one of `extensions`, as (path relative to `root`
/// with `/` separators, text), in path order; `target/` and hidden folders are skipped.
pub(crate) fn files(root: &Path, dir: &Path, extensions: &[&str], out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files(root, &path, extensions, out);
            }
        } else if path
            .extension()
            .and_then(|ext| ext.to_str())
            .is_some_and(|ext| extensions.contains(&ext))
        {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let relative = path.strip_prefix(root).unwrap_or(&path);
            out.push((relative.to_string_lossy().replace('\\', "/"), text));
        }
    }
}
