//! Who the world knows and who is connected: players' names, the online players' connections,
//! and the mail that waits for those who are not (docs/serve.md §2.5, §6, §11.8). One owned part
//! of the [`Server`](super::server::Server): the commands reach people only through it.
//!
//! Everything here runs on the server's one thread, so it is plain `Rc`/`RefCell` state, never
//! borrowed across an await.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use tickstep::kernel::ErrorChain;
use tickstep::schedules::ObjId;
use tokio::sync::{Notify, mpsc};

use super::metrics::{Refusal, ServeMetrics};
use super::principals::Principals;
use super::registry::{Account, Registry};

/// How many lines may wait for a connection that does not read before it is dropped; one more
/// slot is kept for the line that tells it why (docs/serve.md §2.5).
pub(crate) const OUTBOX_LINES: usize = 1_000;

/// A connection's queue of lines to write.
pub(crate) type Outbox = mpsc::Sender<String>;

/// An online player's connection: its queue, and how to drop it when it stops reading.
struct Online {
    outbox: Outbox,
    kick: Rc<Kick>,
}

/// How a connection is dropped: its session is woken to end, and its writer may be given one
/// last line to write before anything still queued (docs/serve.md §11.8).
#[derive(Default)]
pub(crate) struct Kick {
    /// Wakes the session, which ends.
    pub(crate) session: Notify,
    /// Why the connection is closed, for the writer to write next in place of its queue.
    pub(crate) last_word: RefCell<Option<String>>,
}

/// The players the world knows, those connected here, and the registry that keeps their names,
/// accounts and mail.
pub(crate) struct Presence {
    registry: Registry,
    principals: Rc<Principals>,
    names: RefCell<HashMap<ObjId, String>>,
    online: RefCell<HashMap<ObjId, Online>>,
    metrics: Rc<ServeMetrics>,
}

impl Presence {
    /// The players the registry knows (`players`), nobody online yet.
    pub(crate) fn new(
        registry: Registry,
        players: Vec<(ObjId, String)>,
        principals: Rc<Principals>,
        metrics: Rc<ServeMetrics>,
    ) -> Presence {
        Presence {
            registry,
            principals,
            names: RefCell::new(players.into_iter().collect()),
            online: RefCell::new(HashMap::new()),
            metrics,
        }
    }

    pub(crate) fn name(&self, who: ObjId) -> String {
        self.names
            .borrow()
            .get(&who)
            .cloned()
            .unwrap_or_else(|| format!("#{}", who.0))
    }

    /// The player with this name, if it ever logged in (or is the wizard).
    pub(crate) fn player_named(&self, name: &str) -> Option<ObjId> {
        let names = self.names.borrow();
        names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(id, _)| *id)
    }

    /// How many players are connected to this server.
    pub(crate) fn online_count(&self) -> usize {
        self.online.borrow().len()
    }

    pub(crate) fn is_wizard(&self, who: ObjId) -> bool {
        self.principals.wizards.borrow().contains(&who)
    }

    /// The account under `name`, read fresh (another node may have made it, or made it a
    /// wizard); a wizard's role joins this world's.
    pub(crate) async fn account(&self, name: &str) -> Result<Option<Account>, String> {
        let account = self
            .registry
            .account(name)
            .await
            .map_err(|e| ErrorChain(&e).to_string())?;
        if let Some(account) = &account
            && account.wizard
        {
            self.principals.wizards.borrow_mut().insert(account.id);
        }
        Ok(account)
    }

    /// Registers a new name with its password's hash: its id, or `None` when it is taken.
    pub(crate) async fn register(&self, name: &str, hash: &str) -> Result<Option<ObjId>, String> {
        self.registry
            .register(name, hash)
            .await
            .map_err(|e| ErrorChain(&e).to_string())
    }

    /// Sets the first password of a name that had none (docs/serve.md §10.3): false when
    /// another login chose one first.
    pub(crate) async fn claim(&self, who: ObjId, hash: &str) -> Result<bool, String> {
        self.registry
            .claim(who, hash)
            .await
            .map_err(|e| ErrorChain(&e).to_string())
    }

    /// Lets `who`, whose password was checked, in: their mail. Refused when that name is
    /// already connected to this server.
    pub(crate) async fn enter(
        &self,
        who: ObjId,
        name: &str,
        outbox: Outbox,
        kick: Rc<Kick>,
    ) -> Result<Vec<String>, String> {
        if self.online.borrow().contains_key(&who) {
            return Err(format!("{name} is already connected"));
        }
        self.add_player(who, name.to_owned());
        self.online
            .borrow_mut()
            .insert(who, Online { outbox, kick });
        let mail = self.registry.take_mail(who).await.map_err(|e| {
            self.logout(who); // not let in after all: the name is free again
            ErrorChain(&e).to_string()
        })?;
        self.metrics.mail_delivered(mail.len() as u64);
        Ok(mail)
    }

    /// A player the world knows from now on (a login here, or a registration another server
    /// node announced: docs/serve.md §6.2).
    pub(crate) fn add_player(&self, who: ObjId, name: String) {
        self.names.borrow_mut().insert(who, name);
        self.principals.players.borrow_mut().insert(who);
    }

    /// Shows `who` the mail another server node wrote for them, if they are connected here
    /// (docs/serve.md §6.3); otherwise it waits in the mailbox for their login.
    pub(crate) async fn deliver_mail(&self, who: ObjId) {
        if !self.online.borrow().contains_key(&who) {
            return;
        }
        match self.registry.take_mail(who).await {
            Ok(mail) => {
                for line in mail {
                    if self.online.borrow().contains_key(&who) {
                        self.metrics.mail_delivered(1);
                        self.tell(who, format!("[mail] {line}"));
                    } else {
                        self.registry.post(who, line); // they left meanwhile: back it goes
                    }
                }
            }
            Err(error) => eprintln!(
                "tickstep serve: mail for #{} not read yet: {}",
                who.0,
                ErrorChain(&error)
            ),
        }
    }

    /// Writes the mail still queued, at a clean stop.
    pub(crate) async fn close(&self) {
        if let Err(error) = self.registry.close().await {
            eprintln!(
                "tickstep serve: undelivered mail lost: {}",
                ErrorChain(&error)
            );
        }
    }

    pub(crate) fn logout(&self, who: ObjId) {
        self.online.borrow_mut().remove(&who);
    }

    /// Sends `line` to `who` now, or to their mailbox when they are offline. A connection whose
    /// outbox is full (it stopped reading) loses the line and is disconnected by its task, whose
    /// writer says why in place of the lines that waited (docs/serve.md §11.8).
    pub(crate) fn tell(&self, who: ObjId, line: String) {
        let outbox = self
            .online
            .borrow()
            .get(&who)
            .map(|o| (o.outbox.clone(), Rc::clone(&o.kick)));
        if let Some((outbox, kick)) = outbox {
            if outbox.try_send(line).is_err() {
                self.metrics.refused(Refusal::StoppedReading);
                self.logout(who);
                *kick.last_word.borrow_mut() = Some(format!(
                    "error: you stopped reading: {OUTBOX_LINES} lines waited for you; \
                     closing the connection"
                ));
                kick.session.notify_one(); // its session ends and closes the connection
            }
        } else {
            // Mail, written between frames in one write (`Server::between_frames`).
            self.metrics.mail_posted(1);
            self.registry.post(who, line);
        }
    }

    /// What the server does after each frame, outside its budget: write the mail the frame's
    /// firings posted, in one write: a transaction of the file registry, one statement on a
    /// database (docs/serve.md §4.6).
    pub(crate) fn between_frames(&self) {
        if let Err(error) = self.registry.flush_mail() {
            eprintln!(
                "tickstep serve: mail not written yet (kept for the next frame): {}",
                ErrorChain(&error)
            );
        }
    }

    /// Sends `line` to everyone connected.
    pub(crate) fn broadcast(&self, line: &str) {
        self.broadcast_except(line, None);
    }

    /// Sends `line` to everyone connected but `skip` (who gets it as a reply instead).
    pub(crate) fn broadcast_except(&self, line: &str, skip: Option<ObjId>) {
        let online: Vec<ObjId> = self
            .online
            .borrow()
            .keys()
            .copied()
            .filter(|&who| Some(who) != skip)
            .collect();
        for who in online {
            self.tell(who, line.to_owned());
        }
    }

    /// Tells every wizard connected here.
    pub(crate) fn tell_wizards(&self, line: &str) {
        let wizards: Vec<ObjId> = self
            .online
            .borrow()
            .keys()
            .copied()
            .filter(|&who| self.is_wizard(who))
            .collect();
        for who in wizards {
            self.tell(who, line.to_owned());
        }
    }

    /// Whether the store's database still serves this node (docs/serve.md §12.6); `Ok` on a file.
    pub(crate) async fn check_database(&self) -> Result<(), String> {
        self.registry.check().await
    }

    /// A wizard's `wizard NAME`: that player is a wizard from now on (docs/serve.md §10.5).
    pub(crate) async fn make_wizard(&self, who: ObjId, name: &str) -> String {
        if !self.is_wizard(who) {
            return "error: only a wizard may make a wizard".to_owned();
        }
        let Some(id) = self.player_named(name) else {
            return format!("error: no player is named {name}");
        };
        if let Err(error) = self.registry.set_wizard(id).await {
            return format!("error: {}", ErrorChain(&error));
        }
        self.principals.wizards.borrow_mut().insert(id);
        self.tell(id, format!("[system] {} made you a wizard", self.name(who)));
        format!("ok: {name} is a wizard")
    }

    /// The `who` command's reply: everyone connected here, wizards marked, by name.
    pub(crate) fn who(&self) -> String {
        let mut names: Vec<String> = self
            .online
            .borrow()
            .keys()
            .map(|&who| {
                let name = self.name(who);
                if self.is_wizard(who) {
                    format!("{name} (wizard)")
                } else {
                    name
                }
            })
            .collect();
        names.sort();
        format!("ok: {} online: {}", names.len(), names.join(", "))
    }
}
