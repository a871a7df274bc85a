//! One error convention (docs/README.md, "Errors"): an error's `Display` describes that error
//! alone, and its cause comes only from `source()`. A reporter that walks the chain (as
//! `ErrorChain` does) then prints each cause once.
//!
//! The test makes real chained errors of every layer the facade reaches (a failing command, a
//! store that cannot be opened, a store directory that cannot be made) and walks each chain.

use std::error::Error;
use std::time::Duration;

use tickstep::commands::{Command, CommandScheduler};
use tickstep::host::HostError;
use tickstep::kernel::{ErrorChain, ManualClock};
use tickstep::{Runtime, RuntimeError};

/// The first link of `error`'s chain whose message repeats its cause's message, as
/// `(message, cause)`; `None` when every link describes only itself.
fn repeated_cause(error: &(dyn Error + 'static)) -> Option<(String, String)> {
    let mut link = error;
    while let Some(cause) = link.source() {
        let (message, cause_message) = (link.to_string(), cause.to_string());
        if message.contains(&cause_message) {
            return Some((message, cause_message));
        }
        link = cause;
    }
    None
}

/// How long a chain is: the error and its causes.
fn chain_len(error: &(dyn Error + 'static)) -> usize {
    let mut len = 1;
    let mut link = error;
    while let Some(cause) = link.source() {
        len += 1;
        link = cause;
    }
    len
}

fn failing_command() -> Command {
    Command::no_requirements()
        .executing_fallible(|_co| async move { Err("motor stalled".into()) })
        .named("intake")
}

#[test]
fn a_failed_command_names_itself_and_chains_the_bodys_error() {
    let scheduler = CommandScheduler::new(ManualClock::new());
    scheduler.schedule(&failing_command());
    let err = scheduler.run().unwrap_err();
    assert_eq!(repeated_cause(&err), None);
    assert_eq!(
        err.source().map(ToString::to_string).as_deref(),
        Some("motor stalled")
    );
    let report = ErrorChain(&err).to_string();
    assert_eq!(report.matches("motor stalled").count(), 1, "{report}");

    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .in_memory_store()
        .build()
        .expect("an in-memory runtime builds");
    rt.commands().schedule(&failing_command());
    let err = rt.run_for(Duration::from_millis(100)).unwrap_err();
    assert!(matches!(err, RuntimeError::Command(_)), "{err:?}");
    assert_eq!(repeated_cause(&err), None);
    assert_eq!(
        ErrorChain(&err)
            .to_string()
            .matches("motor stalled")
            .count(),
        1
    );
}

#[test]
fn a_store_that_cannot_be_opened_or_placed_reports_each_cause_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A directory where the store file should be: the engine cannot read it.
    let store_is_a_dir = dir.path().join("store.db");
    std::fs::create_dir(&store_is_a_dir).expect("a directory");
    let err = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(&store_is_a_dir)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, RuntimeError::Host(HostError::Store { .. })),
        "{err:?}"
    );
    assert!(
        chain_len(&err) >= 2,
        "the runtime and the schedules engine: {err:?}"
    );
    assert_eq!(repeated_cause(&err), None);

    // A regular file where the store's directory should be.
    let file = dir.path().join("plain");
    std::fs::write(&file, b"not a directory").expect("a file");
    let err = Runtime::builder()
        .manual_clock(ManualClock::new())
        .store_path(file.join("sub").join("store.db"))
        .build()
        .unwrap_err();
    assert!(
        matches!(err, RuntimeError::Host(HostError::StoreDir { .. })),
        "{err:?}"
    );
    assert!(chain_len(&err) >= 2);
    assert_eq!(repeated_cause(&err), None);
    let report = ErrorChain(&err).to_string();
    let os = err.source().expect("the OS error").to_string();
    assert_eq!(report.matches(os.as_str()).count(), 1, "{report}");
}

/// An error written the other way: its message prints its cause, which it also chains.
#[derive(Debug)]
struct SaysItsCauseTwice(std::io::Error);

impl std::fmt::Display for SaysItsCauseTwice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot save: {}", self.0)
    }
}

impl Error for SaysItsCauseTwice {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

#[test]
fn the_check_catches_a_message_that_repeats_its_cause() {
    let err = SaysItsCauseTwice(std::io::Error::other("disk full"));
    assert_eq!(
        repeated_cause(&err),
        Some(("cannot save: disk full".to_owned(), "disk full".to_owned()))
    );
    // The reporter still prints the cause once (a foreign error, such as rusqlite's, may be
    // written this way).
    assert_eq!(ErrorChain(&err).to_string(), "cannot save: disk full");
}
