//! A `metrics` recorder that keeps counters, for an engine built inside
//! [`metrics::with_local_recorder`]: what the engine counted, read back by name and labels.

/// Counters by name and labels, for the engine built inside [`metrics::with_local_recorder`].
#[derive(Default)]
pub struct Counters(
    std::sync::Mutex<
        std::collections::HashMap<String, std::sync::Arc<std::sync::atomic::AtomicU64>>,
    >,
);

impl Counters {
    /// The counter `name` with `labels` (`key=value`, comma-separated, in registration order);
    /// 0 if never registered.
    pub fn get(&self, name: &str, labels: &str) -> u64 {
        self.0
            .lock()
            .unwrap()
            .get(&format!("{name}{{{labels}}}"))
            .map_or(0, |c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl metrics::Recorder for Counters {
    fn describe_counter(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_gauge(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_histogram(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn register_counter(&self, key: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        let name = format!("{}{{{}}}", key.name(), labels.join(","));
        let counter = self.0.lock().unwrap().entry(name).or_default().clone();
        metrics::Counter::from_arc(counter)
    }
    fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }
    fn register_histogram(
        &self,
        _: &metrics::Key,
        _: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        metrics::Histogram::noop()
    }
}
