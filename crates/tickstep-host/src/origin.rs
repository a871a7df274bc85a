//! Whether a web request comes from a page of the host's own origin: the check every host that
//! serves people over HTTP makes before it acts for a browser — the dashboard's actions
//! (docs/serve.md §13.8) and `tickstep serve`'s WebSocket handshake (docs/serve.md §9.4). It reads
//! two header values as bytes, so a host needs no HTTP crate of this one's choosing.

/// Whether a request with these `Origin` and `Host` header values comes from no page (a program
/// such as curl sends no `Origin`) or from a page this server served: its `Origin` is `http://`
/// or `https://` followed by the `Host` it was sent to. A value that is not UTF-8 matches nothing.
///
/// ```
/// use tickstep_host::same_origin;
/// assert!(same_origin(None, Some(b"example.org")));
/// assert!(same_origin(Some(b"https://example.org"), Some(b"example.org")));
/// assert!(!same_origin(Some(b"https://evil.example"), Some(b"example.org")));
/// assert!(!same_origin(Some(b"https://example.org"), None));
/// ```
pub fn same_origin(origin: Option<&[u8]>, host: Option<&[u8]>) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let host = host.and_then(|h| std::str::from_utf8(h).ok());
    let origin = std::str::from_utf8(origin).ok();
    matches!((origin, host), (Some(o), Some(h)) if o.strip_prefix("http://") == Some(h) || o.strip_prefix("https://") == Some(h))
}
