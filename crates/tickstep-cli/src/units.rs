//! Parsing what people type on a command line: durations (`3s`, `12ms`, `1.5m`) and loads
//! (`normal=40x150us`).

use std::time::Duration;

use tickstep::kernel::Priority;

/// Parses `<number><unit>` with unit `ns`, `us`, `ms`, `s`, `m` or `h` (`3s`, `12ms`, `1.5m`).
/// A bare number is rejected: a unit-less duration is a bug waiting to happen.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit (use ns, us, ms, s, m or h, e.g. 3s)"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a number (e.g. 3s, 12ms)"))?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "{text:?} has unknown unit {other:?} (use ns, us, ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(value * scale)
        .map_err(|_| format!("{text:?} is not a representable duration"))
}

/// [`parse_duration`], refusing zero: a run or a task that takes no time is a typo.
pub(crate) fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?} must be longer than zero"));
    }
    Ok(d)
}

/// The most tasks one priority may queue per simulated frame (a typo'd count should not take the
/// machine's memory with it).
pub(crate) const MAX_TASKS_PER_FRAME: u32 = 100_000;
/// The longest a simulated task may cost.
pub(crate) const MAX_TASK_COST: Duration = Duration::from_secs(1);

/// One priority's per-frame load: `count` tasks of `cost` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Load {
    pub(crate) priority: Priority,
    pub(crate) count: u32,
    pub(crate) cost: Duration,
}

/// Parses `PRIORITY=COUNTxCOST`, e.g. `normal=40x150us`.
pub(crate) fn parse_load(text: &str) -> Result<Load, String> {
    let shape = "expected PRIORITY=COUNTxCOST, e.g. normal=40x150us";
    let (name, rest) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: {shape}"))?;
    let priority = parse_priority(name)?;
    let (count, cost) = rest
        .split_once('x')
        .ok_or_else(|| format!("{text:?}: {shape}"))?;
    let count: u32 = count
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: task count {count:?} is not a whole number"))?;
    if count > MAX_TASKS_PER_FRAME {
        return Err(format!(
            "{text:?}: at most {MAX_TASKS_PER_FRAME} tasks per priority per frame (got {count})"
        ));
    }
    let cost = parse_duration(cost)?;
    if cost > MAX_TASK_COST {
        return Err(format!(
            "{text:?}: a task may cost at most 1s (got {cost:?})"
        ));
    }
    Ok(Load {
        priority,
        count,
        cost,
    })
}

/// Parses a priority name (`kernel`, `high`, `normal`, `low`, `background`) or level (1–5).
pub(crate) fn parse_priority(text: &str) -> Result<Priority, String> {
    let found = match text.trim().to_ascii_lowercase().as_str() {
        "kernel" | "1" => Priority::Kernel,
        "high" | "2" => Priority::High,
        "normal" | "3" => Priority::Normal,
        "low" | "4" => Priority::Low,
        "background" | "5" => Priority::Background,
        _ => {
            return Err(format!(
                "unknown priority {text:?} (use kernel, high, normal, low, background or 1-5)"
            ));
        }
    };
    Ok(found)
}

/// A duration in milliseconds with two decimals, for tables.
pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2}ms", d.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("12ms"), Ok(Duration::from_millis(12)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("3").unwrap_err().contains("no unit"));
        assert!(
            parse_duration("3 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_duration("ms").is_err());
    }

    #[test]
    fn loads_name_the_priority_count_and_cost() {
        let load = parse_load("normal=40x150us").unwrap();
        assert_eq!(load.priority, Priority::Normal);
        assert_eq!((load.count, load.cost), (40, Duration::from_micros(150)));
        assert!(
            parse_load("urgent=1x1ms")
                .unwrap_err()
                .contains("unknown priority")
        );
        assert!(
            parse_load("low=ax1ms")
                .unwrap_err()
                .contains("not a whole number")
        );
        assert!(
            parse_load("low")
                .unwrap_err()
                .contains("PRIORITY=COUNTxCOST")
        );
    }
}
