//! The registry of a server on a `SQLite` store: a small `SQLite` file beside it (`FILE.world`).
//!
//! Names are a few rows, each write one statement. Mail is queued in memory and written in one
//! transaction between frames ([`FileRegistry::flush_mail`], docs/serve.md §4.6); reading a
//! mailbox, and dropping the registry, write the queue first. A file has one server, so nothing
//! here is shared with another node.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension as _, params};
use tickstep::schedules::ObjId;

use super::{Account, FIRST_PLAYER, MAILBOX_CAP, MAILBOX_FULL, RegistryError, schema};

/// The players and their mail, in a file.
pub(crate) struct FileRegistry {
    db: Connection,
    path: PathBuf,
    /// Mail posted and not written yet, in posting order.
    unwritten: RefCell<Vec<(ObjId, String)>>,
}

impl FileRegistry {
    /// Opens (creating) the world file beside `store`.
    pub(crate) fn open(store: &Path) -> Result<FileRegistry, RegistryError> {
        let path = super::world_path(store);
        let fail = |source| RegistryError::File {
            path: path.clone(),
            source,
        };
        let mut db = Connection::open(&path).map_err(fail)?;
        // One connection, the server's: locked exclusively before WAL is on, SQLite keeps the WAL
        // index in the heap and makes no `-shm` file to map, so nothing done to the world's files
        // can end the process with SIGBUS; `mmap_size = 0` reads the file with `read` calls
        // (docs/serve.md §12.4).
        db.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE;
             PRAGMA mmap_size = 0;
             PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;",
        )
        .map_err(fail)?;
        // The tables, by version (docs/serve.md §10.13): a file from before accounts gains their
        // columns, its players with no password until their next login sets one (docs/serve.md §10.3).
        if let Err(source) = schema::migrate_file(&mut db).map_err(fail)? {
            return Err(RegistryError::TooNew {
                at: path.display().to_string(),
                source,
            });
        }
        Ok(FileRegistry {
            db,
            path,
            unwritten: RefCell::new(Vec::new()),
        })
    }

    fn fail(&self, source: rusqlite::Error) -> RegistryError {
        RegistryError::File {
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

    /// The account under `name`, if there is one.
    pub(crate) fn account(&self, name: &str) -> Result<Option<Account>, RegistryError> {
        self.db
            .query_row(
                "SELECT id, hash, wizard FROM players WHERE name = ?1",
                [name],
                |r| {
                    Ok(Account {
                        id: ObjId(r.get(0)?),
                        hash: r.get(1)?,
                        wizard: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.fail(e))
    }

    /// Registers `name` with a password's hash: its new id, or `None` when the name is taken.
    pub(crate) fn register(&self, name: &str, hash: &str) -> Result<Option<ObjId>, RegistryError> {
        let added = self
            .db
            .execute(
                "INSERT INTO players (name, hash) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
                [name, hash],
            )
            .map_err(|e| self.fail(e))?;
        Ok((added == 1).then(|| ObjId(self.db.last_insert_rowid())))
    }

    /// Sets `player`'s password hash.
    pub(crate) fn set_hash(&self, player: ObjId, hash: &str) -> Result<(), RegistryError> {
        self.db
            .execute(
                "UPDATE players SET hash = ?2 WHERE id = ?1",
                params![player.0, hash],
            )
            .map(drop)
            .map_err(|e| self.fail(e))
    }

    /// Sets `player`'s first password hash: false when it has one already.
    pub(crate) fn claim(&self, player: ObjId, hash: &str) -> Result<bool, RegistryError> {
        self.db
            .execute(
                "UPDATE players SET hash = ?2 WHERE id = ?1 AND hash IS NULL",
                params![player.0, hash],
            )
            .map(|changed| changed == 1)
            .map_err(|e| self.fail(e))
    }

    /// Makes `player` a wizard.
    pub(crate) fn set_wizard(&self, player: ObjId) -> Result<(), RegistryError> {
        self.db
            .execute("UPDATE players SET wizard = 1 WHERE id = ?1", [player.0])
            .map(drop)
            .map_err(|e| self.fail(e))
    }

    /// The wizards' ids.
    pub(crate) fn wizards(&self) -> Result<Vec<ObjId>, RegistryError> {
        let mut statement = self
            .db
            .prepare("SELECT id FROM players WHERE wizard <> 0 ORDER BY id")
            .map_err(|e| self.fail(e))?;
        let rows = statement
            .query_map([], |r| Ok(ObjId(r.get(0)?)))
            .map_err(|e| self.fail(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.fail(e))
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

    /// Queues `text` for `player`'s mailbox; [`flush_mail`](Self::flush_mail) writes it.
    pub(crate) fn post(&self, player: ObjId, text: String) {
        self.unwritten.borrow_mut().push((player, text));
    }

    /// Writes the queued mail in one transaction (one WAL append however many firings posted).
    /// A mailbox keeps at most [`MAILBOX_CAP`] lines, the last of them the note that it is full;
    /// later lines are not kept (docs/serve.md §11.5). On failure the mail stays queued for the
    /// next flush.
    pub(crate) fn flush_mail(&self) -> Result<(), RegistryError> {
        if self.unwritten.borrow().is_empty() {
            return Ok(());
        }
        let txn = self.db.unchecked_transaction().map_err(|e| self.fail(e))?;
        {
            let mut held = std::collections::HashMap::new();
            let mut count = txn
                .prepare_cached("SELECT count(*) FROM mail WHERE player = ?1")
                .map_err(|e| self.fail(e))?;
            let mut insert = txn
                .prepare_cached("INSERT INTO mail (player, text) VALUES (?1, ?2)")
                .map_err(|e| self.fail(e))?;
            for (player, text) in self.unwritten.borrow().iter() {
                if !held.contains_key(player) {
                    let stored: i64 = count
                        .query_row([player.0], |r| r.get(0))
                        .map_err(|e| self.fail(e))?;
                    held.insert(*player, usize::try_from(stored).unwrap_or(usize::MAX));
                }
                let lines = held.get_mut(player).expect("inserted above");
                let kept = match (*lines + 1).cmp(&MAILBOX_CAP) {
                    std::cmp::Ordering::Less => text.as_str(),
                    std::cmp::Ordering::Equal => MAILBOX_FULL,
                    std::cmp::Ordering::Greater => continue,
                };
                insert
                    .execute(params![player.0, kept])
                    .map_err(|e| self.fail(e))?;
                *lines += 1;
            }
        }
        txn.commit().map_err(|e| self.fail(e))?;
        self.unwritten.borrow_mut().clear();
        Ok(())
    }

    pub(crate) fn take_mail(&self, player: ObjId) -> Result<Vec<String>, RegistryError> {
        self.flush_mail()?;
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

impl Drop for FileRegistry {
    /// A server that stops writes the mail of its last frames.
    fn drop(&mut self) {
        if let Err(error) = self.flush_mail() {
            eprintln!(
                "tickstep serve: undelivered mail lost: {}",
                tickstep::kernel::ErrorChain(&error)
            );
        }
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
            let r = FileRegistry::open(&store).unwrap();
            let alice = r.id_for("alice").unwrap();
            let bob = r.id_for("bob").unwrap();
            assert_eq!(r.id_for("alice").unwrap(), alice);
            r.post(bob, "one".to_owned());
            r.flush_mail().unwrap();
            r.post(bob, "two".to_owned()); // written when the registry is dropped
            (alice, bob)
        };
        let r = FileRegistry::open(&store).unwrap();
        assert_eq!(alice, ObjId(FIRST_PLAYER));
        assert_eq!(r.id_for("bob").unwrap(), bob);
        assert_eq!(r.players().unwrap().len(), 2);
        assert_eq!(r.take_mail(bob).unwrap(), ["one", "two"]);
        assert!(r.take_mail(bob).unwrap().is_empty());
    }

    #[test]
    fn a_name_is_registered_once_with_its_hash_and_a_wizard_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let r = FileRegistry::open(&dir.path().join("w.db")).unwrap();
        let alice = r.register("alice", "$h1").unwrap().expect("a new name");
        assert_eq!(r.register("alice", "$h2").unwrap(), None, "taken");
        let account = r.account("alice").unwrap().unwrap();
        assert_eq!(
            (account.id, account.hash.as_deref(), account.wizard),
            (alice, Some("$h1"), false)
        );
        r.set_wizard(alice).unwrap();
        r.set_hash(alice, "$h3").unwrap();
        assert!(
            !r.claim(alice, "$h4").unwrap(),
            "a password is claimed once"
        );
        // A name from before accounts has its first password claimed once (docs/serve.md §10.3).
        let old = r.id_for("oldtimer").unwrap();
        assert!(r.claim(old, "$h5").unwrap());
        assert!(!r.claim(old, "$h6").unwrap());
        let account = r.account("oldtimer").unwrap().unwrap();
        assert_eq!(account.hash.as_deref(), Some("$h5"));
        assert_eq!(r.wizards().unwrap(), [alice]);
        assert_eq!(
            r.account("alice").unwrap().unwrap().hash.as_deref(),
            Some("$h3")
        );
        assert!(r.account("bob").unwrap().is_none());
    }

    #[test]
    fn a_full_mailbox_keeps_a_note_and_drops_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let r = FileRegistry::open(&dir.path().join("w.db")).unwrap();
        let bob = r.id_for("bob").unwrap();
        for n in 0..MAILBOX_CAP - 10 {
            r.post(bob, format!("m{n}"));
        }
        r.flush_mail().unwrap();
        for n in 0..50 {
            r.post(bob, format!("late{n}")); // a second flush counts what is stored
        }
        r.flush_mail().unwrap();
        let mail = r.take_mail(bob).unwrap();
        assert_eq!(mail.len(), MAILBOX_CAP);
        assert_eq!(mail[MAILBOX_CAP - 2], "late8");
        assert_eq!(mail.last().map(String::as_str), Some(MAILBOX_FULL));
        r.post(bob, "after reading".to_owned());
        assert_eq!(r.take_mail(bob).unwrap(), ["after reading"], "room again");
    }

    #[test]
    fn queued_mail_is_read_in_posting_order_before_and_after_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let r = FileRegistry::open(&dir.path().join("w.db")).unwrap();
        let bob = r.id_for("bob").unwrap();
        let carol = r.id_for("carol").unwrap();
        for n in 0..160 {
            r.post(if n % 2 == 0 { bob } else { carol }, format!("m{n}"));
        }
        r.flush_mail().unwrap();
        r.post(bob, "late".to_owned()); // still queued: take_mail writes it first
        let mail = r.take_mail(bob).unwrap();
        assert_eq!(mail.len(), 81);
        assert_eq!(mail.first().map(String::as_str), Some("m0"));
        assert_eq!(mail.last().map(String::as_str), Some("late"));
        assert_eq!(r.take_mail(carol).unwrap().len(), 80);
    }
}
