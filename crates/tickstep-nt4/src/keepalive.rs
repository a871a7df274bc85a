//! The server's side of WebSocket keepalive for one client (docs/nt4.md §4.4): a ping every
//! `ping_interval`, and a client whose pong has not come within `ping_timeout` is gone.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// What the writer should do now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing until [`Keepalive::due`].
    Wait,
    /// Send a ping, then call [`Keepalive::sent`].
    Ping,
    /// The last ping went unanswered for `ping_timeout`: close the client.
    TimedOut,
}

pub(crate) struct Keepalive {
    interval: Duration,
    timeout: Duration,
    next_ping: Instant,
    /// When the unanswered ping went out, and the pong count then.
    unanswered: Option<(Instant, u64)>,
    /// Pongs the client's reader has seen.
    pongs: Arc<AtomicU64>,
}

impl Keepalive {
    pub(crate) fn new(interval: Duration, timeout: Duration, now: Instant) -> Self {
        Self {
            interval,
            timeout,
            next_ping: now + interval,
            unanswered: None,
            pongs: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The counter the reader bumps on every pong.
    pub(crate) fn pongs(&self) -> Arc<AtomicU64> {
        self.pongs.clone()
    }

    /// When the writer must wake next: the next ping, or the unanswered one's deadline.
    pub(crate) fn due(&self) -> Instant {
        self.unanswered
            .map_or(self.next_ping, |(sent, _)| sent + self.timeout)
    }

    pub(crate) fn step(&mut self, now: Instant) -> Step {
        if let Some((sent, seen)) = self.unanswered {
            if self.pongs.load(Ordering::Relaxed) > seen {
                self.unanswered = None;
            } else if now.duration_since(sent) >= self.timeout {
                return Step::TimedOut;
            } else {
                return Step::Wait;
            }
        }
        if now >= self.next_ping {
            Step::Ping
        } else {
            Step::Wait
        }
    }

    pub(crate) fn sent(&mut self, now: Instant) {
        self.unanswered = Some((now, self.pongs.load(Ordering::Relaxed)));
        self.next_ping = now + self.interval;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ping_is_answered_or_times_out() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut k = Keepalive::new(ms(10), ms(30), start);
        assert_eq!(k.step(start), Step::Wait);
        assert_eq!(k.due(), start + ms(10));
        assert_eq!(k.step(start + ms(10)), Step::Ping);
        k.sent(start + ms(10));
        assert_eq!(k.due(), start + ms(40));
        assert_eq!(k.step(start + ms(20)), Step::Wait);
        k.pongs().fetch_add(1, Ordering::Relaxed);
        assert_eq!(
            k.step(start + ms(20)),
            Step::Ping,
            "answered: the next ping is due"
        );
        k.sent(start + ms(20));
        assert_eq!(k.step(start + ms(49)), Step::Wait);
        assert_eq!(k.step(start + ms(50)), Step::TimedOut);
    }
}
