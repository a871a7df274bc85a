//! CPU time of processes and the machine's load, from `/proc`.

use std::fs;

/// Clock ticks per second of `/proc/<pid>/stat`'s times (`getconf CLK_TCK`; 100 on Linux).
fn ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// `(ppid, utime + stime, cutime + cstime)` of `pid` in clock ticks, or `None` once it is gone.
fn stat(pid: u32) -> Option<(u32, u64, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    // rest[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
    Some((
        u32::try_from(num(1)?).ok()?,
        num(11)? + num(12)?,
        num(13)? + num(14)?,
    ))
}

/// CPU seconds `pid` has used so far (its own threads, not its children).
pub(crate) fn cpu_seconds(pid: u32) -> f64 {
    stat(pid).map_or(0.0, |(_, own, _)| own as f64) / ticks_per_second()
}

/// CPU seconds of a whole `PostgreSQL` server so far: the postmaster, every live child
/// (backends, WAL writer, checkpointer…) and the children it has reaped, which the kernel adds
/// to its `cutime`.
pub(crate) fn server_cpu_seconds(postmaster: u32) -> f64 {
    let Some((_, own, reaped)) = stat(postmaster) else {
        return 0.0;
    };
    let mut ticks = own + reaped;
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            if let Some((ppid, own, _)) = stat(pid)
                && ppid == postmaster
            {
                ticks += own;
            }
        }
    }
    ticks as f64 / ticks_per_second()
}

/// The postmaster of the server a backend `pid` belongs to.
pub(crate) fn parent(pid: u32) -> Option<u32> {
    stat(pid).map(|(ppid, _, _)| ppid)
}

/// `/proc/loadavg`'s three averages, as written.
pub(crate) fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_owned(),
        |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_from_proc() {
        assert_eq!(
            parent(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
        // Burn CPU until the kernel's tick-granular count shows it (bounded in rounds).
        let mut x = 0_u64;
        for round in 0..2_000 {
            for i in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            if cpu_seconds(std::process::id()) > 0.0 {
                return;
            }
            assert!(round < 1_999, "no CPU time counted after 200 million steps");
        }
    }

    #[test]
    fn a_process_that_is_gone_counts_nothing() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let pid = child.id();
        child.wait().expect("reaped");
        assert_eq!(parent(pid), None);
        assert!(cpu_seconds(pid).abs() < f64::EPSILON);
    }

    #[test]
    fn loadavg_is_three_numbers() {
        let load = loadavg();
        let numbers: Vec<f64> = load.split(' ').filter_map(|n| n.parse().ok()).collect();
        assert_eq!(numbers.len(), 3, "{load}");
    }
}
