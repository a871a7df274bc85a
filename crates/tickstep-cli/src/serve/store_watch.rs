//! The store is watched while the server runs (docs/serve.md §12).
//!
//! `SQLite` keeps working on a file that was deleted or replaced under it — its open descriptor
//! still points at the old inode — so commits would go on "succeeding" into a file nobody will
//! open again, and a restart would find nothing. Once a second the watch looks at the store file
//! and the world file beside it, with their WAL files: each must still be there, be the same file (device and inode)
//! as at the start, and open for writing. The first time one is not, the server is told
//! ([`Server::store_lost`](super::world::Server::store_lost)): it logs, tells the wizards, refuses
//! new schedules, and at its stop does not claim the store is committed. A `postgres://` store
//! is not a file: its failures come back from the database itself.

use std::path::{Path, PathBuf};
use std::rc::Weak;
use std::time::Duration;

use super::world::Server;

/// How often the files are looked at: a `stat` and an `open` of each.
const EVERY: Duration = Duration::from_secs(1);

/// A file as it was at the start.
#[derive(Debug)]
pub(crate) struct Watched {
    path: PathBuf,
    identity: (u64, u64),
}

impl Watched {
    /// Notes `path`'s identity now; `None` when it cannot be read (nothing to compare with).
    pub(crate) fn new(path: &Path) -> Option<Watched> {
        Some(Watched {
            path: path.to_owned(),
            identity: identity(path).ok()?,
        })
    }

    /// Whether the file is still the one noted, and writable; otherwise why not, in words.
    pub(crate) fn check(&self) -> Result<(), String> {
        let shown = self.path.display();
        match identity(&self.path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("the store file {shown} was deleted while serving"));
            }
            Err(error) => return Err(format!("the store file {shown} cannot be read: {error}")),
            Ok(now) if now != self.identity => {
                return Err(format!("the store file {shown} was replaced while serving"));
            }
            Ok(_) => {}
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map(drop)
            .map_err(|error| format!("the store file {shown} is no longer writable: {error}"))
    }
}

#[cfg(unix)]
fn identity(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> std::io::Result<(u64, u64)> {
    // No inode to compare: a replaced file looks the same; a deleted one is still seen.
    std::fs::metadata(path).map(|meta| (meta.len().min(0), 0))
}

/// Looks at `files` once every [`EVERY`] until one fails or the server is gone.
pub(crate) async fn watch(files: Vec<Watched>, server: Weak<Server>) {
    let mut ticks = tokio::time::interval(EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(server) = server.upgrade() else {
            return;
        };
        if let Some(why) = files.iter().find_map(|file| file.check().err()) {
            server.store_lost(why);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_or_replaced_file_is_named_and_an_intact_one_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        std::fs::write(&path, b"x").unwrap();
        let watched = Watched::new(&path).unwrap();
        assert_eq!(watched.check(), Ok(()));
        std::fs::write(&path, b"rewritten in place").unwrap();
        assert_eq!(watched.check(), Ok(()), "the same file, written to");

        let other = dir.path().join("other");
        std::fs::write(&other, b"y").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let replaced = watched.check().unwrap_err();
        assert!(
            replaced.ends_with("was replaced while serving"),
            "{replaced}"
        );

        std::fs::remove_file(&path).unwrap();
        let deleted = watched.check().unwrap_err();
        assert!(deleted.ends_with("was deleted while serving"), "{deleted}");
    }
}
