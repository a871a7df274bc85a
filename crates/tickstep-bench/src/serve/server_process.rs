//! The server under load as a process: building and starting `tickstep serve` on loopback with
//! its store on tmpfs, and reading its memory and CPU from `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::PATIENCE;

/// The server process; killed if the bench ends early.
pub(crate) struct ServerProcess {
    pub(crate) child: Child,
    pub(crate) addr: String,
    /// The browser side's address (`--ws`).
    pub(crate) ws: String,
    pub(crate) dir: tempfile::TempDir,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench knows where it is");
    let binary = exe.with_file_name(format!("tickstep{}", std::env::consts::EXE_SUFFIX));
    if !binary.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "tickstep-cli"]);
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building tickstep-cli failed");
    }
    binary
}

/// Every bench player's password, and the wizard's.
pub(crate) const BENCH_PASSWORD: &str = "bench-password";

pub(super) fn start_server(quota: usize, metrics: bool) -> ServerProcess {
    let quota = quota.to_string();
    let mut args = vec!["--quota", &quota];
    if !metrics {
        args.push("--no-metrics");
    }
    // Every client connects from loopback: the per-address limits would take them for one
    // player's twenty names (docs/serve.md §11); the per-player rate would slow the setup.
    start_server_with(
        &args,
        &[
            "--names-per-address",
            "0",
            "--creates-per-address",
            "0",
            "--creates-per-player",
            "0",
        ],
    )
}

/// Starts `tickstep serve` on a free loopback port and a store on tmpfs, with `args` after the
/// bench's own, and `limits` (the fair-use flags).
pub(crate) fn start_server_with(args: &[&str], limits: &[&str]) -> ServerProcess {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .expect("a temporary directory");
    let mut child = Command::new(server_binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--wizard", "bench"])
        .args(["--ws", "127.0.0.1:0"])
        .arg("--db")
        .arg(dir.path().join("serve.db"))
        .args(args)
        .args(limits)
        .env("TICKSTEP_WIZARD_PASSWORD", BENCH_PASSWORD)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        // Keep draining after the addresses, so the server never blocks on stdout.
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let printed = |prefix: &str| loop {
        let line = rx
            .recv_timeout(PATIENCE)
            .expect("the server prints its addresses");
        if let Some(rest) = line.strip_prefix(prefix) {
            return rest.trim_end_matches('/').to_owned();
        }
    };
    let addr = printed("tickstep serve: listening on ");
    let ws = printed("tickstep serve: browsers on http://");
    ServerProcess {
        child,
        addr,
        ws,
        dir,
    }
}

pub(super) fn rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// CPU seconds process `pid` has used (user + system, every thread), from `/proc/PID/stat` in
/// clock ticks of 1/100 s (Linux's `USER_HZ`); `NaN` where it cannot be read.
pub(crate) fn cpu_seconds(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // Fields after the command name (which may hold spaces), counted from `state` (3).
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let user: f64 = fields.get(14 - 3)?.parse().ok()?;
            let system: f64 = fields.get(15 - 3)?.parse().ok()?;
            Some((user + system) / 100.0)
        })
        .unwrap_or(f64::NAN)
}
