//! The login of one connection (docs/serve.md §10.7–§10.12): a name at the name prompt, then
//! its password at the password prompt — an account's checked, a new name's chosen — every
//! refusal followed by the prompt the client answers next, no line typed at either prompt shown
//! back, failed logins and new names limited per address.

use std::rc::Rc;
use std::time::{Duration, Instant};

use tickstep::schedules::ObjId;

use super::super::accounts;
use super::super::gmcp;
use super::super::limits::{self, address_key, wait_text};
use super::super::line_protocol::{self, ProtocolError};
use super::super::metrics::{self, Refusal};
use super::super::registry::Account;
use super::{Line, Session};

impl Session {
    /// The login: a name at the name prompt, then its password at the password prompt, every
    /// refusal followed by the prompt the client answers next (docs/serve.md §10.7–§10.12). No
    /// line typed at either prompt is shown back, in whole or in part, and a line is read as a
    /// password only after a password prompt. True once logged in; false once the connection is
    /// to close.
    pub(super) async fn log_in(&mut self) -> bool {
        let mut prompt = GREETING;
        loop {
            if !self.send(prompt).await {
                return false;
            }
            prompt = NAME_PROMPT;
            let line = match self.next_line().await {
                Line::Text(line) => line,
                Line::NotUtf8 { .. } => {
                    if !self
                        .send("error: that line is not UTF-8 text, so it is not a name")
                        .await
                    {
                        return false;
                    }
                    continue;
                }
                Line::TooLong => {
                    self.too_long().await;
                    return false;
                }
                Line::Closed => return false,
            };
            let word = line.trim();
            if word.eq_ignore_ascii_case("help") {
                if !self.send_all(LOGIN_HELP.lines()).await {
                    return false;
                }
                continue;
            }
            if word.eq_ignore_ascii_case("quit") {
                self.send("ok: bye").await;
                return false;
            }
            let refusal = match line_protocol::parse_name(&line) {
                Ok(name) => match self.name_given(&name).await {
                    Login::In => return true,
                    Login::Closed => return false,
                    Login::Refused(refusal) => refusal,
                },
                Err(ProtocolError::CommandName(_)) => {
                    "error: that is a command, so it cannot be a name".to_owned()
                }
                Err(_) => "error: a name is 1-24 letters, digits, '_' or '-'".to_owned(),
            };
            if !self.send(&refusal).await {
                return false;
            }
        }
    }

    /// After a name: the refusals that come before its password (docs/serve.md §10.4, §10.6,
    /// §11.4), then the password stage, then the player's entry.
    pub(super) async fn name_given(&mut self, name: &str) -> Login {
        let account = match self.server.presence.account(name).await {
            Ok(account) => account,
            Err(error) => return Login::Refused(format!("error: {error}")),
        };
        if let Some(refusal) = self.refused_before_password(name, account.as_ref()) {
            return Login::Refused(refusal);
        }
        // The client's echo is off for the whole stage, re-asks included, and back on before
        // whatever ends it is said (docs/serve.md §8.5, §10.9).
        self.hide_input(true);
        let checked = self.password_stage(name, account).await;
        self.hide_input(false);
        match checked {
            Ok(who) => self.enter(who, name).await,
            Err(login) => login,
        }
    }

    /// Why `name` cannot log in from this address whatever its password, if it cannot.
    pub(super) fn refused_before_password(
        &self,
        name: &str,
        account: Option<&Account>,
    ) -> Option<String> {
        let address = address_key(self.from);
        let now = Instant::now();
        let mut limits = self.server.fair_use.borrow_mut();
        match account {
            Some(account)
                if account.id == self.server.principals_root() && account.hash.is_none() =>
            {
                Some(format!(
                    "error: {name} is the wizard's account; its password is given to the server \
                     at its start (TICKSTEP_WIZARD_PASSWORD), not chosen here"
                ))
            }
            Some(_) => {
                let wait = limits.failed_logins.check(address, now).err()?;
                self.server.metrics.login(metrics::Login::Locked);
                Some(too_many_failures(wait))
            }
            None => {
                let wait = limits.names_per_address.check(address, now).err()?;
                self.server.metrics.refused(Refusal::NewNames);
                let rate = limits.names_per_address.rate();
                let rate = rate.expect("only a limiter with a rate refuses");
                Some(format!(
                    "error: too many new names from your address: {} at once, then one \
                     every {} min; try again in {}",
                    rate.burst,
                    (1.0 / rate.per_second / 60.0).round(),
                    wait_text(wait)
                ))
            }
        }
    }

    /// The password stage (docs/serve.md §10.9, §10.10): an account's password is checked; a new
    /// name's, or that of a name from before accounts, is chosen. The prompt is asked again
    /// after every refusal of the line itself, until the password is right, the client leaves
    /// the stage with an empty line, or the address is locked out. The player's id, or how the
    /// login ended.
    pub(super) async fn password_stage(
        &mut self,
        name: &str,
        account: Option<Account>,
    ) -> Result<ObjId, Login> {
        let prompt = match &account {
            Some(Account { hash: Some(_), .. }) => format!("password: type {name}'s password"),
            Some(_) => format!("password: {name} has no password yet; choose one"),
            None => format!(
                "password: {name} is a new name; choose a password (at least {} characters)",
                accounts::MIN_PASSWORD_CHARS
            ),
        };
        loop {
            if !self.send(&prompt).await {
                return Err(Login::Closed);
            }
            let password = match self.next_line().await {
                Line::Text(password) if password.is_empty() => {
                    return Err(Login::Refused(match account {
                        Some(_) => format!("ok: no password typed, so you are not {name}"),
                        None => format!("ok: no password typed, so {name} was not made"),
                    }));
                }
                Line::Text(password) => password,
                Line::NotUtf8 { .. } => {
                    if !self
                        .send("error: a password is UTF-8 text, and that line is not")
                        .await
                    {
                        return Err(Login::Closed);
                    }
                    continue;
                }
                Line::TooLong => {
                    self.too_long().await;
                    return Err(Login::Closed);
                }
                Line::Closed => return Err(Login::Closed),
            };
            let attempt = match &account {
                Some(Account {
                    id,
                    hash: Some(hash),
                    ..
                }) => self.check(name, *id, password, hash.clone()).await,
                Some(Account { id, hash: None, .. }) => {
                    self.choose(name, Some(*id), password).await
                }
                None => self.choose(name, None, password).await,
            };
            match attempt {
                Attempt::In(who) => return Ok(who),
                Attempt::Again(refusal) => {
                    if !self.send(&refusal).await {
                        return Err(Login::Closed);
                    }
                }
                Attempt::Out(refusal) => return Err(Login::Refused(refusal)),
            }
        }
    }

    /// Checks a typed password against the account's hash; a wrong one counts against the
    /// address (docs/serve.md §10.6).
    pub(super) async fn check(
        &self,
        name: &str,
        who: ObjId,
        password: String,
        hash: String,
    ) -> Attempt {
        if accounts::verify(password, hash).await {
            self.server.metrics.login(metrics::Login::Ok);
            return Attempt::In(who);
        }
        self.server.metrics.login(metrics::Login::Failed);
        let address = address_key(self.from);
        let now = Instant::now();
        let mut limits = self.server.fair_use.borrow_mut();
        let _ = limits.failed_logins.take(address, now);
        match limits.failed_logins.check(address, now) {
            Ok(()) => Attempt::Again(format!("error: wrong password for {name}")),
            Err(wait) => Attempt::Out(too_many_failures(wait)),
        }
    }

    /// Makes the account of a new name (`old` is `None`) or sets the first password of a name
    /// from before accounts (docs/serve.md §10.3), with the password typed.
    pub(super) async fn choose(&self, name: &str, old: Option<ObjId>, password: String) -> Attempt {
        if let Err(rule) = accounts::acceptable(&password) {
            return Attempt::Again(format!("error: {rule}"));
        }
        let hash = match accounts::hash(password).await {
            Ok(hash) => hash,
            Err(error) => return Attempt::Out(format!("error: {error}")),
        };
        let made = match old {
            Some(who) => self
                .server
                .presence
                .claim(who, &hash)
                .await
                .map(|claimed| claimed.then_some(who)),
            None => self.server.presence.register(name, &hash).await,
        };
        match made {
            Ok(Some(who)) => {
                if old.is_none() {
                    let address = address_key(self.from);
                    let mut limits = self.server.fair_use.borrow_mut();
                    let _ = limits.names_per_address.take(address, Instant::now());
                }
                self.server.metrics.login(metrics::Login::New);
                Attempt::In(who)
            }
            // Another connection made the name, or chose its password, while this one typed.
            Ok(None) => Attempt::Out(format!(
                "error: {name} was taken meanwhile; choose another name"
            )),
            Err(error) => Attempt::Out(format!("error: {error}")),
        }
    }

    /// Lets a player whose password was checked in: the welcome, then their mail.
    pub(super) async fn enter(&mut self, who: ObjId, name: &str) -> Login {
        // The world counts this connection as `who`'s before it reads the mailbox, so a login
        // dropped while that read waits (the login timeout, a client gone) logs out too.
        self.entering = Some(who);
        let entered = self
            .server
            .presence
            .enter(who, name, self.outbox.clone(), Rc::clone(&self.kicked))
            .await;
        self.entering = None;
        match entered {
            Ok(mail) => {
                self.who = Some(who);
                let wizard = self.server.presence.is_wizard(who);
                let role = if wizard { "; you are a wizard" } else { "" };
                let (package, data) = gmcp::char_name(name, who, wizard);
                self.negotiate(|t, out| t.gmcp(package, &data, out)).await;
                let mut ok = self
                    .send(&format!("ok: welcome, {name} (#{}){role}", who.0))
                    .await;
                for line in mail {
                    ok &= self.send(&format!("[mail] {line}")).await;
                }
                if ok { Login::In } else { Login::Closed }
            }
            // Not logged in: the client may try another name.
            Err(error) => Login::Refused(format!("error: {error}")),
        }
    }
}

/// What a login attempt came to.
pub(super) enum Login {
    In,
    /// Not logged in; the reply says why, and the name prompt follows it.
    Refused(String),
    Closed,
}

/// What one password line came to.
pub(super) enum Attempt {
    /// Right (or chosen): the player's id.
    In(ObjId),
    /// Refused; the reply says why, and the password prompt follows it.
    Again(String),
    /// Refused; the reply says why, and the name prompt follows it.
    Out(String),
}

/// The first line a connection gets: a greeting, and the first name prompt.
pub(crate) const GREETING: &str =
    "hello: this is a tickstep world; type your name (a new name makes an account), or help";

/// The name prompt after the first (docs/serve.md §10.7).
pub(crate) const NAME_PROMPT: &str = "name: type your name (a new name makes an account), or help";

/// What `help` shows before login.
pub(crate) const LOGIN_HELP: &str = "\
help: type your name (1-24 letters, digits, '_' or '-'), then its password.
help: a name nobody has yet becomes yours: choose its password (at least 6 characters).
help: after login, 'help' lists the commands; 'quit' leaves.";

pub(super) fn too_many_failures(wait: Duration) -> String {
    let rate = limits::FAILED_LOGINS_PER_ADDRESS;
    format!(
        "error: too many failed logins from your address: {} at once, then one every {} s; \
         try again in {}",
        rate.burst,
        (1.0 / rate.per_second).round(),
        wait_text(wait)
    )
}
