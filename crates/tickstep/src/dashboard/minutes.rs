//! The last hour, a minute at a time (docs/serve.md §13.18): firings started, faults, points
//! missed by reason and the lateness of the minute's starts, in a ring of 60 fixed buckets.
//!
//! A runtime's ring is fed from running counts ([`Totals`]: the host core's `HostCounts` and the
//! engine's [`EngineTally`]) once a second by the live view's loop: each read's difference from
//! the one before goes to the minute it was read in. A store alone has no engine; its hour is
//! rebuilt at each request from the kept history records and the last-miss times
//! ([`Minutes::of_store`]). Either way the page and the live JSON get the same [`Minutes::json`].
//!
//! Costs: the ring is 60 buckets of 48 counters, allocated once; an update is a subtraction and
//! an addition of those counters, with no allocation and no pass over the schedules table.

use crate::schedules::{EngineTally, FiringRecord, LatenessBuckets, MissedReason};

/// How many minutes the ring keeps: the last hour.
pub(crate) const KEPT: usize = 60;
const REASONS: usize = MissedReason::ALL.len();

/// Running counts, from when they started: a runtime's, read once a second.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) firings: u64,
    pub(crate) faults: u64,
    pub(crate) missed_by: [u64; REASONS],
    pub(crate) lateness: LatenessBuckets,
}

impl Totals {
    /// A runtime's counts: starts and lateness as the engine counts them, faults as the host
    /// does (a firing that faulted or could not start).
    pub(crate) fn of(host: &crate::host::HostCounts, tally: &EngineTally) -> Totals {
        Totals {
            firings: tally.started,
            faults: host.firings_faulted + host.firings_not_started,
            missed_by: tally.missed_by,
            lateness: tally.lateness,
        }
    }
}

/// One minute's counts.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Minute {
    /// The minute these are (Unix seconds / 60); a slot holding another minute is stale.
    at: u64,
    firings: u64,
    faults: u64,
    missed_by: [u64; REASONS],
    lateness: LatenessBuckets,
}

impl Minute {
    fn add(&mut self, more: &Totals) {
        self.firings += more.firings;
        self.faults += more.faults;
        for (mine, theirs) in self.missed_by.iter_mut().zip(more.missed_by) {
            *mine += theirs;
        }
        self.lateness.add(&more.lateness);
    }

    fn missed(&self) -> u64 {
        self.missed_by.iter().sum()
    }
}

/// The last hour in minutes (docs/serve.md §13.18).
#[derive(Debug)]
pub(crate) struct Minutes {
    slots: Box<[Minute]>,
    /// The previous read and the counts it saw.
    last: Option<Totals>,
    /// The newest minute seen.
    now: u64,
}

impl Default for Minutes {
    fn default() -> Self {
        Minutes {
            slots: vec![Minute::default(); KEPT].into_boxed_slice(),
            last: None,
            now: 0,
        }
    }
}

impl Minutes {
    /// Takes a read of running counts at `unix_nanos`: what changed since the last read is
    /// counted in this minute. The first read only sets where counting starts.
    pub(crate) fn observe(&mut self, unix_nanos: u64, totals: &Totals) {
        let before = self.last.replace(*totals).unwrap_or(*totals);
        let mut change = Totals {
            firings: totals.firings.saturating_sub(before.firings),
            faults: totals.faults.saturating_sub(before.faults),
            missed_by: [0; REASONS],
            lateness: totals.lateness.since(&before.lateness),
        };
        for ((out, now), then) in change
            .missed_by
            .iter_mut()
            .zip(totals.missed_by)
            .zip(before.missed_by)
        {
            *out = now.saturating_sub(then);
        }
        self.slot(unix_nanos).add(&change);
    }

    /// The bucket of the minute holding `unix_nanos`, emptied if it held an older minute.
    fn slot(&mut self, unix_nanos: u64) -> &mut Minute {
        let at = unix_nanos / 60_000_000_000;
        self.now = self.now.max(at);
        let slot = &mut self.slots[(at % KEPT as u64) as usize];
        if slot.at != at {
            *slot = Minute {
                at,
                ..Minute::default()
            };
        }
        slot
    }

    /// A store's last hour before `now_unix_nanos`: each kept firing record started in it (its
    /// outcome and lateness) and each schedule whose last miss falls in it, counted once with
    /// the reason of that miss — a store keeps when the last miss was, not each one's time.
    /// `schedules` gives each schedule's last miss (`MissedPoints::last`) and kept history.
    pub(crate) fn of_store<'a>(
        now_unix_nanos: u64,
        schedules: impl IntoIterator<Item = (Option<(f64, MissedReason)>, &'a [FiringRecord])>,
    ) -> Minutes {
        let mut minutes = Minutes::default();
        let now_minute = now_unix_nanos / 60_000_000_000;
        minutes.now = now_minute;
        let first = (now_minute + 1).saturating_sub(KEPT as u64) * 60_000_000_000;
        let within = |seconds: f64| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let nanos = (seconds * 1e9) as u64;
            (first..=now_unix_nanos).contains(&nanos).then_some(nanos)
        };
        for (last_miss, history) in schedules {
            for record in history {
                if let Some(at) = within(record.started) {
                    let mut one = Totals {
                        firings: 1,
                        faults: u64::from(record.fault.is_some()),
                        ..Totals::default()
                    };
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    one.lateness.record((record.lateness() * 1e9) as u64);
                    minutes.slot(at).add(&one);
                }
            }
            if let Some((when, reason)) = last_miss
                && let Some(at) = within(when)
            {
                let mut one = Totals::default();
                one.missed_by[reason as usize] = 1;
                minutes.slot(at).add(&one);
            }
        }
        minutes
    }

    /// The hour as the page and the live JSON carry it (docs/serve.md §13.18): `start` (Unix
    /// seconds of the oldest minute), per minute oldest first `firings`, `faults`, `missed` and
    /// the lateness `p50` and `p99` (seconds, a bucket's upper bound), and over the hour
    /// `missed_by` (reason to count) and `hour_p50`, `hour_p99`, `hour_samples`.
    pub(crate) fn json(&self) -> serde_json::Value {
        let first = (self.now + 1).saturating_sub(KEPT as u64);
        let minutes: Vec<Minute> = (first..=self.now)
            .map(|at| {
                let slot = self.slots[(at % KEPT as u64) as usize];
                if slot.at == at {
                    slot
                } else {
                    Minute {
                        at,
                        ..Minute::default()
                    }
                }
            })
            .collect();
        let mut hour = Minute::default();
        for m in &minutes {
            hour.add(&Totals {
                firings: m.firings,
                faults: m.faults,
                missed_by: m.missed_by,
                lateness: m.lateness,
            });
        }
        let series = |f: &dyn Fn(&Minute) -> serde_json::Value| -> Vec<serde_json::Value> {
            minutes.iter().map(f).collect()
        };
        let missed_by: serde_json::Map<String, serde_json::Value> = MissedReason::ALL
            .into_iter()
            .map(|r| (r.as_str().to_owned(), hour.missed_by[r as usize].into()))
            .collect();
        serde_json::json!({
            "start": first * 60,
            "firings": series(&|m| m.firings.into()),
            "faults": series(&|m| m.faults.into()),
            "missed": series(&|m| m.missed().into()),
            "p50": series(&|m| m.lateness.quantile(0.50).into()),
            "p99": series(&|m| m.lateness.quantile(0.99).into()),
            "missed_by": missed_by,
            "hour_p50": hour.lateness.quantile(0.50),
            "hour_p99": hour.lateness.quantile(0.99),
            "hour_samples": hour.lateness.samples(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::kernel::clock::{Clock, ManualClock};

    /// Running counts after `firings` starts, each 3 ms late, half of them faults, each with a
    /// missed point.
    fn at(firings: u64) -> Totals {
        let mut lateness = LatenessBuckets::default();
        for _ in 0..firings {
            lateness.record(3_000_000);
        }
        Totals {
            firings,
            faults: firings / 2,
            missed_by: [firings, 0, 0, 0, 0],
            lateness,
        }
    }

    fn column(json: &serde_json::Value, name: &str) -> Vec<u64> {
        json[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    }

    #[test]
    fn counts_go_to_the_minute_they_were_read_in() {
        // docs/serve.md §13.18: minute boundaries, on the manual clock.
        let clock = ManualClock::starting_at_unix_nanos(1_800_000_000 * 1_000_000_000);
        let mut minutes = Minutes::default();
        minutes.observe(clock.unix_nanos(), &at(5));
        let json = minutes.json();
        assert_eq!(
            column(&json, "firings").iter().sum::<u64>(),
            0,
            "the first read sets the start"
        );
        assert_eq!(json["start"], 1_800_000_000 / 60 * 60 - 59 * 60);
        // 1,800,000,000 s is 0 s into its minute: 59 s later is the same minute, 60 s the next.
        clock.advance(Duration::from_secs(59));
        minutes.observe(clock.unix_nanos(), &at(8));
        clock.advance(Duration::from_secs(1));
        minutes.observe(clock.unix_nanos(), &at(9));
        let json = minutes.json();
        let firings = column(&json, "firings");
        assert_eq!(firings.len(), KEPT);
        assert_eq!(
            firings[KEPT - 2..],
            [3, 1],
            "3 in the first minute, 1 in the next"
        );
        assert_eq!(column(&json, "missed")[KEPT - 2..], [3, 1]);
        assert_eq!(column(&json, "faults")[KEPT - 2..], [2, 0]);
        assert_eq!(
            json["p99"][KEPT - 1],
            0.004_096,
            "3 ms late reads as up to 4.096 ms"
        );
        assert_eq!(json["p50"][KEPT - 3], 0.0, "an idle minute is on time");
        assert_eq!(json["missed_by"]["catchup"], 4);
        assert_eq!(json["hour_samples"], 4);
    }

    #[test]
    fn idle_minutes_are_zero_and_an_hour_later_the_ring_has_wrapped() {
        // docs/serve.md §13.18
        let clock = ManualClock::starting_at_unix_nanos(1_800_000_000 * 1_000_000_000);
        let mut minutes = Minutes::default();
        minutes.observe(clock.unix_nanos(), &at(0));
        clock.advance(Duration::from_secs(30));
        minutes.observe(clock.unix_nanos(), &at(7));
        // Ten idle minutes: nothing read in them.
        clock.advance(Duration::from_secs(600));
        minutes.observe(clock.unix_nanos(), &at(9));
        let firings = column(&minutes.json(), "firings");
        assert_eq!(firings[KEPT - 11..], [7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        // 59 minutes on, the first busy minute is the oldest shown; one more and it is gone,
        // though its slot is the one the new minute reuses.
        clock.advance(Duration::from_secs(49 * 60));
        minutes.observe(clock.unix_nanos(), &at(9));
        let firings = column(&minutes.json(), "firings");
        assert_eq!((firings[0], firings.iter().sum::<u64>()), (7, 9));
        clock.advance(Duration::from_secs(60));
        minutes.observe(clock.unix_nanos(), &at(10));
        let firings = column(&minutes.json(), "firings");
        assert_eq!(firings.iter().sum::<u64>(), 3, "the 7 fell out of the hour");
        assert_eq!(firings[KEPT - 1], 1, "the reused slot starts from zero");
    }

    #[test]
    fn a_store_counts_its_kept_records_and_last_misses_of_the_hour() {
        // docs/serve.md §13.18: what a store alone can tell.
        let now = 1_800_000_030.0; // 30 s into a minute
        let record = |started: f64, fault: bool| FiringRecord {
            started,
            ended: started + 0.1,
            nominal: started - 0.5,
            fault: fault.then(|| crate::schedules::Fault {
                kind: crate::schedules::FaultKind::Error,
                value: crate::schedules::Value::from("E_INVARG"),
            }),
        };
        let history = [
            record(now - 10.0, false),
            record(now - 70.0, true),
            record(now - 3_700.0, false), // over an hour ago
        ];
        let last_miss = Some((now - 5.0, MissedReason::Overlap));
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let minutes = Minutes::of_store((now * 1e9) as u64, [(last_miss, &history[..])]);
        let json = minutes.json();
        assert_eq!(column(&json, "firings")[KEPT - 2..], [1, 1]);
        assert_eq!(column(&json, "faults")[KEPT - 2..], [1, 0]);
        assert_eq!(column(&json, "missed")[KEPT - 1], 1);
        assert_eq!(json["missed_by"]["overlap"], 1);
        assert_eq!(json["hour_p50"], 0.524_288, "0.5 s late, up to 2^19 µs");
    }
}
