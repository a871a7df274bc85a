//! Errors: typed, named after the rule they break, carrying the offending value.

use std::time::Duration;

use crate::{FramePhase, Role};

/// Why a scheduler call was refused. Nothing was created or changed when one is returned.
///
/// The messages follow docs/kernel.md §5.2 and §10.6 where they quote one, e.g.
/// `Scheduler.every interval must be a finite number >= 0 (got NaN)`.
///
/// ```
/// use tickstep_kernel::ScheduleError;
/// let err = tickstep_kernel::seconds_to_duration("every", f64::NAN).unwrap_err();
/// assert_eq!(err.to_string(), "Scheduler.every interval must be a finite number >= 0 (got NaN)");
/// assert!(matches!(err, ScheduleError::InvalidSeconds { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// A delay or interval given as `f64` seconds was NaN, negative or infinite.
    #[error("Scheduler.{api} {what} must be a finite number >= 0 (got {value})")]
    InvalidSeconds {
        /// `"after"` or `"every"`.
        api: &'static str,
        /// `"delay"` or `"interval"`.
        what: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// A delay or interval so large the deadline would pass the end of the clock's timeline.
    #[error(
        "Scheduler.{api} {what} must be a finite number >= 0 that keeps the deadline on the clock (got {delay:?}, which overflows it)"
    )]
    DeadlineOverflow {
        /// `"after"` or `"every"`.
        api: &'static str,
        /// `"delay"` or `"interval"`.
        what: &'static str,
        /// The rejected delay or interval.
        delay: Duration,
    },
    /// A numeric priority was NaN (fractional and out-of-range numbers are floored and clamped).
    #[error("Scheduler priority must be a number from 1 (Kernel) to 5 (Background) (got {value})")]
    InvalidPriority {
        /// The rejected value.
        value: f64,
    },
    /// A PreRender scheduler was asked for (or bound) on a server.
    #[error("PreRender schedulers are client-only")]
    PreRenderOnServer,
    /// [`FrameScheduler::schedule_entry`](crate::FrameScheduler::schedule_entry) on an entry that is already
    /// queued or running: queuing one entry twice would run it twice.
    #[error(
        "Scheduler.schedule_entry: entry is already queued or running (queue it again after it runs)"
    )]
    EntryBusy,
    /// [`FrameScheduler::schedule_entry`](crate::FrameScheduler::schedule_entry) on a cancelled entry, or one
    /// that belongs to another scheduler.
    #[error("Scheduler.schedule_entry: entry is cancelled or belongs to another scheduler")]
    EntryCancelled,
    /// Overload diagnostics were enabled on a client; they are published on the server only.
    #[error("Kernel diagnostics are server-only (this kernel's role is {role:?})")]
    DiagnosticsServerOnly {
        /// The kernel's role.
        role: Role,
    },
    /// A scheduler was bound to a frame loop that does not run its phase.
    #[error("this frame loop does not run the {phase:?} phase")]
    PhaseNotRun {
        /// The scheduler's phase.
        phase: FramePhase,
    },
}

/// Why a frame loop was refused: its settings, not a scheduler call (docs/kernel.md §10.2).
///
/// ```
/// use tickstep_kernel::{FrameLoop, FrameLoopError, ManualClock, Role};
/// let err = FrameLoop::try_new(ManualClock::new(), Role::Server, 0).unwrap_err();
/// assert_eq!(err, FrameLoopError::InvalidFrameRate { fps: 0 });
/// assert_eq!(err.to_string(), "FrameLoop target frame rate must be 1 to 1000 fps (got 0)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameLoopError {
    /// The frame loop's target frame rate is outside 1–1000 fps.
    #[error("FrameLoop target frame rate must be 1 to 1000 fps (got {fps})")]
    InvalidFrameRate {
        /// The rejected frame rate.
        fps: u32,
    },
}

/// Converts `f64` seconds from a script or config into a [`Duration`], with the checks of
/// docs/kernel.md §5.2.
///
/// `api` names the call (`"after"` or `"every"`) so the message reads as in
/// docs/kernel.md §5.2:
/// `Scheduler.after delay must be a finite number >= 0 (got -1)`. Any other `api` is reported as
/// a `"value"`.
///
/// # Errors
///
/// [`ScheduleError::InvalidSeconds`] for NaN, negative or infinite values;
/// [`ScheduleError::DeadlineOverflow`] for finite values too large for a `Duration`.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::seconds_to_duration;
/// assert_eq!(seconds_to_duration("after", 0.25), Ok(Duration::from_millis(250)));
/// assert_eq!(
///     seconds_to_duration("after", -1.0).unwrap_err().to_string(),
///     "Scheduler.after delay must be a finite number >= 0 (got -1)"
/// );
/// assert!(seconds_to_duration("every", f64::INFINITY).is_err());
/// ```
pub fn seconds_to_duration(api: &'static str, seconds: f64) -> Result<Duration, ScheduleError> {
    let what = match api {
        "after" => "delay",
        "every" => "interval",
        _ => "value",
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(ScheduleError::InvalidSeconds {
            api,
            what,
            value: seconds,
        });
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| ScheduleError::DeadlineOverflow {
        api,
        what,
        delay: Duration::MAX,
    })
}

/// The message of a caught panic: its `&str` or `String` payload, or `Box<dyn Any>` (what the
/// standard library prints) for any other payload. Every layer reports panics through this one.
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("boom {}", 7)).unwrap_err();
/// assert_eq!(tickstep_kernel::panic_message(payload.as_ref()), "boom 7");
/// let other = std::panic::catch_unwind(|| std::panic::panic_any(42)).unwrap_err();
/// assert_eq!(tickstep_kernel::panic_message(other.as_ref()), "Box<dyn Any>");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_owned()
    }
}

/// An error and its causes on one line, `outer: cause: root cause`: how a reporter prints an
/// error, since every tickstep error's `Display` describes that error alone and its cause comes
/// only from [`source`](std::error::Error::source) (docs/README.md, "Errors"). Every layer's
/// reporters print errors through this one.
///
/// ```
/// use std::{error::Error, fmt};
/// use tickstep_kernel::ErrorChain;
///
/// #[derive(Debug)]
/// struct Open(std::io::Error);
/// impl fmt::Display for Open {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("cannot open the store") // this error alone
///     }
/// }
/// impl Error for Open {
///     fn source(&self) -> Option<&(dyn Error + 'static)> {
///         Some(&self.0) // its cause
///     }
/// }
///
/// let err = Open(std::io::Error::other("disk full"));
/// assert_eq!(err.to_string(), "cannot open the store");
/// assert_eq!(ErrorChain(&err).to_string(), "cannot open the store: disk full");
/// ```
#[derive(Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    /// Each error once. A foreign error that breaks the rule and prints its cause in its own
    /// message is not repeated: a cause the error before already ended with is left out, and a
    /// cause that only adds a prefix to the error before it (`SQLite`'s
    /// `Error code 778: disk I/O error` under rusqlite's `disk I/O error`) adds that prefix in
    /// parentheses.
    ///
    /// ```
    /// use std::{error::Error, fmt};
    /// use tickstep_kernel::ErrorChain;
    ///
    /// #[derive(Debug)]
    /// struct Failure(Code);
    /// # impl fmt::Display for Failure {
    /// #     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str("disk I/O error") }
    /// # }
    /// # impl Error for Failure {
    /// #     fn source(&self) -> Option<&(dyn Error + 'static)> { Some(&self.0) }
    /// # }
    /// #[derive(Debug)]
    /// struct Code; // a foreign error whose message repeats the one above it
    /// # impl fmt::Display for Code {
    /// #     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    /// #         f.write_str("Error code 778: disk I/O error")
    /// #     }
    /// # }
    /// # impl Error for Code {}
    ///
    /// assert_eq!(ErrorChain(&Failure(Code)).to_string(), "disk I/O error (Error code 778)");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut before = self.0.to_string();
        write!(f, "{before}")?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            let text = error.to_string();
            if text.is_empty() || before.ends_with(&text) {
                // Printed already, by the error before it.
            } else if let Some(prefix) = text
                .strip_suffix(before.as_str())
                .and_then(|prefix| prefix.strip_suffix(": "))
            {
                write!(f, " ({prefix})")?;
            } else {
                write!(f, ": {text}")?;
            }
            before = text;
            cause = error.source();
        }
        Ok(())
    }
}

impl std::fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
