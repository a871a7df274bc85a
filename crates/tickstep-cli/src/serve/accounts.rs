//! Passwords: what a player's password must be, and how it is kept (docs/serve.md §10).
//!
//! A password is never stored: the registry keeps its Argon2id hash in the PHC string format
//! (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), with a fresh 16-byte salt from the operating
//! system. The parameters — [`MEMORY_KIB`] of memory, [`PASSES`] passes, one lane — are OWASP's
//! lowest recommended Argon2id setting; each hash costs about that much memory and a few tens of
//! milliseconds of one core, which is what makes guessing slow. A stored hash carries its own
//! parameters, so hashes made with other ones still verify. Hashing runs on
//! [`HASHING_THREADS`] threads of its own ([`hash`], [`verify`]), never on the server's thread,
//! so a login never delays a frame, and a flood of logins queues for them. Each thread hashes
//! in one block of memory it allocates once and keeps: allocating 19 MiB, 64-byte aligned, per
//! hash fragments the C allocator's heap so that freed blocks are not reused (100 logins left
//! the server at 380 MB resident).

use std::cell::RefCell;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{ARGON2ID_IDENT, Algorithm, Argon2, Block, Params, Version};

/// Memory per hash, KiB (19 MiB).
pub(crate) const MEMORY_KIB: u32 = 19_456;
/// Passes over that memory.
pub(crate) const PASSES: u32 = 2;
/// The threads that hash passwords, for the whole process.
pub(crate) const HASHING_THREADS: usize = 2;

/// A hashing job: it sends its own result back.
type Job = Box<dyn FnOnce() + Send>;

/// The queue of the hashing threads, started at the first use.
fn hashing_queue() -> &'static Mutex<Sender<Job>> {
    static QUEUE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (queue, jobs) = std::sync::mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        for n in 0..HASHING_THREADS {
            let jobs = Arc::clone(&jobs);
            let _ = std::thread::Builder::new()
                .name(format!("tickstep-hash-{n}"))
                .spawn(move || work(&jobs));
        }
        Mutex::new(queue)
    })
}

/// A hashing thread: takes jobs until the queue is gone.
fn work(jobs: &Mutex<Receiver<Job>>) {
    loop {
        let job = match jobs.lock() {
            Ok(jobs) => jobs.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Runs `f` on a hashing thread; `None` if the threads are gone.
async fn off_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = done.send(f());
    });
    hashing_queue().lock().ok()?.send(job).ok()?;
    result.await.ok()
}

/// The shortest password accepted, in characters.
pub(crate) const MIN_PASSWORD_CHARS: usize = 6;

/// The most memory a stored hash may ask for to be verified (a hash this server made asks for
/// [`MEMORY_KIB`]).
const MAX_MEMORY_KIB: u32 = 64 * 1024;

thread_local! {
    /// The hashing thread's working memory, allocated at its first hash and kept.
    static MEMORY: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// Argon2id of `password` and `salt` under `params`, in the thread's kept memory.
fn raw_hash(params: &Params, password: &[u8], salt: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN)];
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    MEMORY
        .with_borrow_mut(|memory| {
            if memory.len() < params.block_count() {
                memory.resize(params.block_count(), Block::default());
            }
            argon2.hash_password_into_with_memory(password, salt, &mut out, &mut memory[..])
        })
        .map_err(|e| format!("cannot hash the password: {e}"))?;
    Ok(out)
}

/// Checks a new password against the rules (docs/serve.md §10.2). The refusal names the rule,
/// never anything of the password itself, not even its length (docs/serve.md §10.11).
pub(crate) fn acceptable(password: &str) -> Result<(), String> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(format!(
            "a password has at least {MIN_PASSWORD_CHARS} characters"
        ));
    }
    if password.chars().any(char::is_control) {
        return Err("a password has no control characters".to_owned());
    }
    Ok(())
}

/// The parameters a new hash is made with: [`MEMORY_KIB`] and [`PASSES`], one lane. A test of
/// this crate may lower them for the hashes its own thread asks for ([`cheap_hashes_here`]);
/// nothing else can.
fn new_hash_params() -> Params {
    #[cfg(test)]
    if CHEAP_HERE.get() {
        return Params::new(Params::MIN_M_COST, Params::MIN_T_COST, 1, None)
            .expect("argon2's own minimums are valid");
    }
    Params::new(MEMORY_KIB, PASSES, 1, None).expect("constant parameters are valid")
}

#[cfg(test)]
thread_local! {
    /// The hashes this test thread asks for are made at argon2's minimum cost.
    static CHEAP_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// From now on the hashes this thread asks for ([`hash`], the wizard's at start) are made at
/// argon2's minimum cost (8 KiB, one pass) rather than [`MEMORY_KIB`] and [`PASSES`], so a test
/// that logs in a hundred thousand players pays microseconds a login. A stored hash carries its
/// parameters, so these verify as any other; only this crate's tests can call it.
#[cfg(test)]
pub(crate) fn cheap_hashes_here() {
    CHEAP_HERE.set(true);
}

/// The PHC string of `password` under a fresh salt, made with `params`.
fn hash_now(password: &str, params: &Params) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no random salt from the system: {e}"))?;
    let raw = raw_hash(params, password.as_bytes(), &salt)?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    let phc = PasswordHash {
        algorithm: ARGON2ID_IDENT,
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(params).map_err(|e| e.to_string())?,
        salt: Some(salt.as_salt()),
        hash: Some(Output::new(&raw).map_err(|e| e.to_string())?),
    };
    Ok(phc.to_string())
}

/// Whether `password` matches the stored PHC string (false for a string that is not one).
fn verify_now(password: &str, stored: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    if parsed.algorithm != ARGON2ID_IDENT
        || parsed.version != Some(Version::V0x13.into())
        || params.m_cost() > MAX_MEMORY_KIB
    {
        return false;
    }
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    // `Output`'s equality is constant-time.
    raw_hash(&params, password.as_bytes(), salt)
        .ok()
        .and_then(|raw| Output::new(&raw).ok())
        .is_some_and(|computed| computed == expected)
}

/// Hashes `password` on a hashing thread.
pub(crate) async fn hash(password: String) -> Result<String, String> {
    let params = new_hash_params();
    off_thread(move || hash_now(&password, &params))
        .await
        .ok_or_else(|| "the password hashing threads have stopped".to_owned())?
}

/// Verifies `password` against `stored` on a hashing thread.
pub(crate) async fn verify(password: String, stored: String) -> bool {
    off_thread(move || verify_now(&password, &stored))
        .await
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::PasswordHasher as _;

    #[test]
    fn a_hash_verifies_its_password_only_and_is_salted() {
        let params = new_hash_params();
        let one = hash_now("correct horse", &params).unwrap();
        let two = hash_now("correct horse", &params).unwrap();
        assert!(one.starts_with(&format!("$argon2id$v=19$m={MEMORY_KIB},t={PASSES},p=1$")));
        assert_ne!(one, two, "a fresh salt each time");
        assert!(verify_now("correct horse", &one));
        assert!(verify_now("correct horse", &two));
        assert!(!verify_now("correct hors", &one));
        assert!(!verify_now("correct horse", "not a hash"));
        // A hash the argon2 crate made its own way verifies too: the format is the standard one.
        let salt = SaltString::encode_b64(b"sixteen byte salt").unwrap();
        let theirs = Argon2::default()
            .hash_password(b"correct horse", &salt)
            .unwrap()
            .to_string();
        assert!(verify_now("correct horse", &theirs));
        assert!(!verify_now("wrong horse", &theirs));
    }

    #[test]
    fn the_hashing_threads_answer_many_waiters() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let stored = hash_now("pw-123456", &new_hash_params()).unwrap();
        let checks = runtime.block_on(async {
            let mut checks = Vec::new();
            for n in 0..6 {
                let guess = if n % 2 == 0 { "pw-123456" } else { "wrong-1" };
                checks.push(verify(guess.to_owned(), stored.clone()));
            }
            let mut results = Vec::new();
            for check in checks {
                results.push(check.await);
            }
            results
        });
        assert_eq!(checks, [true, false, true, false, true, false]);
    }

    #[test]
    fn cheap_hashes_are_the_asking_test_threads_alone() {
        assert_eq!(new_hash_params().m_cost(), MEMORY_KIB);
        let cheap = std::thread::spawn(|| {
            cheap_hashes_here();
            new_hash_params()
        })
        .join()
        .unwrap();
        assert_eq!((cheap.m_cost(), cheap.t_cost()), (8, 1));
        assert_eq!(
            new_hash_params().t_cost(),
            PASSES,
            "this thread's are untouched"
        );
        let stored = hash_now("pw-123456", &cheap).unwrap();
        assert!(
            stored.starts_with("$argon2id$v=19$m=8,t=1,p=1$"),
            "{stored}"
        );
        assert!(verify_now("pw-123456", &stored));
        assert!(!verify_now("pw-123457", &stored));
    }

    #[test]
    fn short_or_control_passwords_are_refused_with_the_rule() {
        assert_eq!(
            acceptable("abc"),
            Err("a password has at least 6 characters".to_owned())
        );
        assert!(acceptable("abc\x1bdef").is_err());
        assert!(acceptable("sécurité").is_ok());
    }
}
