//! A runtime beside a TCP listener on one tokio thread: each line `in SECONDS TEXT` is answered
//! with TEXT after SECONDS, by a kernel timer; Ctrl-C stops the server and commits the store.
//!
//! ```sh
//! cargo run -p tickstep --features tokio --example tokio_server
//! nc 127.0.0.1 4001    # then type: in 2 hello
//! ```

use std::time::Duration;

use tickstep::kernel::Priority;
use tickstep::{Runtime, TokioDriver};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&threads, serve())
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let driver = TokioDriver::new(Runtime::builder().without_commands().in_memory_store())?;
    let listener = TcpListener::bind("127.0.0.1:4001").await?;
    println!("listening on {}", listener.local_addr()?);
    let (runtime, handle) = (driver.runtime().clone(), driver.handle());
    tokio::task::spawn_local(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (runtime, handle) = (runtime.clone(), handle.clone());
            tokio::task::spawn_local(async move {
                let (read, mut write) = socket.into_split();
                let (tx, mut replies) = mpsc::unbounded_channel::<String>();
                let mut lines = BufReader::new(read).lines();
                loop {
                    tokio::select! {
                        line = lines.next_line() => {
                            let Ok(Some(line)) = line else { break };
                            let mut words = line.splitn(3, ' ');
                            let (Some("in"), Some(secs), text) = (words.next(), words.next(), words.next()) else {
                                let _ = tx.send("usage: in SECONDS TEXT".into());
                                continue;
                            };
                            let Ok(secs) = secs.parse::<f64>() else { continue };
                            let Ok(delay) = Duration::try_from_secs_f64(secs) else { continue };
                            let (tx, text) = (tx.clone(), text.unwrap_or("ding").to_owned());
                            // Used directly (same thread, between frames); then wake an idle runtime.
                            let _ = runtime.scheduler().after(delay, move || { let _ = tx.send(text); }, Priority::Normal);
                            let _ = handle.wake();
                        }
                        Some(reply) = replies.recv() => {
                            if write.write_all(format!("{reply}\n").as_bytes()).await.is_err() { break }
                        }
                    }
                }
            });
        }
    });
    driver.run_until(tokio::signal::ctrl_c()).await?;
    println!("stopped cleanly");
    Ok(())
}
