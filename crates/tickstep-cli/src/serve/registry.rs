//! Who the players are and what waits for them: names mapped to durable object ids, and the
//! mailbox of firings that found their player offline ("a background session for player";
//! docs/serve.md §2.2, §4.5).
//!
//! Kept in a small `SQLite` file beside the schedule store (`FILE.world`), so a restart finds the
//! same ids for the same names — the schedules the store brings back are owned by those ids —
//! and the same undelivered mail. Names and mail are a few rows; each write is one statement.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension as _, params};
use tickstep::schedules::ObjId;

/// The first player's object id (ids below are the world's own objects).
const FIRST_PLAYER: i64 = 100;

/// The players and their mail.
pub(crate) struct Registry {
    db: Connection,
    path: PathBuf,
}

/// A failure of the world file, naming it.
#[derive(Debug, thiserror::Error)]
#[error("world file {} failed", path.display())]
pub(crate) struct RegistryError {
    path: PathBuf,
    #[source]
    source: rusqlite::Error,
}

impl Registry {
    /// Opens (creating) the world file beside `store`.
    pub(crate) fn open(store: &Path) -> Result<Registry, RegistryError> {
        let mut name = store.as_os_str().to_owned();
        name.push(".world");
        let path = PathBuf::from(name);
        let fail = |source| RegistryError {
            path: path.clone(),
            source,
        };
        let db = Connection::open(&path).map_err(fail)?;
        db.execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS players (
                 id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
             INSERT OR IGNORE INTO players (id, name) VALUES ({}, '');
             CREATE TABLE IF NOT EXISTS mail (
                 seq INTEGER PRIMARY KEY, player INTEGER NOT NULL, text TEXT NOT NULL);",
            FIRST_PLAYER - 1
        ))
        .map_err(fail)?;
        Ok(Registry { db, path })
    }

    fn fail(&self, source: rusqlite::Error) -> RegistryError {
        RegistryError {
            path: self.path.clone(),
            source,
        }
    }

    /// The player's id, registering the name the first time it is seen.
    pub(crate) fn id_for(&self, name: &str) -> Result<ObjId, RegistryError> {
        let found: Option<i64> = self
            .db
            .query_row("SELECT id FROM players WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.fail(e))?;
        if let Some(id) = found {
            return Ok(ObjId(id));
        }
        self.db
            .execute("INSERT INTO players (name) VALUES (?1)", [name])
            .map_err(|e| self.fail(e))?;
        Ok(ObjId(self.db.last_insert_rowid()))
    }

    /// Every registered player, id and name (the placeholder row excluded).
    pub(crate) fn players(&self) -> Result<Vec<(ObjId, String)>, RegistryError> {
        let mut statement = self
            .db
            .prepare("SELECT id, name FROM players WHERE id >= ?1 ORDER BY id")
            .map_err(|e| self.fail(e))?;
        let rows = statement
            .query_map([FIRST_PLAYER], |r| Ok((ObjId(r.get(0)?), r.get(1)?)))
            .map_err(|e| self.fail(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.fail(e))
    }

    /// Leaves `text` for an offline player.
    pub(crate) fn post(&self, player: ObjId, text: &str) -> Result<(), RegistryError> {
        self.db
            .execute(
                "INSERT INTO mail (player, text) VALUES (?1, ?2)",
                params![player.0, text],
            )
            .map(drop)
            .map_err(|e| self.fail(e))
    }

    /// Takes the player's mail, oldest first.
    pub(crate) fn take_mail(&self, player: ObjId) -> Result<Vec<String>, RegistryError> {
        let mut statement = self
            .db
            .prepare_cached("SELECT text FROM mail WHERE player = ?1 ORDER BY seq")
            .map_err(|e| self.fail(e))?;
        let mail = statement
            .query_map([player.0], |r| r.get(0))
            .map_err(|e| self.fail(e))?
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| self.fail(e))?;
        self.db
            .execute("DELETE FROM mail WHERE player = ?1", [player.0])
            .map_err(|e| self.fail(e))?;
        Ok(mail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_their_ids_and_mail_waits_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("w.db");
        let (alice, bob) = {
            let r = Registry::open(&store).unwrap();
            let alice = r.id_for("alice").unwrap();
            let bob = r.id_for("bob").unwrap();
            assert_eq!(r.id_for("alice").unwrap(), alice);
            r.post(bob, "one").unwrap();
            r.post(bob, "two").unwrap();
            (alice, bob)
        };
        let r = Registry::open(&store).unwrap();
        assert_eq!(alice, ObjId(FIRST_PLAYER));
        assert_eq!(r.id_for("bob").unwrap(), bob);
        assert_eq!(r.players().unwrap().len(), 2);
        assert_eq!(r.take_mail(bob).unwrap(), ["one", "two"]);
        assert!(r.take_mail(bob).unwrap().is_empty());
    }
}
