//! The players' names, read-only, for `tickstep dashboard` on a server's store (docs/serve.md
//! §13.13): the world file beside a `SQLite` store (`FILE.world`) or the players table in a
//! `PostgreSQL` store's database, read once a page the way the schedules' `Inspector` reads a
//! store — through `SQLite` with its read-only flag, or in a read-only session — so nothing is
//! created, migrated or written, and no file is opened any other way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OpenFlags};
use tickstep::dashboard::PrincipalNames;
use tickstep::schedules::{ObjId, display_location, is_server_location};

/// The names of the players of a server that kept its registry beside `store`: `None` for a
/// file with no world file beside it (no server ran on it).
pub(crate) fn beside(store: &Path) -> Option<Arc<dyn PrincipalNames>> {
    if is_server_location(store) {
        return Some(Arc::new(DatabaseNames {
            url: store.to_string_lossy().into_owned(),
        }));
    }
    let world = super::world_path(store);
    // A stat, not an open: whether a server ever kept players here.
    world
        .exists()
        .then(|| Arc::new(WorldFileNames { path: world }) as Arc<dyn PrincipalNames>)
}

/// Players kept in a world file.
#[derive(Debug)]
struct WorldFileNames {
    path: PathBuf,
}

impl PrincipalNames for WorldFileNames {
    fn names(&self) -> Result<Vec<(ObjId, String)>, String> {
        let fail = |e: rusqlite::Error| format!("{}: {e}", self.path.display());
        // Read-only, and no waiting: a running server holds its world file exclusively
        // (docs/serve.md §12.4), and then the page shows `#N` rather than wait for it.
        let db = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(fail)?;
        // Read with `read` calls, as the server reads it (docs/serve.md §12.4). Exclusive
        // locking, which keeps the server's WAL index in its heap, cannot be had read-only:
        // like every WAL reader this one makes `FILE.world-shm` (and an empty `-wal`) while no
        // server has the file, which the next server, exclusive from its first read, ignores.
        db.execute_batch("PRAGMA mmap_size = 0;").map_err(fail)?;
        let mut stmt = db
            .prepare("SELECT id, name FROM players WHERE name <> '' ORDER BY id")
            .map_err(fail)?;
        let rows = stmt
            .query_map([], |r| Ok((ObjId(r.get(0)?), r.get(1)?)))
            .map_err(fail)?;
        rows.collect::<Result<_, _>>().map_err(fail)
    }
}

/// Players kept in a `PostgreSQL` store's database.
struct DatabaseNames {
    url: String,
}

impl std::fmt::Debug for DatabaseNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("DatabaseNames")
            .field("url", &display_location(Path::new(&self.url)))
            .finish()
    }
}

impl PrincipalNames for DatabaseNames {
    fn names(&self) -> Result<Vec<(ObjId, String)>, String> {
        let shown = display_location(Path::new(&self.url));
        let fail = |e: postgres::Error| format!("{shown}: {e}");
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).map_err(fail)?;
        client
            .batch_execute("SET default_transaction_read_only = on")
            .map_err(fail)?;
        // A database no server ran on has no players table: no names.
        let kept: bool = client
            .query_one(
                "SELECT to_regclass('tickstep_serve_players') IS NOT NULL",
                &[],
            )
            .map_err(fail)?
            .get(0);
        if !kept {
            return Ok(Vec::new());
        }
        let rows = client
            .query(
                "SELECT id, name FROM tickstep_serve_players WHERE name <> '' ORDER BY id",
                &[],
            )
            .map_err(fail)?;
        Ok(rows.iter().map(|r| (ObjId(r.get(0)), r.get(1))).collect())
    }
}
