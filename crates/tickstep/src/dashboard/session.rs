//! Browser sessions (docs/serve.md §13.8): the action token is given once, at sign-in, and
//! exchanged for a random session id in an `HttpOnly`, `SameSite=Strict` cookie; each session
//! has its own CSRF token, which every action form carries. Sessions live in memory, bounded in
//! number (the oldest is evicted) and in lifetime (idle and absolute); sign-ins are rate-limited
//! per client address and overall.
//!
//! Costs: one lock and one hash lookup per request that carries the cookie; starting a session
//! when the table is full scans it once (at most [`SessionLimits::max`] entries) for the oldest.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};

/// The session cookie's name.
pub(crate) const COOKIE: &str = "tickstep_session";

/// How many sessions, how long each lives, and how many sign-ins are allowed
/// (docs/serve.md §13.8).
///
/// ```
/// let limits = tickstep::dashboard::SessionLimits::default();
/// assert_eq!(limits.max, 256);
/// assert!(limits.idle < limits.absolute);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// The most sessions held at once; a new one evicts the oldest.
    pub max: usize,
    /// A session not used for this long is over.
    pub idle: Duration,
    /// A session is over this long after its sign-in, used or not.
    pub absolute: Duration,
    /// Sign-in attempts allowed from one client address per minute.
    pub logins_per_address: u32,
    /// Sign-in attempts allowed from all addresses together per minute.
    pub logins_overall: u32,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max: 256,
            idle: Duration::from_secs(30 * 60),
            absolute: Duration::from_secs(12 * 60 * 60),
            logins_per_address: 10,
            logins_overall: 60,
        }
    }
}

/// The window sign-ins are counted in.
const WINDOW: Duration = Duration::from_secs(60);
/// The most client addresses whose sign-ins are counted at once.
const ADDRESSES: usize = 4_096;

/// Who a live session is: the name given at sign-in and the session's CSRF token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Signed {
    pub(crate) name: String,
    pub(crate) csrf: String,
}

struct Session {
    signed: Signed,
    started: Instant,
    seen: Instant,
}

/// Why a sign-in attempt is not even checked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Limited {
    /// Too many from this address in the window.
    Address,
    /// Too many from everyone in the window.
    Overall,
}

#[derive(Default)]
struct Inner {
    by_id: HashMap<String, Session>,
    /// Sign-in attempts per address in the current window, and when it began.
    attempts: HashMap<IpAddr, (Instant, u32)>,
    overall: Option<(Instant, u32)>,
}

/// The sessions of one dashboard.
pub(crate) struct Sessions {
    limits: SessionLimits,
    inner: Mutex<Inner>,
}

impl Sessions {
    pub(crate) fn new(limits: SessionLimits) -> Sessions {
        Sessions {
            limits,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere leaves the table consistent (every change is one insert or remove).
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts a sign-in attempt from `from` at `now`, or says which limit it is over.
    pub(crate) fn attempt(&self, from: IpAddr, now: Instant) -> Result<(), Limited> {
        let mut inner = self.lock();
        let fresh = |start: Instant| now.duration_since(start) >= WINDOW;
        if inner.attempts.len() >= ADDRESSES && !inner.attempts.contains_key(&from) {
            inner.attempts.retain(|_, (start, _)| !fresh(*start));
        }
        let overall = match inner.overall {
            Some((start, n)) if !fresh(start) => (start, n),
            _ => (now, 0),
        };
        if overall.1 >= self.limits.logins_overall
            || (inner.attempts.len() >= ADDRESSES && !inner.attempts.contains_key(&from))
        {
            return Err(Limited::Overall);
        }
        let mine = match inner.attempts.get(&from) {
            Some(&(start, n)) if !fresh(start) => (start, n),
            _ => (now, 0),
        };
        if mine.1 >= self.limits.logins_per_address {
            return Err(Limited::Address);
        }
        inner.overall = Some((overall.0, overall.1 + 1));
        inner.attempts.insert(from, (mine.0, mine.1 + 1));
        Ok(())
    }

    /// Starts a session for `name` at `now`: a new random id (never one the browser offered,
    /// so a planted cookie is never adopted) and CSRF token; evicts the oldest when full.
    ///
    /// # Errors
    ///
    /// The system's random source failed.
    pub(crate) fn start(&self, name: &str, now: Instant) -> Result<(String, Signed), String> {
        let id = random_hex()?;
        let signed = Signed {
            name: name.to_owned(),
            csrf: random_hex()?,
        };
        let mut inner = self.lock();
        let limits = self.limits;
        inner
            .by_id
            .retain(|_, s| !over(s, now, limits.idle, limits.absolute));
        if inner.by_id.len() >= self.limits.max.max(1) {
            let oldest = inner
                .by_id
                .iter()
                .min_by_key(|(_, s)| s.started)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                inner.by_id.remove(&oldest);
            }
        }
        inner.by_id.insert(
            id.clone(),
            Session {
                signed: signed.clone(),
                started: now,
                seen: now,
            },
        );
        Ok((id, signed))
    }

    /// The live session the request's cookie names at `now` (and marks it used), or `None`: no
    /// cookie, a cookie this dashboard never issued, or a session over (removed then).
    pub(crate) fn find(&self, headers: &HeaderMap, now: Instant) -> Option<Signed> {
        let id = cookie(headers)?;
        let mut inner = self.lock();
        let session = inner.by_id.get_mut(id)?;
        if over(session, now, self.limits.idle, self.limits.absolute) {
            inner.by_id.remove(id);
            return None;
        }
        session.seen = now;
        Some(session.signed.clone())
    }

    /// Ends the session the request's cookie names, if any.
    pub(crate) fn end(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers) {
            self.lock().by_id.remove(id);
        }
    }

    /// The `Set-Cookie` value that hands `id` to the browser: `Secure` when the dashboard is
    /// reached over TLS (docs/serve.md §13.8).
    pub(crate) fn set_cookie(&self, id: &str, secure: bool) -> String {
        let mut value = format!(
            "{COOKIE}={id}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age={}",
            self.limits.absolute.as_secs()
        );
        if secure {
            value.push_str("; Secure");
        }
        value
    }
}

/// The `Set-Cookie` value that makes the browser forget its session cookie.
pub(crate) fn clear_cookie(secure: bool) -> String {
    let mut value = format!("{COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0");
    if secure {
        value.push_str("; Secure");
    }
    value
}

fn over(session: &Session, now: Instant, idle: Duration, absolute: Duration) -> bool {
    now.saturating_duration_since(session.seen) >= idle
        || now.saturating_duration_since(session.started) >= absolute
}

/// The session id in the request's `Cookie` headers.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// 256 bits from the operating system's random source, as hex.
fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| format!("no random session id from the system: {e}"))?;
    let mut text = String::with_capacity(64);
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_cookie(id: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            format!("theme=dark; {COOKIE}={id}").parse().unwrap(),
        );
        h
    }

    fn limits() -> SessionLimits {
        SessionLimits {
            max: 2,
            idle: Duration::from_secs(60),
            absolute: Duration::from_secs(600),
            logins_per_address: 3,
            logins_overall: 5,
        }
    }

    #[test]
    fn a_session_is_found_by_its_cookie_until_idle_or_too_old() {
        // docs/serve.md §13.8: the clock is injected, nothing sleeps.
        let sessions = Sessions::new(limits());
        let t0 = Instant::now();
        let (id, signed) = sessions.start("alice", t0).unwrap();
        assert_eq!(id.len(), 64, "256 bits as hex");
        assert_ne!(id, signed.csrf);
        let h = with_cookie(&id);
        assert_eq!(
            sessions.find(&h, t0 + Duration::from_secs(59)),
            Some(signed.clone())
        );
        // Used at 59 s, so still live at 118 s; idle from then on.
        assert!(sessions.find(&h, t0 + Duration::from_secs(118)).is_some());
        assert!(sessions.find(&h, t0 + Duration::from_secs(178)).is_none());
        assert!(sessions.find(&h, t0).is_none(), "removed once over");

        // Used every 50 s, it still ends 600 s after sign-in.
        let (id, _) = sessions.start("bob", t0).unwrap();
        let h = with_cookie(&id);
        for s in (50..600).step_by(50) {
            assert!(
                sessions.find(&h, t0 + Duration::from_secs(s)).is_some(),
                "{s}"
            );
        }
        assert!(sessions.find(&h, t0 + Duration::from_secs(600)).is_none());
    }

    #[test]
    fn a_cookie_never_issued_or_ended_finds_nothing_and_the_oldest_is_evicted() {
        let sessions = Sessions::new(limits());
        let t0 = Instant::now();
        assert!(sessions.find(&with_cookie(&"0".repeat(64)), t0).is_none());
        assert!(sessions.find(&HeaderMap::new(), t0).is_none());
        let (a, _) = sessions.start("a", t0).unwrap();
        let (b, _) = sessions.start("b", t0 + Duration::from_secs(1)).unwrap();
        let (c, _) = sessions.start("c", t0 + Duration::from_secs(2)).unwrap();
        let now = t0 + Duration::from_secs(3);
        assert!(
            sessions.find(&with_cookie(&a), now).is_none(),
            "the oldest went"
        );
        assert!(sessions.find(&with_cookie(&b), now).is_some());
        sessions.end(&with_cookie(&c));
        assert!(sessions.find(&with_cookie(&c), now).is_none());
    }

    #[test]
    fn sign_ins_are_limited_per_address_and_overall_per_minute() {
        let sessions = Sessions::new(limits());
        let t0 = Instant::now();
        let one: IpAddr = [10, 0, 0, 1].into();
        let two: IpAddr = [10, 0, 0, 2].into();
        for _ in 0..3 {
            assert_eq!(sessions.attempt(one, t0), Ok(()));
        }
        assert_eq!(sessions.attempt(one, t0), Err(Limited::Address));
        assert_eq!(sessions.attempt(two, t0), Ok(()));
        assert_eq!(sessions.attempt(two, t0), Ok(()));
        assert_eq!(sessions.attempt(two, t0), Err(Limited::Overall));
        let later = t0 + WINDOW;
        assert_eq!(sessions.attempt(one, later), Ok(()), "a new minute");
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_behind_tls() {
        let sessions = Sessions::new(SessionLimits::default());
        let plain = sessions.set_cookie("abc", false);
        assert_eq!(
            plain,
            "tickstep_session=abc; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200"
        );
        assert!(sessions.set_cookie("abc", true).ends_with("; Secure"));
        assert!(clear_cookie(false).contains("Max-Age=0"));
    }
}
