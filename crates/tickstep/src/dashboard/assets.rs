//! The dashboard's static files (docs/serve.md §13.3): one stylesheet, one script and the icon,
//! compiled into the binary and served at `/dashboard/static/NAME-HASH.EXT`, the hash being of
//! the file's bytes, so a page always names the version it was rendered with and a browser may
//! keep each file for a year. `/favicon.ico` answers with the same icon.
//!
//! Costs: each file's name is made once, at first use; a request copies nothing (the bytes are
//! `'static`).

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One static file: the path pages link to, its type and its bytes.
pub(crate) struct Asset {
    pub(crate) path: String,
    content_type: &'static str,
    body: &'static str,
}

impl Asset {
    fn new(stem: &str, ext: &str, content_type: &'static str, body: &'static str) -> Asset {
        Asset {
            path: format!(
                "/dashboard/static/{stem}-{:012x}.{ext}",
                fnv1a(body.as_bytes()) >> 16
            ),
            content_type,
            body,
        }
    }

    fn response(&self, cache: &'static str) -> Response {
        (
            [
                (header::CONTENT_TYPE, self.content_type),
                (header::CACHE_CONTROL, cache),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            self.body,
        )
            .into_response()
    }
}

/// The stylesheet every page links.
pub(crate) static STYLE: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "dashboard",
        "css",
        "text/css; charset=utf-8",
        include_str!("static/dashboard.css"),
    )
});

/// The script every page runs: local times on hover, and the live view where a page has one.
pub(crate) static SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "dashboard",
        "js",
        "text/javascript; charset=utf-8",
        include_str!("static/dashboard.js"),
    )
});

/// The icon, also at `/favicon.ico`.
pub(crate) static ICON: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "favicon",
        "svg",
        "image/svg+xml",
        include_str!("static/favicon.svg"),
    )
});

/// A year: a file's name changes with its bytes, so a cached copy is never stale.
const FOREVER: &str = "public, max-age=31536000, immutable";

/// The routes of the static files and `/favicon.ico`.
pub(crate) fn routes() -> Router {
    Router::new()
        .route("/dashboard/static/{name}", get(file))
        // Browsers ask for it unprompted; a day, since its name cannot change.
        .route(
            "/favicon.ico",
            get(|| async { ICON.response("public, max-age=86400") }),
        )
}

async fn file(Path(name): Path<String>) -> Response {
    [&*STYLE, &*SCRIPT, &*ICON]
        .into_iter()
        .find(|a| a.path.rsplit('/').next() == Some(name.as_str()))
        .map_or_else(
            || {
                (
                    StatusCode::NOT_FOUND,
                    format!(
                        "no static file {:?} here: the pages name the current ones \
                         (docs/serve.md §13.3)\n",
                        name.chars().take(80).collect::<String>()
                    ),
                )
                    .into_response()
            },
            |asset| asset.response(FOREVER),
        )
}

/// FNV-1a, 64 bits: enough to tell one version of a file from the next.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_a_hash_of_the_bytes() {
        let name = STYLE.path.strip_prefix("/dashboard/static/dashboard-");
        let (hash, ext) = name.unwrap().split_once('.').unwrap();
        assert_eq!((hash.len(), ext), (12, "css"), "{}", STYLE.path);
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(fnv1a(b"a"), fnv1a(b"b"));
    }
}
