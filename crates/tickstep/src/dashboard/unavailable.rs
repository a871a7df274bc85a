//! Why a store's dashboard could not be built: the store named, its error kept typed.

use crate::schedules::{Error, display_location};
use std::path::Path;

/// The store [`store_router`](super::store_router) was given could not be opened or read as a
/// schedule store. Its message names the store (a `PostgreSQL` password shown as `***`); the
/// store's own [`Error`] is its [`source`](std::error::Error::source), to match on or to print
/// whole with [`ErrorChain`](crate::kernel::ErrorChain).
///
/// ```
/// use tickstep::kernel::ErrorChain;
/// let dir = tempfile::tempdir().unwrap();
/// let missing = dir.path().join("none.db");
/// let error = tickstep::dashboard::store_router(&missing, Default::default()).unwrap_err();
/// assert_eq!(error.location(), missing.display().to_string());
/// assert!(matches!(error.error(), tickstep::schedules::Error::Store { .. }));
/// assert!(ErrorChain(&error).to_string().starts_with(&format!("{}: ", missing.display())));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{location}: the schedule store cannot be shown")]
pub struct StoreUnavailable {
    location: String,
    #[source]
    error: Error,
}

impl StoreUnavailable {
    pub(super) fn new(location: &Path, error: Error) -> Self {
        StoreUnavailable {
            location: display_location(location),
            error,
        }
    }

    /// The store's location as it may be shown: a `PostgreSQL` URL's password hidden.
    ///
    /// ```
    /// let error = tickstep::dashboard::store_router("no/such/dir/s.db".as_ref(), Default::default())
    ///     .unwrap_err();
    /// assert_eq!(error.location(), "no/such/dir/s.db");
    /// ```
    pub fn location(&self) -> &str {
        &self.location
    }

    /// What the store said.
    ///
    /// ```
    /// let error = tickstep::dashboard::store_router("no/such/dir/s.db".as_ref(), Default::default())
    ///     .unwrap_err();
    /// println!("{}", error.error());
    /// ```
    pub fn error(&self) -> &Error {
        &self.error
    }
}
