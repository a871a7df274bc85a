//! The cost of recording (docs/observability.md §5): one metric update beside a bare atomic
//! increment, and one kernel step with the metrics recorded into a Prometheus recorder against
//! the same step with no recorder installed, in the same run.
//!
//! ```text
//! cargo bench -p tickstep --features prometheus --bench metrics
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use metrics_exporter_prometheus::PrometheusBuilder;
use tickstep::kernel::{FrameScheduler, ManualClock, Priority, SchedulerConfig};

/// One update: a bare atomic, a no-op handle (no recorder), a Prometheus counter and histogram.
fn update(c: &mut Criterion) {
    let mut group = c.benchmark_group("metric_update");
    let bare = AtomicU64::new(0);
    group.bench_function("bare_atomic_increment", |b| {
        b.iter(|| black_box(&bare).fetch_add(1, Ordering::Relaxed));
    });
    let noop = metrics::counter!("bench_noop_total");
    group.bench_function("counter_no_recorder", |b| {
        b.iter(|| black_box(&noop).increment(1));
    });
    let recorder = PrometheusBuilder::new().build_recorder();
    let (counter, histogram) = metrics::with_local_recorder(&recorder, || {
        (
            metrics::counter!("bench_total"),
            metrics::histogram!("bench_seconds"),
        )
    });
    group.bench_function("counter_prometheus", |b| {
        b.iter(|| black_box(&counter).increment(1));
    });
    group.bench_function("histogram_prometheus", |b| {
        b.iter(|| black_box(&histogram).record(black_box(0.001)));
    });
    group.finish();
}

/// One step of 16 tasks on a scheduler whose handles are no-ops against one recording into a
/// Prometheus recorder (its handles registered under that recorder).
fn frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("step_16_tasks");
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let off = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    let on = metrics::with_local_recorder(&recorder, || {
        FrameScheduler::new(ManualClock::new(), SchedulerConfig::server())
    });
    for (name, sched) in [("metrics_off", &off), ("metrics_on", &on)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..16 {
                    let _ = sched.schedule(|| {}, Priority::Normal);
                }
                sched.step_with_budget(Duration::from_secs(1));
            });
        });
    }
    group.finish();
    assert!(handle.render().contains("tickstep_kernel_steps_total"));
}

criterion_group!(benches, update, frame);
criterion_main!(benches);
