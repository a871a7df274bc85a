//! What serve records about itself for `/metrics`, beside what the layers record
//! (docs/observability.md §8): connections by transport, logins by result, refusals by reason,
//! and mail for players who were away. Handles are registered once, with the server, so a count
//! is a call on a handle; every label is a fixed word, never a name or an address.

use metrics::{Counter, Gauge, Unit};

/// How a connection reached the server (the `transport` label of docs/observability.md §8.1).
/// Raw lines and telnet share the TCP port and are told apart only by the client's negotiation,
/// so both are `tcp`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Transport {
    Tcp,
    WebSocket,
}

/// How a password stage ended (the `result` label of docs/observability.md §8.3).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Login {
    /// An account's password was right.
    Ok,
    /// A new name became an account (or a name from before accounts got its password).
    New,
    /// A wrong password.
    Failed,
    /// The address is locked out for failed logins: no password was checked.
    Locked,
}

/// Why the server refused a client something (the `reason` label of docs/observability.md §8.4).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Refusal {
    /// A line over `--max-line`: the connection closes.
    LineTooLong,
    /// No login within the login timeout: the connection closes.
    LoginTimeout,
    /// The client stopped reading and its queue filled: the connection closes.
    StoppedReading,
    /// Too many new names from one address.
    NewNames,
    /// A creation over the per-player or per-address rate.
    Creations,
    /// A creation over the player's quota of live schedules.
    Quota,
    /// `say` faster than its rate.
    Says,
    /// A WebSocket handshake from a page of another origin.
    CrossOrigin,
}

impl Refusal {
    const ALL: [Refusal; 8] = [
        Refusal::LineTooLong,
        Refusal::LoginTimeout,
        Refusal::StoppedReading,
        Refusal::NewNames,
        Refusal::Creations,
        Refusal::Quota,
        Refusal::Says,
        Refusal::CrossOrigin,
    ];

    fn label(self) -> &'static str {
        match self {
            Refusal::LineTooLong => "line_too_long",
            Refusal::LoginTimeout => "login_timeout",
            Refusal::StoppedReading => "stopped_reading",
            Refusal::NewNames => "new_names",
            Refusal::Creations => "creations",
            Refusal::Quota => "quota",
            Refusal::Says => "says",
            Refusal::CrossOrigin => "cross_origin",
        }
    }
}

/// The server's handles.
pub(crate) struct ServeMetrics {
    /// Connections accepted, and open now, by transport (`Transport` as index).
    accepted: [Counter; 2],
    open: [Gauge; 2],
    logins: [Counter; 4],
    refused: [Counter; Refusal::ALL.len()],
    mail_posted: Counter,
    mail_delivered: Counter,
}

/// An open connection: counted open until dropped.
pub(crate) struct Connected(Gauge);

impl Drop for Connected {
    fn drop(&mut self) {
        self.0.decrement(1);
    }
}

impl ServeMetrics {
    /// Registers the handles with the recorder installed now (serve installs it first).
    pub(crate) fn register() -> ServeMetrics {
        describe();
        let transports = ["tcp", "websocket"];
        ServeMetrics {
            accepted: transports
                .map(|t| metrics::counter!("tickstep_serve_connections_total", "transport" => t)),
            open: transports
                .map(|t| metrics::gauge!("tickstep_serve_connections_open", "transport" => t)),
            logins: ["ok", "new", "failed", "locked"]
                .map(|r| metrics::counter!("tickstep_serve_logins_total", "result" => r)),
            refused: Refusal::ALL
                .map(|r| metrics::counter!("tickstep_serve_refused_total", "reason" => r.label())),
            mail_posted: metrics::counter!("tickstep_serve_mail_posted_total"),
            mail_delivered: metrics::counter!("tickstep_serve_mail_delivered_total"),
        }
    }

    /// A connection came in; it counts as open until the returned guard is dropped.
    pub(crate) fn connected(&self, transport: Transport) -> Connected {
        let i = transport as usize;
        self.accepted[i].increment(1);
        self.open[i].increment(1);
        Connected(self.open[i].clone())
    }

    pub(crate) fn login(&self, result: Login) {
        self.logins[result as usize].increment(1);
    }

    pub(crate) fn refused(&self, why: Refusal) {
        self.refused[why as usize].increment(1);
    }

    /// `lines` of mail posted for a player who was away.
    pub(crate) fn mail_posted(&self, lines: u64) {
        self.mail_posted.increment(lines);
    }

    /// `lines` of mail shown to their player.
    pub(crate) fn mail_delivered(&self, lines: u64) {
        self.mail_delivered.increment(lines);
    }
}

/// A WebSocket handshake refused for its origin, counted from the HTTP side's own task (the
/// server's handles live on its thread).
pub(crate) fn refused_cross_origin() {
    metrics::counter!("tickstep_serve_refused_total", "reason" => Refusal::CrossOrigin.label())
        .increment(1);
}

/// The `# HELP` lines of serve's families (docs/observability.md §4.6, §8).
fn describe() {
    use metrics::{describe_counter, describe_gauge};
    describe_counter!(
        "tickstep_serve_connections_total",
        Unit::Count,
        "Connections accepted, by transport (tcp: raw lines and telnet; websocket)."
    );
    describe_gauge!(
        "tickstep_serve_connections_open",
        Unit::Count,
        "Connections open now, by transport."
    );
    describe_counter!(
        "tickstep_serve_logins_total",
        Unit::Count,
        "Password stages ended, by result: ok, new account, failed (a wrong password), locked (the address was locked out)."
    );
    describe_counter!(
        "tickstep_serve_refused_total",
        Unit::Count,
        "Requests and connections the server refused, by reason."
    );
    describe_counter!(
        "tickstep_serve_mail_posted_total",
        Unit::Count,
        "Mail lines posted for players who were away."
    );
    describe_counter!(
        "tickstep_serve_mail_delivered_total",
        Unit::Count,
        "Mail lines shown to their player at login or on arrival."
    );
}
