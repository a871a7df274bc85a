//! The registry of a server on a `PostgreSQL` store: two tables in the same database, shared by
//! every server node on it (docs/serve.md §6).
//!
//! The server's thread runs tokio, so this speaks `tokio-postgres` (the asynchronous client the
//! store's synchronous one is built on, so it adds no crate to the build): a query is awaited by
//! the connection's own task and never blocks a frame. The connection is driven by a local task
//! that also passes on the two notification channels every node listens to:
//!
//! * `tickstep_serve_mail` (payload: a player id) — mail was written for that player; the node
//!   where they are connected takes it and shows it at once (docs/serve.md §6.3);
//! * `tickstep_serve_players` (payload: `id name`) — a name was registered on some node; every
//!   node adds the player to its world, so a schedule that targets them stays valid when another
//!   node takes it over (docs/serve.md §6.2).
//!
//! Mail posted inside a frame is queued and written after the frame by one statement (an
//! `INSERT … SELECT FROM unnest(…)` whose rows take their sequence numbers in posting order, and
//! a `pg_notify` per player in the same statement). One write runs at a time, behind a lock that
//! reading a mailbox takes too, so mail is read in the order it was posted.

use std::cell::RefCell;
use std::rc::Rc;

use tickstep::schedules::{ObjId, display_location};
use tokio::sync::{Mutex, mpsc};
use tokio_postgres::{AsyncMessage, Client, NoTls};

use super::{
    Account, Event, MAIL_CHANNEL, MAILBOX_CAP, MAILBOX_FULL, PLAYERS_CHANNEL, RegistryError, schema,
};

/// A registered name's id.
const PLAYER_ID: &str = "SELECT id FROM tickstep_serve_players WHERE name = $1";

/// The tables a node writes, looked at by [`DatabaseRegistry::check`]: the store's schedules,
/// nodes and operator stops (docs/schedules.md §11.13), and the registry's two.
const WATCHED_TABLES: [&str; 5] = [
    "tickstep_schedules",
    "tickstep_nodes",
    "tickstep_operator_stops",
    "tickstep_serve_players",
    "tickstep_serve_mail",
];

/// Serialises the tables' migrations across nodes opening a database at once (an arbitrary key,
/// "TSSV").
const CREATE_LOCK: i64 = 0x5453_5356;

/// The players and their mail, in the store's database.
pub(crate) struct DatabaseRegistry {
    inner: Rc<Inner>,
}

struct Inner {
    client: Client,
    /// The URL as it may be printed (no password).
    shown: String,
    /// Mail posted and not written yet, in posting order.
    unwritten: RefCell<Vec<(ObjId, String)>>,
    /// Held by the one write in progress, and by a mailbox read.
    writing: Mutex<()>,
}

impl DatabaseRegistry {
    /// Connects, migrates the tables to this build's version, listens on both channels, and
    /// returns the registry with the stream of what other nodes announce.
    pub(crate) async fn open(
        url: &str,
    ) -> Result<(DatabaseRegistry, mpsc::UnboundedReceiver<Event>), RegistryError> {
        let shown = display_location(std::path::Path::new(url));
        let fail = |source| RegistryError::Database {
            url: shown.clone(),
            source,
        };
        let (mut client, mut connection) =
            tokio_postgres::connect(url, NoTls).await.map_err(fail)?;
        let (events, announced) = mpsc::unbounded_channel();
        let label = shown.clone();
        tokio::task::spawn_local(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(note))) => {
                        if let Some(event) = Event::parse(note.channel(), note.payload()) {
                            let _ = events.send(event);
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(error)) => {
                        eprintln!("tickstep serve: the world database {label} failed: {error}");
                        break;
                    }
                    None => break,
                }
            }
        });
        let create = client.transaction().await.map_err(fail)?;
        // The tables, by version (docs/serve.md §10.13), one node at a time.
        create
            .batch_execute(&format!("SELECT pg_advisory_xact_lock({CREATE_LOCK})"))
            .await
            .map_err(fail)?;
        if let Err(source) = schema::migrate_database(&create).await.map_err(fail)? {
            return Err(RegistryError::TooNew { at: shown, source });
        }
        create.commit().await.map_err(fail)?;
        client
            .batch_execute(&format!("LISTEN {MAIL_CHANNEL}; LISTEN {PLAYERS_CHANNEL};"))
            .await
            .map_err(fail)?;
        let inner = Rc::new(Inner {
            client,
            shown,
            unwritten: RefCell::new(Vec::new()),
            writing: Mutex::new(()),
        });
        Ok((DatabaseRegistry { inner }, announced))
    }

    /// The player's id, registering the name the first time any node sees it (and telling every
    /// node so). A known name costs one read and writes nothing (an insert that conflicts would
    /// still use up an id); a new one is inserted and announced in one statement.
    pub(crate) async fn id_for(&self, name: &str) -> Result<ObjId, RegistryError> {
        let inner = &self.inner;
        let known = inner
            .client
            .query_opt(PLAYER_ID, &[&name])
            .await
            .map_err(|e| inner.fail(e))?;
        if let Some(row) = known {
            return Ok(ObjId(row.get(0)));
        }
        let inserted = inner
            .client
            .query_opt(
                "WITH added AS (
                     INSERT INTO tickstep_serve_players (name) VALUES ($1)
                     ON CONFLICT (name) DO NOTHING RETURNING id)
                 SELECT id, pg_notify($2, id || ' ' || $1) FROM added",
                &[&name, &PLAYERS_CHANNEL],
            )
            .await
            .map_err(|e| inner.fail(e))?;
        // No row: another node registered the name between the read and the insert.
        let row = match inserted {
            Some(row) => row,
            None => inner
                .client
                .query_one(PLAYER_ID, &[&name])
                .await
                .map_err(|e| inner.fail(e))?,
        };
        Ok(ObjId(row.get(0)))
    }

    /// The account under `name`, if there is one.
    pub(crate) async fn account(&self, name: &str) -> Result<Option<Account>, RegistryError> {
        let inner = &self.inner;
        let row = inner
            .client
            .query_opt(
                "SELECT id, hash, wizard FROM tickstep_serve_players WHERE name = $1",
                &[&name],
            )
            .await
            .map_err(|e| inner.fail(e))?;
        Ok(row.map(|r| Account {
            id: ObjId(r.get(0)),
            hash: r.get(1),
            wizard: r.get(2),
        }))
    }

    /// Registers `name` with its password's hash and announces it to every node: the new id, or
    /// `None` when any node has the name already.
    pub(crate) async fn register(
        &self,
        name: &str,
        hash: &str,
    ) -> Result<Option<ObjId>, RegistryError> {
        let inner = &self.inner;
        let row = inner
            .client
            .query_opt(
                "WITH added AS (
                     INSERT INTO tickstep_serve_players (name, hash) VALUES ($1, $2)
                     ON CONFLICT (name) DO NOTHING RETURNING id)
                 SELECT id, pg_notify($3, id || ' ' || $1) FROM added",
                &[&name, &hash, &PLAYERS_CHANNEL],
            )
            .await
            .map_err(|e| inner.fail(e))?;
        Ok(row.map(|r| ObjId(r.get(0))))
    }

    /// Sets `player`'s password hash.
    pub(crate) async fn set_hash(&self, player: ObjId, hash: &str) -> Result<(), RegistryError> {
        let inner = &self.inner;
        inner
            .client
            .execute(
                "UPDATE tickstep_serve_players SET hash = $2 WHERE id = $1",
                &[&player.0, &hash],
            )
            .await
            .map(drop)
            .map_err(|e| inner.fail(e))
    }

    /// Sets `player`'s first password hash: false when it has one already (on any node).
    pub(crate) async fn claim(&self, player: ObjId, hash: &str) -> Result<bool, RegistryError> {
        let inner = &self.inner;
        inner
            .client
            .execute(
                "UPDATE tickstep_serve_players SET hash = $2 WHERE id = $1 AND hash IS NULL",
                &[&player.0, &hash],
            )
            .await
            .map(|changed| changed == 1)
            .map_err(|e| inner.fail(e))
    }

    /// Makes `player` a wizard, on every node (each reads the role at login).
    pub(crate) async fn set_wizard(&self, player: ObjId) -> Result<(), RegistryError> {
        let inner = &self.inner;
        inner
            .client
            .execute(
                "UPDATE tickstep_serve_players SET wizard = true WHERE id = $1",
                &[&player.0],
            )
            .await
            .map(drop)
            .map_err(|e| inner.fail(e))
    }

    /// The wizards' ids.
    pub(crate) async fn wizards(&self) -> Result<Vec<ObjId>, RegistryError> {
        let inner = &self.inner;
        let rows = inner
            .client
            .query(
                "SELECT id FROM tickstep_serve_players WHERE wizard ORDER BY id",
                &[],
            )
            .await
            .map_err(|e| inner.fail(e))?;
        Ok(rows.iter().map(|r| ObjId(r.get(0))).collect())
    }

    /// Every registered player, id and name.
    pub(crate) async fn players(&self) -> Result<Vec<(ObjId, String)>, RegistryError> {
        let rows = self
            .inner
            .client
            .query(
                "SELECT id, name FROM tickstep_serve_players ORDER BY id",
                &[],
            )
            .await
            .map_err(|e| self.inner.fail(e))?;
        Ok(rows.iter().map(|r| (ObjId(r.get(0)), r.get(1))).collect())
    }

    /// Queues `text` for `player`'s mailbox; [`flush_mail`](Self::flush_mail) writes it.
    pub(crate) fn post(&self, player: ObjId, text: String) {
        self.inner.unwritten.borrow_mut().push((player, text));
    }

    /// Starts writing the queued mail, behind any write still in progress; a failed write keeps
    /// its mail queued, ahead of what was posted since.
    pub(crate) fn flush_mail(&self) {
        if self.inner.unwritten.borrow().is_empty() {
            return;
        }
        let inner = Rc::clone(&self.inner);
        tokio::task::spawn_local(async move {
            let _writing = inner.writing.lock().await;
            if let Err(error) = inner.write_queued().await {
                eprintln!(
                    "tickstep serve: mail not written yet (kept for the next frame): {}",
                    tickstep::kernel::ErrorChain(&error)
                );
            }
        });
    }

    /// Writes what is queued and waits for it: a server that stops keeps its last frames' mail.
    pub(crate) async fn close(&self) -> Result<(), RegistryError> {
        let _writing = self.inner.writing.lock().await;
        self.inner.write_queued().await
    }

    /// Whether the database still serves this node (docs/serve.md §12.6): the connection is
    /// open, and each table the store and the registry write is there and may be read and
    /// written by the server's role. Otherwise why not, in words. One small query.
    pub(crate) async fn check(&self) -> Result<(), String> {
        let inner = &self.inner;
        let shown = &inner.shown;
        if inner.client.is_closed() {
            return Err(format!(
                "the connection to the store's database {shown} was lost"
            ));
        }
        let rows = inner
            .client
            .query(
                "SELECT t, CASE
                     WHEN to_regclass(t) IS NULL THEN 'missing'
                     -- Each one apart: a list is true when any one of them is held.
                     WHEN NOT (has_table_privilege(t, 'SELECT')
                         AND has_table_privilege(t, 'INSERT')
                         AND has_table_privilege(t, 'UPDATE')
                         AND has_table_privilege(t, 'DELETE')) THEN 'denied'
                     ELSE 'ok' END
                 FROM unnest($1::text[]) AS t",
                &[&WATCHED_TABLES.as_slice()],
            )
            .await
            .map_err(|error| {
                if inner.client.is_closed() {
                    format!("the connection to the store's database {shown} was lost: {error}")
                } else {
                    format!("the store's database {shown} failed its check: {error}")
                }
            })?;
        for row in rows {
            let (table, state): (String, String) = (row.get(0), row.get(1));
            match state.as_str() {
                "missing" => {
                    return Err(format!(
                        "the table {table} of the store's database {shown} was dropped"
                    ));
                }
                "denied" => {
                    return Err(format!(
                        "the server may no longer write the table {table} of the store's \
                         database {shown} (a permission was revoked)"
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Takes `player`'s mail, oldest first: what is written, then what this node still queues.
    pub(crate) async fn take_mail(&self, player: ObjId) -> Result<Vec<String>, RegistryError> {
        let inner = &self.inner;
        let _writing = inner.writing.lock().await;
        inner.write_queued().await?;
        let rows = inner
            .client
            .query(
                "WITH taken AS (DELETE FROM tickstep_serve_mail WHERE player = $1
                                RETURNING seq, text)
                 SELECT text FROM taken ORDER BY seq",
                &[&player.0],
            )
            .await
            .map_err(|e| inner.fail(e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}

impl Inner {
    fn fail(&self, source: tokio_postgres::Error) -> RegistryError {
        RegistryError::Database {
            url: self.shown.clone(),
            source,
        }
    }

    /// One statement: the queued mail in posting order, and a notification per player. The
    /// caller holds the write lock.
    async fn write_queued(&self) -> Result<(), RegistryError> {
        let batch = std::mem::take(&mut *self.unwritten.borrow_mut());
        if batch.is_empty() {
            return Ok(());
        }
        let players: Vec<i64> = batch.iter().map(|(who, _)| who.0).collect();
        let texts: Vec<&str> = batch.iter().map(|(_, text)| text.as_str()).collect();
        let cap = i64::try_from(MAILBOX_CAP).unwrap_or(i64::MAX);
        let written = self
            .client
            .execute(
                // A mailbox keeps MAILBOX_CAP lines, the last the note that it is full
                // (docs/serve.md §11.5): each line's place counts what the mailbox holds.
                "WITH batch AS (
                     SELECT player, text, n FROM unnest($1::BIGINT[], $2::TEXT[])
                         WITH ORDINALITY AS m(player, text, n)),
                 held AS (
                     SELECT player, count(*) AS lines FROM tickstep_serve_mail
                     WHERE player = ANY($1) GROUP BY player),
                 placed AS (
                     SELECT b.player, b.text, b.n, coalesce(h.lines, 0)
                         + row_number() OVER (PARTITION BY b.player ORDER BY b.n) AS place
                     FROM batch b LEFT JOIN held h USING (player)),
                 written AS (
                     INSERT INTO tickstep_serve_mail (player, text)
                     SELECT player, CASE WHEN place = $4 THEN $5 ELSE text END
                     FROM placed WHERE place <= $4 ORDER BY n
                     RETURNING player)
                 SELECT pg_notify($3, player::TEXT) FROM (SELECT DISTINCT player FROM written) p",
                &[&players, &texts, &MAIL_CHANNEL, &cap, &MAILBOX_FULL],
            )
            .await;
        if let Err(error) = written {
            let mut queue = self.unwritten.borrow_mut();
            let posted_since = std::mem::replace(&mut *queue, batch);
            queue.extend(posted_since);
            return Err(self.fail(error));
        }
        Ok(())
    }
}

/// The tests' throwaway server, included from the schedules crate's tests (not copied).
#[cfg(test)]
#[path = "../../../../tickstep-schedules/tests/common/pg.rs"]
pub(super) mod pg;

#[cfg(test)]
mod tests {
    use super::super::FIRST_PLAYER;
    use super::*;

    /// Runs `test` on a current-thread runtime with a `LocalSet`, as `serve` does.
    fn on_server_thread(test: impl Future<Output = ()>) {
        let threads = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&threads, test);
    }

    async fn next(events: &mut mpsc::UnboundedReceiver<Event>) -> Event {
        tokio::time::timeout(std::time::Duration::from_secs(15), events.recv())
            .await
            .expect("an announcement within 15 s")
            .expect("the stream stays open")
    }

    #[test]
    fn two_nodes_share_names_and_announce_players_and_mail() {
        let Some(url) = pg::database_or_skip("serve_registry_nodes") else {
            return;
        };
        on_server_thread(async {
            let (a, _) = DatabaseRegistry::open(&url).await.unwrap();
            let (b, mut b_hears) = DatabaseRegistry::open(&url).await.unwrap();
            let alice = a.id_for("alice").await.unwrap();
            assert_eq!(alice, ObjId(FIRST_PLAYER), "ids start where the file's do");
            assert_eq!(b.id_for("alice").await.unwrap(), alice, "one id per name");
            assert_eq!(
                next(&mut b_hears).await,
                Event::Player(alice, "alice".to_owned())
            );
            let bob = b.id_for("bob").await.unwrap();
            assert_eq!(
                bob,
                ObjId(alice.0 + 1),
                "alice's second login used up no id"
            );
            assert_eq!(a.players().await.unwrap().len(), 2);

            for n in 0..120 {
                a.post(if n % 3 == 0 { bob } else { alice }, format!("m{n}"));
            }
            a.flush_mail();
            // Node b hears of the batch (after its own registration of bob).
            assert_eq!(
                next(&mut b_hears).await,
                Event::Player(bob, "bob".to_owned())
            );
            let mut told = vec![next(&mut b_hears).await, next(&mut b_hears).await];
            told.sort_by_key(|e| match e {
                Event::Mail(who) => who.0,
                Event::Player(..) => 0,
            });
            assert_eq!(told, [Event::Mail(alice), Event::Mail(bob)]);
            a.post(alice, "queued".to_owned()); // not flushed: node a still holds it
            let mail = b.take_mail(alice).await.unwrap();
            assert_eq!(mail.len(), 80, "node b reads what node a wrote");
            assert_eq!(mail.first().map(String::as_str), Some("m1"));
            assert_eq!(mail.last().map(String::as_str), Some("m119"));
            assert_eq!(a.take_mail(alice).await.unwrap(), ["queued"]);
            assert_eq!(a.take_mail(bob).await.unwrap().len(), 40);
            assert!(b.take_mail(bob).await.unwrap().is_empty(), "taken once");

            // A full mailbox keeps MAILBOX_CAP lines, the last the note; two batches count
            // what the first stored.
            for n in 0..MAILBOX_CAP - 10 {
                a.post(bob, format!("f{n}"));
            }
            a.close().await.unwrap();
            for n in 0..30 {
                a.post(bob, format!("late{n}"));
            }
            a.close().await.unwrap();
            let full = b.take_mail(bob).await.unwrap();
            assert_eq!(full.len(), MAILBOX_CAP);
            assert_eq!(full[MAILBOX_CAP - 2], "late8");
            assert_eq!(full.last().map(String::as_str), Some(MAILBOX_FULL));
        });
    }

    #[test]
    fn a_name_is_registered_once_with_its_hash_and_wizards_are_shared() {
        let Some(url) = pg::database_or_skip("serve_registry_accounts") else {
            return;
        };
        on_server_thread(async {
            let (a, _) = DatabaseRegistry::open(&url).await.unwrap();
            let (b, _) = DatabaseRegistry::open(&url).await.unwrap();
            let alice = a.register("alice", "$h1").await.unwrap().expect("new");
            assert_eq!(b.register("alice", "$h2").await.unwrap(), None, "taken");
            b.set_wizard(alice).await.unwrap();
            a.set_hash(alice, "$h3").await.unwrap();
            assert!(
                !b.claim(alice, "$h4").await.unwrap(),
                "a password is claimed once"
            );
            let old = a.id_for("oldtimer").await.unwrap();
            assert!(b.claim(old, "$h5").await.unwrap());
            assert!(!a.claim(old, "$h6").await.unwrap(), "on another node too");
            let seen = b.account("alice").await.unwrap().unwrap();
            assert_eq!(
                (seen.id, seen.hash.as_deref(), seen.wizard),
                (alice, Some("$h3"), true)
            );
            assert_eq!(a.wizards().await.unwrap(), [alice]);
            assert!(a.account("bob").await.unwrap().is_none());
        });
    }

    #[test]
    fn mail_that_cannot_be_written_stays_queued_in_order() {
        let Some(url) = pg::database_or_skip("serve_registry_refused") else {
            return;
        };
        on_server_thread(async {
            let (a, _) = DatabaseRegistry::open(&url).await.unwrap();
            let alice = a.id_for("alice").await.unwrap();
            let (admin, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
            tokio::task::spawn_local(connection);
            admin
                .batch_execute("ALTER TABLE tickstep_serve_mail ADD CHECK (text <> 'refused')")
                .await
                .unwrap();
            a.post(alice, "first".to_owned());
            a.post(alice, "refused".to_owned());
            a.close().await.expect_err("the check refuses the batch");
            a.post(alice, "later".to_owned());
            admin
                .batch_execute(
                    "ALTER TABLE tickstep_serve_mail DROP CONSTRAINT tickstep_serve_mail_text_check",
                )
                .await
                .unwrap();
            a.close().await.unwrap();
            assert_eq!(
                a.take_mail(alice).await.unwrap(),
                ["first", "refused", "later"],
                "nothing lost, nothing reordered"
            );
        });
    }

    /// docs/serve.md §10.13: a database whose registry a build before versions made (players
    /// and mail, no accounts, nothing recorded) is recorded and migrated, keeping its players;
    /// one a newer build migrated is refused naming both versions.
    #[test]
    fn a_registry_from_before_versions_is_migrated_and_one_from_a_newer_build_refused() {
        let Some(url) = pg::database_or_skip("serve_registry_versions") else {
            return;
        };
        on_server_thread(async {
            let (admin, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
            tokio::task::spawn_local(connection);
            admin
                .batch_execute(
                    "CREATE TABLE tickstep_serve_players (
                         id BIGINT GENERATED BY DEFAULT AS IDENTITY (START WITH 100) PRIMARY KEY,
                         name TEXT NOT NULL UNIQUE);
                     CREATE TABLE tickstep_serve_mail (
                         seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                         player BIGINT NOT NULL, text TEXT NOT NULL);
                     INSERT INTO tickstep_serve_players (name) VALUES ('old');",
                )
                .await
                .unwrap();
            let (registry, _) = DatabaseRegistry::open(&url).await.unwrap();
            let versions: Vec<i64> = admin
                .query(
                    "SELECT version FROM tickstep_serve_migrations ORDER BY version",
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            assert_eq!(versions, [1, 2]);
            assert_eq!(registry.id_for("old").await.unwrap(), ObjId(FIRST_PLAYER));
            assert!(
                registry
                    .account("old")
                    .await
                    .unwrap()
                    .is_some_and(|a| a.hash.is_none())
            );
            admin
                .batch_execute("INSERT INTO tickstep_serve_migrations (version) VALUES (3)")
                .await
                .unwrap();
            let Err(refused) = DatabaseRegistry::open(&url).await else {
                panic!("a registry of version 3 opened");
            };
            assert!(matches!(refused, RegistryError::TooNew { .. }), "{refused}");
            let chain = tickstep::kernel::ErrorChain(&refused).to_string();
            assert!(
                chain.contains("version 3, newer than this build's 2"),
                "{chain}"
            );
        });
    }
}
