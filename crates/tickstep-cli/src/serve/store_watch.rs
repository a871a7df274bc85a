//! The store is watched while the server runs (docs/serve.md §12).
//!
//! `SQLite` keeps working on a file that was deleted or replaced under it — its open descriptor
//! still points at the old inode — so commits would go on "succeeding" into a file nobody will
//! open again, and a restart would find nothing. Once a second the watch looks at the store file
//! and the world file beside it, with their WAL files: each must still be there, be the same file (device and inode)
//! as at the start, and open for writing, and a database file must not have shrunk (in WAL mode
//! it never does while the server runs). The first time one is not, the server is told
//! ([`Server::store_lost`](super::world::Server::store_lost)): it logs, tells the wizards, refuses
//! new schedules, and at its stop does not claim the store is committed. A `postgres://` store
//! is looked at through the registry's connection instead ([`watch_database`]): the connection
//! must be open and the tables there and writable.

use std::cell::Cell;
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
    /// For a database file, the largest size seen: a database in WAL mode only grows while the
    /// server has it open (checkpoints write pages back; nothing vacuums it), so a smaller size
    /// means another process truncated it (docs/serve.md §12.5). `None` for a `-wal` or `-shm`
    /// file, which checkpoints may reset.
    largest: Option<Cell<u64>>,
}

impl Watched {
    /// Notes `path`'s identity now; `None` when it cannot be read (nothing to compare with).
    pub(crate) fn new(path: &Path) -> Option<Watched> {
        Some(Watched {
            path: path.to_owned(),
            identity: identity(path).ok()?,
            largest: None,
        })
    }

    /// As [`Watched::new`], for a database file, which must also never shrink.
    pub(crate) fn database(path: &Path) -> Option<Watched> {
        let len = std::fs::metadata(path).ok()?.len();
        Some(Watched {
            largest: Some(Cell::new(len)),
            ..Watched::new(path)?
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
        if let Some(largest) = &self.largest {
            let len = std::fs::metadata(&self.path).map_or(0, |meta| meta.len());
            if len < largest.get() {
                return Err(format!(
                    "the store file {shown} was truncated while serving ({} bytes, {len} now)",
                    largest.get()
                ));
            }
            largest.set(len);
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

/// Looks at the store's database once every [`EVERY`] until a check fails or the server is
/// gone (docs/serve.md §12.6): the same report, refusal and stop as for a file.
pub(crate) async fn watch_database(server: Weak<Server>) {
    let mut ticks = tokio::time::interval(EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(server) = server.upgrade() else {
            return;
        };
        if let Err(why) = server.check_database().await {
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

    #[test]
    fn a_database_that_grows_passes_and_one_that_shrinks_is_named_truncated() {
        // docs/serve.md §12.5
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        std::fs::write(&path, [0_u8; 4096]).unwrap();
        let watched = Watched::database(&path).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(8192).unwrap();
        assert_eq!(watched.check(), Ok(()), "grown");
        file.set_len(4096).unwrap();
        let truncated = watched.check().unwrap_err();
        assert!(
            truncated.ends_with("was truncated while serving (8192 bytes, 4096 now)"),
            "{truncated}"
        );
        // A WAL file may be reset by a checkpoint: only its identity is watched.
        let wal = Watched::new(&path).unwrap();
        file.set_len(0).unwrap();
        assert_eq!(wal.check(), Ok(()));
    }
}
