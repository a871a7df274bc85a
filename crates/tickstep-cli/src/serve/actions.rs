//! The dashboard's actions (docs/serve.md §13.8): stop, pause, resume and trigger a schedule by a
//! POST to `/dashboard/schedules/ID/ACTION`, only when an action token is configured, carrying
//! that token, from no page or a page of this server, acting as one named player under the
//! schedules engine's permission rules — the same commands, answers and quota counts as that
//! player typing `stop ID` on the line protocol.
//!
//! Costs: one parse of a form of at most [`MAX_FORM`] bytes, then the command on the server's
//! thread between frames, as a typed one.

use axum::http::{HeaderMap, StatusCode, header};

use super::origin::same_origin;
use super::protocol::Request;

/// The largest form body accepted (docs/serve.md §13.8).
pub(crate) const MAX_FORM: usize = 4 * 1024;
/// The shortest action token accepted at start.
pub(crate) const MIN_TOKEN: usize = 16;

/// Who the dashboard's actions act as, and the token that allows them.
#[derive(Clone)]
pub(crate) struct ActionGrant {
    pub(crate) token: std::sync::Arc<str>,
    /// The player name the actions act as.
    pub(crate) name: String,
}

/// Reads the token from `path`: its first line, at least [`MIN_TOKEN`] bytes.
pub(crate) fn read_token(path: &std::path::Path) -> Result<std::sync::Arc<str>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--action-token-file {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.len() < MIN_TOKEN || token.chars().any(char::is_control) {
        return Err(format!(
            "--action-token-file {}: the token must be one line of at least {MIN_TOKEN} bytes \
             (docs/serve.md §13.8)",
            path.display()
        ));
    }
    Ok(token.into())
}

/// The command an action stands for, or why the request is refused (status and sentence).
pub(crate) fn check(
    grant: Option<&ActionGrant>,
    headers: &HeaderMap,
    id: u64,
    action: &str,
    form: &[(String, String)],
) -> Result<Request, (StatusCode, String)> {
    let refuse = |status, why: &str| Err((status, format!("{why} (docs/serve.md §13.8)\n")));
    let Some(grant) = grant else {
        return refuse(
            StatusCode::FORBIDDEN,
            "the dashboard is read-only: start serve with --action-token-file to allow actions",
        );
    };
    if !same_origin(headers)
        || headers
            .get("sec-fetch-site")
            .is_some_and(|v| v != "same-origin" && v != "none")
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "an action from a page of another origin is refused",
        );
    }
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let given = field("token").unwrap_or("");
    if !same_bytes(given.as_bytes(), grant.token.as_bytes()) {
        return refuse(StatusCode::FORBIDDEN, "a wrong or missing action token");
    }
    Ok(match action {
        "stop" => Request::Stop(id),
        "pause" => Request::Pause {
            id,
            note: field("note").unwrap_or("").to_owned(),
        },
        "resume" => Request::Resume(id),
        "trigger" => Request::Trigger(id),
        other => {
            return Err((
                StatusCode::NOT_FOUND,
                format!(
                    "no action {other:?}: stop, pause, resume or trigger (docs/serve.md §13.8)\n"
                ),
            ));
        }
    })
}

/// The status a command's reply stands for: `ok:` is done; a schedule the acting player may not
/// see, missing or another's, `404` under the one wording of docs/serve.md §4.7 (so the status
/// tells no more than the reply); any other permission refusal (`E_PERM`) `403`; any other
/// refusal `400` (docs/serve.md §13.8).
pub(crate) fn status_of(reply: &str) -> StatusCode {
    if reply.starts_with("ok:") {
        StatusCode::SEE_OTHER
    } else if reply.starts_with("error: you have no schedule #")
        || reply.starts_with("error: there is no schedule #")
    {
        StatusCode::NOT_FOUND
    } else if reply.contains("E_PERM") {
        StatusCode::FORBIDDEN
    } else {
        StatusCode::BAD_REQUEST
    }
}

/// Whether the form's content type is `application/x-www-form-urlencoded`.
pub(crate) fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
}

/// Compares in time that depends on the length only, not on where the bytes first differ.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
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
    fn replies_map_to_statuses() {
        // docs/serve.md §13.8, §4.7
        assert_eq!(status_of("ok: paused #3"), StatusCode::SEE_OTHER);
        assert_eq!(
            status_of("error: you have no schedule #3"),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status_of("error: there is no schedule #3"),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status_of("error: E_PERM: #2 may not use #3: not the owner"),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status_of("error: the note has a control character"),
            StatusCode::BAD_REQUEST
        );
    }
}
