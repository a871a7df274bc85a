//! A job node: a durable job that runs every second, on a `Runtime` driven by tokio, stopped
//! cleanly by SIGTERM or Ctrl-C (docs/runtime.md §5.12–§5.14).
//!
//! ```sh
//! cargo run -p tickstep --features tokio --example job_node                  # SQLite: ./job_node.db
//! cargo run -p tickstep --features tokio,postgres --example job_node -- postgres://user@host/db
//! ```
//!
//! Run it twice on one `PostgreSQL` URL and you have two nodes: the job runs on one of them. Stop
//! that one (Ctrl-C, or `kill PID`, the SIGTERM a service manager sends) and it commits its store
//! and hands the job back as it exits; the other node takes the job at its next claim, a third
//! of its lease later, instead of waiting for the stopped node's lease to run out. A restart
//! finds the job it made before: the job has a key, so it is made once, whatever the number of
//! nodes and restarts. An optional second argument sets this node's lease in seconds (10 by
//! default); the crate's test `tests/job_node.rs` runs two of these nodes on `PostgreSQL`.
//!
//! Dependencies: `tickstep = { version = "0.1", features = ["tokio", "postgres"] }` (leave
//! `postgres` out for `SQLite` alone) and `tokio = { version = "1", features = ["rt"] }`.

use std::time::Duration;

use tickstep::schedules::{Namespace, ObjId, Options, Value};
use tickstep::{Runtime, TokioDriver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let store = args.next().unwrap_or_else(|| "job_node.db".to_owned());
    let lease = match args.next() {
        Some(seconds) => Duration::from_secs(seconds.parse()?),
        None => Duration::from_secs(10),
    };
    // The driver's future is `!Send`: `block_on` polls it on this thread, which is all it needs
    // (docs/runtime.md §5.16). No `LocalSet`: nothing else here holds the runtime.
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    threads.block_on(node(&store, lease))
}

/// Runs one node on `store` (a file path, or a `postgres://` URL) until SIGTERM or Ctrl-C.
///
/// # Errors
///
/// When the store cannot be opened or committed, or the job cannot be made.
pub async fn node(store: &str, lease: Duration) -> Result<(), Box<dyn std::error::Error>> {
    // Listen for SIGTERM and Ctrl-C from here on, so one that comes while the node starts is
    // kept for the driver instead of killing the process uncleanly.
    let stop = tickstep::shutdown_signal();
    let builder = Runtime::builder()
        .store_path(store)
        // Every node of this service shares one namespace in the store, whatever its binary is
        // called (docs/runtime.md §6.6).
        .namespace(Namespace::new("job_node")?)
        .lease(lease)
        // No robot-style commands here: the runtime sleeps until the job is due.
        .without_commands();
    let driver = TokioDriver::new(builder)?;

    // The job's code. A verb's return value is recorded as the firing's outcome.
    driver.runtime().verb("report", |call| {
        let point = call.firing().nominal_unix_nanos; // the cadence point this firing serves
        println!("job #{} ran for point {point}", call.schedule().get());
        Ok(Value::Int(0))
    });

    // Every second, under the key "report": the first node to get here makes it; every other
    // node, and every restart, gets the same schedule back and makes nothing.
    let mut txn = driver.runtime().schedules().begin(ObjId(1));
    let id = txn.schedule_every(
        ObjId(1),
        "report",
        1.0,
        vec![],
        Options::new().key("report"),
    )?;
    let made = txn.is_new(id);
    txn.commit_async().await?; // on PostgreSQL a round trip, awaited without blocking the thread
    let how = if made { "made" } else { "found" };
    println!("node ready: job #{} {how}", id.get());

    // Frames until a signal. Then the driver commits the store and, done with the runtime,
    // closes it, which on PostgreSQL hands this node's schedules back to the other nodes.
    driver.run_until(stop).await?;
    println!("node stopped cleanly");
    Ok(())
}
