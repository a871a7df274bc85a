//! The `serve` section's rows: round trips, the ping split, transports, the watched run against
//! the bare one, and work per CPU, each with its goal and its note.

use super::{FRAME_MS, Measured, Transport};
use crate::harness::{Measure, Row, Section};

pub(super) fn rows(ours: &Measured, echo: &[f64], scale: &str) -> Section {
    let mut rtt = ours.rtt_ms.clone();
    let mut echo = echo.to_vec();
    let (p50, p99) = (quantile(&mut rtt, 0.5), quantile(&mut rtt, 0.99));
    let echo_p50 = quantile(&mut echo, 0.5);
    let samples = rtt.len();
    vec![
        value(
            "rtt_p50",
            p50,
            "ms",
            FRAME_MS,
            format!("{samples} round trips; {scale}"),
        ),
        value(
            "rtt_p99",
            p99,
            "ms",
            FRAME_MS,
            format!(
                "goal: under one 60 fps frame; load average {:.2} at the window's end; {scale}",
                ours.load_average
            ),
        ),
        Row {
            name: "rtt_vs_echo",
            measure: Measure::Ratio {
                ours_ns: p50 * 1e6,
                peer: "bare tokio line echo, same load",
                peer_ns: echo_p50 * 1e6,
                goal_ratio: 3.0,
            },
            note: format!("p50 round trip, ours (with firings) vs a server doing no work; {scale}"),
        },
        value(
            "step_p50",
            ours.stats.step_p50_us / 1000.0,
            "ms",
            FRAME_MS,
            format!("{} frames run in the window; {scale}", ours.stats.frames),
        ),
        value(
            "step_p99",
            ours.stats.step_p99_us / 1000.0,
            "ms",
            FRAME_MS,
            format!("the server's own heartbeat time per frame; {scale}"),
        ),
        value(
            "overruns",
            ours.stats.overruns,
            "frames",
            0.0,
            format!("frames whose step exceeded the 16.7 ms period; {scale}"),
        ),
        value(
            "step_cpu_p99",
            ours.stats.step_cpu_p99_us / 1000.0,
            "ms",
            FRAME_MS,
            format!(
                "the server thread's CPU time per frame step (p50 {:.2} ms); {scale}",
                ours.stats.step_cpu_p50_us / 1000.0
            ),
        ),
        value(
            "overruns_cpu",
            ours.stats.cpu_overruns,
            "frames",
            0.0,
            format!("frames whose step took more than 16.7 ms of CPU time; {scale}"),
        ),
    ]
    .into_iter()
    .chain(split_rows(ours, scale))
    .chain(transport_rows(ours, scale))
    .chain(work_rows(ours, scale))
    .collect()
}

/// The `ping` round trip split at the server's clock (docs/serve.md §3.10): whose is the tail.
/// Informational rows, the p99 of each half with the p50 in the note.
fn split_rows(ours: &Measured, scale: &str) -> Section {
    let mut to_server: Vec<f64> = ours.split.iter().map(|s| s.0).collect();
    let mut back: Vec<f64> = ours.split.iter().map(|s| s.1).collect();
    let samples = to_server.len();
    let (to_p50, to_p99) = (
        quantile(&mut to_server, 0.5),
        quantile(&mut to_server, 0.99),
    );
    let (back_p50, back_p99) = (quantile(&mut back, 0.5), quantile(&mut back, 0.99));
    // The tail's halves: the pings over one frame, and how much of their time came after the
    // server had answered.
    let slow: Vec<&(f64, f64)> = ours
        .split
        .iter()
        .filter(|(to, back)| to + back > FRAME_MS)
        .collect();
    let slow_total: f64 = slow.iter().map(|(to, back)| to + back).sum();
    let slow_back: f64 = slow.iter().map(|(_, back)| back).sum();
    let mut lag = ours.client_lag_ms.clone();
    let lag_max = lag.iter().copied().fold(0.0, f64::max);
    let lag_lost: f64 = lag.iter().filter(|l| **l > FRAME_MS).sum();
    let lag_p99 = quantile(&mut lag, 0.99);
    vec![
        value(
            "slow_ping_back_share",
            if slow.is_empty() {
                0.0
            } else {
                slow_back / slow_total
            },
            "of the time",
            f64::INFINITY,
            format!(
                "{} of {samples} pings took over one frame; of their time this share came after \
                 the server answered (the kernel and the clients' runtime), the rest before; \
                 {scale}",
                slow.len()
            ),
        ),
        value(
            "client_lag_max",
            lag_max,
            "ms",
            f64::INFINITY,
            format!(
                "the clients' runtime's longest late wake-up (p99 {lag_p99:.2} ms of {} \
                 millisecond wake-ups; {:.0} ms lost in lags over one frame in the window); \
                 {scale}",
                lag.len(),
                lag_lost
            ),
        ),
        value(
            "ping_to_server_p99",
            to_p99,
            "ms",
            f64::INFINITY,
            format!(
                "client sent → server answered (p50 {to_p50:.2} ms; {samples} pings): the kernel and \
                 the server's runtime; {scale}"
            ),
        ),
        value(
            "ping_back_p99",
            back_p99,
            "ms",
            f64::INFINITY,
            format!(
                "server answered → client read the reply (p50 {back_p50:.2} ms): the kernel and the \
                 bench's own runtime; {scale}"
            ),
        ),
    ]
}

/// Each transport's round trip against the raw clients' in the same run (docs/serve.md §9.6).
fn transport_rows(ours: &Measured, scale: &str) -> Section {
    let p99 = |kind: usize| quantile(&mut ours.by_transport[kind].clone(), 0.99);
    let raw = p99(0);
    let mut rows = vec![value(
        "rtt_p99_raw",
        raw,
        "ms",
        FRAME_MS,
        format!(
            "a third of the clients, raw lines ({} round trips); {scale}",
            ours.by_transport[0].len()
        ),
    )];
    for (kind, (name, goal)) in [
        (1, ("rtt_p99_telnet_vs_raw", 1.1)),
        (2, ("rtt_p99_ws_vs_raw", 1.5)),
    ] {
        let transport = Transport::ALL[kind].name();
        rows.push(Row {
            name,
            measure: Measure::Ratio {
                ours_ns: p99(kind) * 1e6,
                peer: "raw-line clients of the same server, same run",
                peer_ns: raw * 1e6,
                goal_ratio: goal,
            },
            note: format!(
                "p99 round trip of a third of the clients on {transport} ({} round trips); {scale}",
                ours.by_transport[kind].len()
            ),
        });
    }
    rows
}

/// The main run (with `/metrics` and the viewers) against the same load unwatched, in the same
/// run (docs/serve.md §14.6).
pub(super) fn watched_rows(ours: &Measured, bare: &Measured, scale: &str) -> Section {
    let fewest = ours.viewer_snapshots.iter().min().copied().unwrap_or(0);
    let watching = format!(
        "/metrics on and {} dashboard viewers on /dashboard/events (each received at least {fewest} snapshots)",
        ours.viewer_snapshots.len()
    );
    // One measure of the watched run against the unwatched one, in nanoseconds.
    let against_unwatched = |name, ns: fn(&Measured) -> f64, goal_ratio, note| Row {
        name,
        measure: Measure::Ratio {
            ours_ns: ns(ours),
            peer: "the same server without /metrics and no viewer, same load, same run",
            peer_ns: ns(bare),
            goal_ratio,
        },
        note,
    };
    vec![
        against_unwatched(
            "watched_cpu_per_frame",
            |m| m.cpu_per_frame_us * 1e3,
            1.03,
            format!(
                "server process CPU per frame, {watching} vs neither ({:.0} vs {:.0} frames; {:.3} vs {:.3} cores; {} vs {} round trips); {scale}",
                ours.stats.frames,
                bare.stats.frames,
                ours.server_cores,
                bare.server_cores,
                ours.rtt_ms.len(),
                bare.rtt_ms.len()
            ),
        ),
        against_unwatched(
            "watched_cpu_per_work",
            |m| m.cpu_per_work_us * 1e3,
            1.03,
            format!(
                "server process CPU per round trip answered or firing started, {watching} vs neither: the clients wait for each reply, so a server that answers faster is sent more in the same frames; {scale}"
            ),
        ),
        value(
            "watched_overruns",
            ours.stats.overruns + ours.stats.cpu_overruns,
            "frames",
            0.0,
            format!(
                "frames over the period on the wall clock ({}) or in CPU ({}), {watching} (unwatched: {} + {}; step CPU p99 {:.2} vs {:.2} ms); {scale}",
                ours.stats.overruns,
                ours.stats.cpu_overruns,
                bare.stats.overruns,
                bare.stats.cpu_overruns,
                ours.stats.step_cpu_p99_us / 1000.0,
                bare.stats.step_cpu_p99_us / 1000.0
            ),
        ),
        against_unwatched(
            "watched_rtt_p99",
            |m| quantile(&mut m.rtt_ms.clone(), 0.99) * 1e6,
            1.1,
            format!("round-trip p99 of every client, {watching} vs neither; {scale}"),
        ),
    ]
}

/// What the server got through and what it cost: firings, CPU, memory.
fn work_rows(ours: &Measured, scale: &str) -> Section {
    vec![
        value(
            "firings_per_s",
            ours.firings_per_s,
            "firings/s",
            f64::INFINITY,
            format!(
                "started by the server in the window (due in it: {:.0}/s); {scale}",
                ours.due_per_s
            ),
        ),
        value(
            "server_cpu",
            ours.server_cores,
            "cores",
            f64::INFINITY,
            format!("CPU the server process used in the window, of 2; {scale}"),
        ),
        value(
            "clients_cpu",
            ours.clients_cores,
            "cores",
            f64::INFINITY,
            format!("CPU the bench's clients used in the window, of 2; {scale}"),
        ),
        value(
            "rss",
            ours.rss_mb,
            "MB",
            512.0,
            format!(
                "server VmRSS at the end (populating took {:.1} s); {scale}",
                ours.populate.as_secs_f64()
            ),
        ),
    ]
}

pub(crate) fn value(
    name: &'static str,
    value: f64,
    unit: &'static str,
    goal: f64,
    note: String,
) -> Row {
    Row {
        name,
        measure: Measure::Value { value, unit, goal },
        note,
    }
}

/// The `q` quantile of `samples` (sorted in place); zero for none.
pub(crate) fn quantile(samples: &mut [f64], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    let index = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
    samples[index]
}
