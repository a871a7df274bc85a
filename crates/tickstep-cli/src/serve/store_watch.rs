//! The store is watched while the server runs (docs/serve.md §12).
//!
//! `SQLite` keeps working on a file that was deleted or replaced under it — its open descriptor
//! still points at the old inode — so commits would go on "succeeding" into a file nobody will
//! open again, and a restart would find nothing. Once a second the watch looks at the store file
//! and the world file beside it, with their WAL files: each must still be there, be the same file
//! (device and inode) as at the start, and be writable by this process, and a database file must
//! not have shrunk (in WAL mode it never does while the server runs).
//!
//! It looks without a descriptor: `stat` and `access`, never `open`. These are `SQLite`'s files,
//! and on POSIX closing any descriptor of a file drops every `fcntl` lock the process holds on
//! it, `SQLite`'s included; an operator's connection beside the server then took itself for the
//! last one and deleted the WAL the server was writing into (docs/serve.md §12.7). The first time
//! a check fails, the server is told
//! ([`Server::store_lost`](super::server::Server::store_lost)): it logs, tells the wizards, refuses
//! new schedules, and at its stop does not claim the store is committed. A `postgres://` store
//! is looked at through the registry's connection instead ([`Watching::Database`]): the connection
//! must be open and the tables there and writable.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Weak;
use std::time::Duration;

use super::server::Server;

/// How often the files are looked at: a `stat` and an `access` of each, no descriptor.
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

    /// Whether the file is still the one noted, and writable; otherwise why not, in words. Asks
    /// the file system about the path and never opens it (docs/serve.md §12.7).
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
        writable(&self.path)
            .map_err(|error| format!("the store file {shown} is no longer writable: {error}"))
    }
}

/// Whether this process may write `path`, as `access(2)` answers: permissions, a read-only file
/// system, an immutable file. No descriptor is opened (docs/serve.md §12.7).
#[cfg(unix)]
fn writable(path: &Path) -> std::io::Result<()> {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(std::io::Error::from)
}

#[cfg(not(unix))]
fn writable(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.permissions().readonly() {
        return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
    }
    Ok(())
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

/// What the watch looks at: the store's files, or (a `postgres://` store) its database through
/// the registry's connection (docs/serve.md §12.6).
pub(crate) enum Watching {
    Files(Vec<Watched>),
    Database,
}

impl Watching {
    async fn check(&self, server: &Server) -> Result<(), String> {
        match self {
            Watching::Files(files) => files.iter().try_for_each(Watched::check),
            Watching::Database => server.presence.check_database().await,
        }
    }
}

/// Looks once every [`EVERY`] until a check fails or the server is gone; a failure is reported
/// once, with the same report, refusal and stop for a file and for a database.
pub(crate) async fn watch(watching: Watching, server: Weak<Server>) {
    let mut ticks = tokio::time::interval(EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(server) = server.upgrade() else {
            return;
        };
        if let Err(why) = watching.check(&server).await {
            server.store_lost(&why);
            return;
        }
    }
}
