//! Who may act (docs/serve.md §13.8): the action token, read from a file and compared in constant
//! time, and the CSRF guard — a request from a page of another origin is refused.
//!
//! Costs: one parse of a form of at most [`MAX_FORM`] bytes and one comparison per action.

use std::path::Path;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

use super::session::Signed;

/// The largest action form body accepted (docs/serve.md §13.8).
pub const MAX_FORM: usize = 4 * 1024;
/// The shortest action token accepted.
pub const MIN_TOKEN: usize = 16;

/// What allows a dashboard's actions: the token a form must carry, and the name of the principal
/// they act as (docs/serve.md §13.8). Without one the dashboard is read-only.
///
/// ```
/// use tickstep::dashboard::ActionGrant;
/// let grant = ActionGrant::new("0123456789abcdef", "wizard").unwrap();
/// assert_eq!(grant.name(), "wizard");
/// assert!(ActionGrant::new("short", "wizard").is_err());
/// ```
#[derive(Clone)]
pub struct ActionGrant {
    token: Arc<str>,
    name: String,
}

impl std::fmt::Debug for ActionGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("ActionGrant")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ActionGrant {
    /// A grant of `token` (one line of at least [`MIN_TOKEN`] bytes, no control character)
    /// acting as `name`.
    ///
    /// # Errors
    ///
    /// A sentence naming the rule when the token is too short or has a control character.
    ///
    /// ```
    /// assert!(tickstep::dashboard::ActionGrant::new("a\tb-0123456789abcdef", "w").is_err());
    /// ```
    pub fn new(token: &str, name: impl Into<String>) -> Result<ActionGrant, String> {
        if token.len() < MIN_TOKEN || token.chars().any(char::is_control) {
            return Err(format!(
                "the action token must be one line of at least {MIN_TOKEN} bytes without \
                 control characters (docs/serve.md §13.8)"
            ));
        }
        Ok(ActionGrant {
            token: token.into(),
            name: name.into(),
        })
    }

    /// Reads the token from the first line of the file at `path` (`--action-token-file`).
    ///
    /// # Errors
    ///
    /// A sentence naming the file when it cannot be read or its first line is not a token.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("token");
    /// std::fs::write(&path, "0123456789abcdef\n").unwrap();
    /// let grant = tickstep::dashboard::ActionGrant::from_file(&path, "ops").unwrap();
    /// assert_eq!(grant.name(), "ops");
    /// ```
    pub fn from_file(path: &Path, name: impl Into<String>) -> Result<ActionGrant, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--action-token-file {}: {e}", path.display()))?;
        let token = text.lines().next().unwrap_or("").trim();
        ActionGrant::new(token, name)
            .map_err(|why| format!("--action-token-file {}: {why}", path.display()))
    }

    /// The name of the principal the actions act as.
    ///
    /// ```
    /// # let grant = tickstep::dashboard::ActionGrant::new("0123456789abcdef", "ops").unwrap();
    /// assert_eq!(grant.name(), "ops");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `given` is the token, compared in constant time.
    pub(crate) fn matches(&self, given: &str) -> bool {
        same_bytes(given.as_bytes(), self.token.as_bytes())
    }
}

/// The actions a schedule's page and the list offer, by their routes' names (docs/serve.md
/// §13.8, §13.16).
pub(crate) const ACTIONS: [&str; 4] = ["pause", "resume", "trigger", "stop"];

/// A dashboard action on one schedule (docs/serve.md §13.8).
///
/// ```
/// use tickstep::dashboard::Action;
/// assert_eq!(Action::Pause { note: "maintenance".into() }.name(), "pause");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Stop it (remove it).
    Stop,
    /// Pause it, with a note.
    Pause {
        /// Why, as typed in the form (may be empty).
        note: String,
    },
    /// Resume it.
    Resume,
    /// Fire it once now.
    Trigger,
}

impl Action {
    /// The action's name in its route.
    ///
    /// ```
    /// assert_eq!(tickstep::dashboard::Action::Trigger.name(), "trigger");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Action::Stop => "stop",
            Action::Pause { .. } => "pause",
            Action::Resume => "resume",
            Action::Trigger => "trigger",
        }
    }
}

/// Whether the request comes from no page (a program such as curl) or from a page this server
/// served (the host's [`same_origin`](tickstep_host::same_origin), docs/serve.md §13.8).
fn same_origin(headers: &HeaderMap) -> bool {
    tickstep_host::same_origin(
        headers.get(header::ORIGIN).map(HeaderValue::as_bytes),
        headers.get(header::HOST).map(HeaderValue::as_bytes),
    )
}

/// A refusal: the status and the sentence, citing the rule.
pub(crate) type Refusal = (StatusCode, String);

fn refusal(status: StatusCode, why: &str) -> Refusal {
    (status, format!("{why} (docs/serve.md §13.8)\n"))
}

/// The refusal of an action on a read-only dashboard.
pub(crate) fn read_only() -> Refusal {
    refusal(
        StatusCode::FORBIDDEN,
        "the dashboard is read-only: start it with --action-token-file to allow actions",
    )
}

/// The refusal of a body that is not a form.
pub(crate) fn not_a_form() -> Refusal {
    refusal(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "an action is a form: application/x-www-form-urlencoded",
    )
}

/// The refusal of a session's form without its CSRF token.
pub(crate) fn bad_csrf() -> Refusal {
    refusal(
        StatusCode::FORBIDDEN,
        "a wrong or missing CSRF token: reload the page and try again",
    )
}

/// The CSRF guard: a request from a page of another origin (its `Origin`, or its
/// `Sec-Fetch-Site` neither `same-origin` nor `none`) is refused.
pub(crate) fn same_site(headers: &HeaderMap) -> Result<(), Refusal> {
    if !same_origin(headers)
        || headers
            .get("sec-fetch-site")
            .is_some_and(|v| v != "same-origin" && v != "none")
    {
        return Err(refusal(
            StatusCode::FORBIDDEN,
            "an action from a page of another origin is refused",
        ));
    }
    Ok(())
}

/// Who asks for an action, by name, or why not: a form carrying `token=` is a script's (curl)
/// and acts under the grant's name; any other needs a live session and its CSRF token.
pub(crate) fn who(
    grant: Option<&ActionGrant>,
    headers: &HeaderMap,
    form: &[(String, String)],
    signed: Option<&Signed>,
) -> Result<String, Refusal> {
    let Some(grant) = grant else {
        return Err(read_only());
    };
    same_site(headers)?;
    if let Some(given) = field(form, "token") {
        return if grant.matches(given) {
            Ok(grant.name().to_owned())
        } else {
            Err(refusal(StatusCode::FORBIDDEN, "a wrong action token"))
        };
    }
    let Some(signed) = signed else {
        return Err(refusal(
            StatusCode::FORBIDDEN,
            "sign in first at /dashboard/login (or give the action token as token=)",
        ));
    };
    let csrf = field(form, "csrf").unwrap_or("");
    if !same_bytes(csrf.as_bytes(), signed.csrf.as_bytes()) {
        return Err(bad_csrf());
    }
    Ok(signed.name.clone())
}

/// The action named `action`, with its note from the form.
pub(crate) fn action_named(action: &str, form: &[(String, String)]) -> Result<Action, Refusal> {
    Ok(match action {
        "stop" => Action::Stop,
        "pause" => Action::Pause {
            note: field(form, "note").unwrap_or("").to_owned(),
        },
        "resume" => Action::Resume,
        "trigger" => Action::Trigger,
        other => return Err(no_action(other)),
    })
}

/// The refusal of an action by a name there is none of (`404`).
pub(crate) fn no_action(name: &str) -> Refusal {
    (
        StatusCode::NOT_FOUND,
        format!(
            "no action {:?}: stop, pause, resume or trigger (docs/serve.md §13.8)\n",
            name.chars().take(40).collect::<String>()
        ),
    )
}

/// The action a form stands for and who asks for it, or why the request is refused.
pub(crate) fn check(
    grant: Option<&ActionGrant>,
    headers: &HeaderMap,
    action: &str,
    form: &[(String, String)],
    signed: Option<&Signed>,
) -> Result<(Action, String), Refusal> {
    let by = who(grant, headers, form, signed)?;
    Ok((action_named(action, form)?, by))
}

/// A pause's note with who did it, so the schedule itself says (docs/serve.md §13.17).
pub(crate) fn signed_note(note: &str, by: &str) -> String {
    if note.is_empty() {
        format!("by {by} on the dashboard")
    } else {
        format!("{note} (by {by} on the dashboard)")
    }
}

fn field<'f>(form: &'f [(String, String)], name: &str) -> Option<&'f str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Whether the form's content type is `application/x-www-form-urlencoded`.
pub(crate) fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
}

/// Compares in time that depends on the length only, not on where the bytes first differ.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same_bytes(b"abcdefgh", b"abcdefgh"));
        assert!(!same_bytes(b"abcdefgh", b"abcdefgX"));
        assert!(!same_bytes(b"abc", b"abcd"));
        assert!(!same_bytes(b"", b"a"));
    }

    #[test]
    fn only_a_page_of_this_origin_may_act() {
        let headers = |origin: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, "127.0.0.1:4001".parse().unwrap());
            if let Some(o) = origin {
                h.insert(header::ORIGIN, o.parse().unwrap());
            }
            h
        };
        assert!(same_origin(&headers(None)));
        assert!(same_origin(&headers(Some("http://127.0.0.1:4001"))));
        assert!(!same_origin(&headers(Some("http://evil.example"))));
        assert!(!same_origin(&headers(Some("http://127.0.0.1:4002"))));
    }

    #[test]
    fn a_form_needs_the_grant_the_origin_and_the_token_or_a_session_and_its_csrf() {
        // docs/serve.md §13.8
        let grant = ActionGrant::new("0123456789abcdef", "w").unwrap();
        let form = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
        let token = form("token", "0123456789abcdef");
        let h = HeaderMap::new();
        let refused = |r: Result<(Action, String), Refusal>| r.unwrap_err().0;
        assert_eq!(
            refused(check(None, &h, "stop", &token, None)),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            refused(check(
                Some(&grant),
                &h,
                "stop",
                &form("token", "wrong"),
                None
            )),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            refused(check(Some(&grant), &h, "melt", &token, None)),
            StatusCode::NOT_FOUND
        );
        let mut cross = HeaderMap::new();
        cross.insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert_eq!(
            refused(check(Some(&grant), &cross, "stop", &token, None)),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            check(Some(&grant), &h, "stop", &token, None),
            Ok((Action::Stop, "w".to_owned()))
        );
        // A session acts with its CSRF token, never without, and not from another site.
        let alice = Signed {
            name: "alice".into(),
            csrf: "c".repeat(64),
        };
        let csrf = form("csrf", &alice.csrf);
        assert_eq!(
            check(Some(&grant), &h, "resume", &csrf, Some(&alice)),
            Ok((Action::Resume, "alice".to_owned()))
        );
        assert_eq!(
            refused(check(Some(&grant), &h, "resume", &[], Some(&alice))),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            refused(check(
                Some(&grant),
                &h,
                "resume",
                &form("csrf", &"d".repeat(64)),
                Some(&alice)
            )),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            refused(check(Some(&grant), &h, "resume", &csrf, None)),
            StatusCode::FORBIDDEN,
            "a CSRF token without its session"
        );
        assert_eq!(
            refused(check(Some(&grant), &cross, "resume", &csrf, Some(&alice))),
            StatusCode::FORBIDDEN
        );
    }
}
