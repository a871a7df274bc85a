//! The signals that ask a process to stop, as one future (feature `tokio`; docs/runtime.md
//! §5.12): `driver.run_until(tickstep::shutdown_signal()).await` stops a
//! [`TokioDriver`](crate::TokioDriver) program cleanly on Ctrl-C, on SIGTERM — the signal
//! systemd, Docker and Kubernetes send to stop a service — and on SIGHUP, so a redeployed node
//! commits its store and, on `PostgreSQL`, hands its schedules back at once rather than after its
//! lease (docs/schedules.md §11.26).

use std::future::Future;

/// Completes at the first Ctrl-C (SIGINT) or, on Unix, SIGTERM or SIGHUP (the terminal went
/// away) that arrives after the call: the signals that ask a service to stop (docs/runtime.md
/// §9.24).
///
/// On Unix the handlers are registered when it is called, not when it is first polled: a signal
/// that arrives while the program is still starting (before the driver first waits) is kept for
/// the future instead of ending the process by its default action, uncleanly. A handler the
/// system refuses is logged (`tracing`) and left out, its signal keeping its default action.
/// Elsewhere it is tokio's `ctrl_c()`, listening from its first poll.
///
/// # Panics
///
/// Outside a tokio runtime whose I/O driver is enabled (`enable_io()` or `enable_all()`), as
/// tokio's own signal handlers do.
///
/// ```
/// # let threads = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// tokio::task::LocalSet::new().block_on(&threads, async {
///     let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
///     let stop = tickstep::shutdown_signal(); // listening from here on
///     // What a service manager does to stop the service:
///     std::process::Command::new("kill").args(["-TERM", &std::process::id().to_string()]).status()?;
///     driver.run_until(stop).await?; // ends at the signal, having committed the store
///     Ok::<(), Box<dyn std::error::Error>>(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(unix)]
pub fn shutdown_signal() -> impl Future<Output = ()> + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let mut listening: Vec<_> = [
        ("SIGINT", SignalKind::interrupt()),
        ("SIGTERM", SignalKind::terminate()),
        ("SIGHUP", SignalKind::hangup()),
    ]
    .into_iter()
    .filter_map(|(name, kind)| {
        signal(kind)
            .inspect_err(|error| {
                tracing::warn!(%error, signal = name, "cannot listen for the signal; it keeps its default action");
            })
            .ok()
    })
    .collect();
    // Neither registered: never completes, and the signals end the process as they would have.
    std::future::poll_fn(move |cx| {
        if listening.iter_mut().any(|s| s.poll_recv(cx).is_ready()) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
}

/// Completes at the first Ctrl-C (see the Unix version's docs; here tokio's `ctrl_c()`).
#[cfg(not(unix))]
pub fn shutdown_signal() -> impl Future<Output = ()> + 'static {
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
