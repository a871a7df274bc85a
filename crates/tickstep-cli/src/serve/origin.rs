//! Where a request comes from: no page at all (a program such as curl), or a page this server
//! served. The WebSocket handshake (docs/serve.md §9.4) and the dashboard's actions (the CSRF
//! guard of docs/serve.md §13.8) both refuse a page of another origin.

use axum::http::{HeaderMap, header};

/// Whether the request comes from no page (a program) or from a page this server served: its
/// `Origin` names the `Host` it was sent to.
pub(crate) fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = origin.to_str().ok();
    matches!((origin, host), (Some(o), Some(h)) if o.strip_prefix("http://") == Some(h) || o.strip_prefix("https://") == Some(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_page_of_this_origin_may_open_a_websocket() {
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
}
