//! Passwords: what a player's password must be, and how it is kept (docs/serve.md §8).
//!
//! A password is never stored: the registry keeps its Argon2id hash in the PHC string format
//! (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), with a fresh 16-byte salt from the operating
//! system. The parameters — [`MEMORY_KIB`] of memory, [`PASSES`] passes, one lane — are OWASP's
//! lowest recommended Argon2id setting; each hash costs about that much memory and a few tens of
//! milliseconds of one core, which is what makes guessing slow. A stored hash carries its own
//! parameters, so hashes made with other ones still verify. Hashing runs on tokio's blocking
//! pool ([`hash`], [`verify`]), never on the server's thread, so a login never delays a frame,
//! and at most [`HASHING_AT_ONCE`] at a time, so a flood of logins queues instead of taking
//! 19 MiB and a thread each.

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

/// Memory per hash, KiB (19 MiB).
pub(crate) const MEMORY_KIB: u32 = 19_456;
/// Passes over that memory.
pub(crate) const PASSES: u32 = 2;
/// Hashes computed at once, on the whole server.
pub(crate) const HASHING_AT_ONCE: usize = 2;
static HASHING: Semaphore = Semaphore::const_new(HASHING_AT_ONCE);

/// The shortest password accepted, in characters.
pub(crate) const MIN_PASSWORD_CHARS: usize = 6;

fn argon2() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, PASSES, 1, None).expect("constant parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Checks a new password against the rules (docs/serve.md §8.2).
pub(crate) fn acceptable(password: &str) -> Result<(), String> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Err(format!(
            "a password has at least {MIN_PASSWORD_CHARS} characters (that one has {chars})"
        ));
    }
    if password.chars().any(char::is_control) {
        return Err("a password has no control characters".to_owned());
    }
    Ok(())
}

/// The PHC string of `password` under a fresh salt.
fn hash_now(password: &str) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no random salt from the system: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| format!("cannot hash the password: {e}"))
}

/// Whether `password` matches the stored PHC string (false for a string that is not one).
fn verify_now(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|parsed| {
        argon2()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// Hashes `password` on the blocking pool.
pub(crate) async fn hash(password: String) -> Result<String, String> {
    let _turn = HASHING.acquire().await.map_err(|e| e.to_string())?;
    tokio::task::spawn_blocking(move || hash_now(&password))
        .await
        .map_err(|e| format!("the hashing task failed: {e}"))?
}

/// Verifies `password` against `stored` on the blocking pool.
pub(crate) async fn verify(password: String, stored: String) -> bool {
    let Ok(_turn) = HASHING.acquire().await else {
        return false;
    };
    tokio::task::spawn_blocking(move || verify_now(&password, &stored))
        .await
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only_and_is_salted() {
        let one = hash_now("correct horse").unwrap();
        let two = hash_now("correct horse").unwrap();
        assert!(one.starts_with(&format!("$argon2id$v=19$m={MEMORY_KIB},t={PASSES},p=1$")));
        assert_ne!(one, two, "a fresh salt each time");
        assert!(verify_now("correct horse", &one));
        assert!(verify_now("correct horse", &two));
        assert!(!verify_now("correct hors", &one));
        assert!(!verify_now("correct horse", "not a hash"));
    }

    #[test]
    fn short_or_control_passwords_are_refused_with_the_rule() {
        assert_eq!(
            acceptable("abc"),
            Err("a password has at least 6 characters (that one has 3)".to_owned())
        );
        assert!(acceptable("abc\x1bdef").is_err());
        assert!(acceptable("sécurité").is_ok());
    }
}
