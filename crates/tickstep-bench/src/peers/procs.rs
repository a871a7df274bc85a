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
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}
