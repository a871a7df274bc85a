//! Who the players are and what waits for them: names mapped to durable object ids, and the
//! mailbox of firings that found their player offline ("a background session for player";
//! docs/serve.md §2.2, §4.5).
//!
//! The registry lives where the schedule store does, so a restart finds the same ids for the
//! same names — the schedules the store brings back are owned by those ids — and the same
//! undelivered mail:
//!
//! * [`file`]: a `SQLite` store's server keeps a small file beside it (`FILE.world`);
//! * [`database`]: a `PostgreSQL` store's servers share two tables in its database, and tell one
//!   another of new players and new mail (docs/serve.md §6).
//!
//! Mail is posted by firings, inside frames, so it is queued in memory and written after the
//! frame ([`Registry::flush_mail`], docs/serve.md §4.6).

mod database;
mod file;
pub(crate) mod names;
mod schema;
// Registries the code before versioned migrations made, opened by this build (docs/serve.md
// §10.13), on both stores.
#[cfg(test)]
mod upgrade_tests;

use std::path::{Path, PathBuf};

use tickstep::schedules::{ObjId, is_server_location};
use tokio::sync::mpsc;

use database::DatabaseRegistry;
use file::FileRegistry;

/// The world file a server keeps beside the `SQLite` store at `store` (`FILE.world`).
fn world_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".world");
    PathBuf::from(name)
}

/// The first player's object id (ids below are the world's own objects).
const FIRST_PLAYER: i64 = 100;
/// The notification channel that says a player has mail (payload: the id).
const MAIL_CHANNEL: &str = "tickstep_serve_mail";
/// The notification channel that says a name was registered (payload: `id name`).
const PLAYERS_CHANNEL: &str = "tickstep_serve_players";

/// The most lines a mailbox keeps, the last of them [`MAILBOX_FULL`] (docs/serve.md §11.5).
pub(crate) const MAILBOX_CAP: usize = 100;
/// The line that ends a full mailbox.
pub(crate) const MAILBOX_FULL: &str =
    "[system] your mailbox is full (100 lines); what came after was not kept";

/// A registered name: its id, its password's hash (none for a name registered before accounts,
/// or a wizard whose password the configuration has not given yet), and whether it is a wizard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Account {
    pub(crate) id: ObjId,
    pub(crate) hash: Option<String>,
    pub(crate) wizard: bool,
}

/// The players and their mail, beside the store.
pub(crate) enum Registry {
    File(FileRegistry),
    Database(DatabaseRegistry),
}

/// What another server node on the same database announced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// Mail was written for this player.
    Mail(ObjId),
    /// A name was registered, with this id.
    Player(ObjId, String),
}

/// A failure of the registry, naming where it is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RegistryError {
    #[error("world file {} failed", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("world tables in {url} failed")]
    Database {
        url: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("the players' registry at {at} cannot be opened by this build")]
    TooNew {
        at: String,
        #[source]
        source: schema::TooNew,
    },
}

impl Registry {
    /// Opens the registry of the store at `store` (a file beside a path, the same database for a
    /// `postgres://` URL), with the stream of other nodes' announcements when there can be any.
    pub(crate) async fn open(
        store: &Path,
    ) -> Result<(Registry, Option<mpsc::UnboundedReceiver<Event>>), RegistryError> {
        if is_server_location(store) {
            let (registry, events) = DatabaseRegistry::open(&store.to_string_lossy()).await?;
            Ok((Registry::Database(registry), Some(events)))
        } else {
            Ok((Registry::File(FileRegistry::open(store)?), None))
        }
    }

    /// The player's id, registering the name the first time it is seen.
    pub(crate) async fn id_for(&self, name: &str) -> Result<ObjId, RegistryError> {
        match self {
            Registry::File(r) => r.id_for(name),
            Registry::Database(r) => r.id_for(name).await,
        }
    }

    /// The account under `name`, if there is one.
    pub(crate) async fn account(&self, name: &str) -> Result<Option<Account>, RegistryError> {
        match self {
            Registry::File(r) => r.account(name),
            Registry::Database(r) => r.account(name).await,
        }
    }

    /// Registers `name` with its password's hash (announcing it to other nodes): the new id, or
    /// `None` when the name is taken.
    pub(crate) async fn register(
        &self,
        name: &str,
        hash: &str,
    ) -> Result<Option<ObjId>, RegistryError> {
        match self {
            Registry::File(r) => r.register(name, hash),
            Registry::Database(r) => r.register(name, hash).await,
        }
    }

    /// Sets `player`'s password hash.
    pub(crate) async fn set_hash(&self, player: ObjId, hash: &str) -> Result<(), RegistryError> {
        match self {
            Registry::File(r) => r.set_hash(player, hash),
            Registry::Database(r) => r.set_hash(player, hash).await,
        }
    }

    /// Sets the first password hash of `player`, a name from before accounts: false when it has
    /// one already (another connection, or another node, chose it first; docs/serve.md §10.3).
    pub(crate) async fn claim(&self, player: ObjId, hash: &str) -> Result<bool, RegistryError> {
        match self {
            Registry::File(r) => r.claim(player, hash),
            Registry::Database(r) => r.claim(player, hash).await,
        }
    }

    /// Makes `player` a wizard.
    pub(crate) async fn set_wizard(&self, player: ObjId) -> Result<(), RegistryError> {
        match self {
            Registry::File(r) => r.set_wizard(player),
            Registry::Database(r) => r.set_wizard(player).await,
        }
    }

    /// The wizards' ids.
    pub(crate) async fn wizards(&self) -> Result<Vec<ObjId>, RegistryError> {
        match self {
            Registry::File(r) => r.wizards(),
            Registry::Database(r) => r.wizards().await,
        }
    }

    /// Every registered player, id and name.
    pub(crate) async fn players(&self) -> Result<Vec<(ObjId, String)>, RegistryError> {
        match self {
            Registry::File(r) => r.players(),
            Registry::Database(r) => r.players().await,
        }
    }

    /// Queues `text` for `player`'s mailbox.
    pub(crate) fn post(&self, player: ObjId, text: String) {
        match self {
            Registry::File(r) => r.post(player, text),
            Registry::Database(r) => r.post(player, text),
        }
    }

    /// Writes the queued mail (a file: now, in one transaction; a database: on a task of its own,
    /// so the caller never waits on the network). A failure keeps the mail queued.
    pub(crate) fn flush_mail(&self) -> Result<(), RegistryError> {
        match self {
            Registry::File(r) => r.flush_mail(),
            Registry::Database(r) => {
                r.flush_mail();
                Ok(())
            }
        }
    }

    /// Takes `player`'s mail, oldest first (the queue is written first).
    pub(crate) async fn take_mail(&self, player: ObjId) -> Result<Vec<String>, RegistryError> {
        match self {
            Registry::File(r) => r.take_mail(player),
            Registry::Database(r) => r.take_mail(player).await,
        }
    }

    /// Whether a database registry's connection, tables and permissions still serve this node
    /// (docs/serve.md §12.6); a file's are watched as files instead (docs/serve.md §12.1).
    pub(crate) async fn check(&self) -> Result<(), String> {
        match self {
            Registry::File(_) => Ok(()),
            Registry::Database(r) => r.check().await,
        }
    }

    /// Writes what is still queued and waits for it (a file also does so when dropped).
    pub(crate) async fn close(&self) -> Result<(), RegistryError> {
        match self {
            Registry::File(r) => r.flush_mail(),
            Registry::Database(r) => r.close().await,
        }
    }
}

impl Event {
    /// A notification as an event; `None` for a channel or payload this server does not know.
    fn parse(channel: &str, payload: &str) -> Option<Event> {
        match channel {
            MAIL_CHANNEL => payload.parse().ok().map(|id| Event::Mail(ObjId(id))),
            PLAYERS_CHANNEL => {
                let (id, name) = payload.split_once(' ')?;
                Some(Event::Player(ObjId(id.parse().ok()?), name.to_owned()))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_become_events_and_strangers_are_ignored() {
        assert_eq!(
            Event::parse(MAIL_CHANNEL, "104"),
            Some(Event::Mail(ObjId(104)))
        );
        assert_eq!(
            Event::parse(PLAYERS_CHANNEL, "105 alice"),
            Some(Event::Player(ObjId(105), "alice".to_owned()))
        );
        assert_eq!(Event::parse(MAIL_CHANNEL, "x"), None);
        assert_eq!(Event::parse(PLAYERS_CHANNEL, "105"), None);
        assert_eq!(Event::parse("elsewhere", "1"), None);
    }
}
