//! Dashboard viewers for the serve section (docs/serve.md §14.6): real HTTP/1.1 clients that
//! each hold `/dashboard/events` open, as a browser's `EventSource` or `tickstep top` does, and
//! count the snapshots they receive, until told to stop.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::PATIENCE;

/// The viewers, reading until [`Viewers::stop`].
pub(super) struct Viewers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<Result<usize, String>>>,
}

impl Viewers {
    /// Opens `count` streams on the HTTP side at `addr`; each has its `200` before this returns.
    pub(super) async fn open(addr: &str, count: usize) -> Result<Viewers, String> {
        let (stop, stopped) = watch::channel(false);
        let mut tasks = Vec::new();
        for _ in 0..count {
            let mut lines = tokio::time::timeout(PATIENCE, subscribe(addr))
                .await
                .map_err(|_| format!("a viewer got no answer from {addr}"))??;
            let mut stopped = stopped.clone();
            tasks.push(tokio::task::spawn_local(async move {
                let mut snapshots = 0;
                let mut line = String::new();
                loop {
                    line.clear();
                    tokio::select! {
                        _ = stopped.changed() => return Ok(snapshots),
                        read = lines.read_line(&mut line) => match read {
                            Ok(0) | Err(_) => return Err("the server closed a viewer's stream".into()),
                            Ok(_) if line.starts_with("data:") => snapshots += 1,
                            Ok(_) => {}
                        },
                    }
                }
            }));
        }
        Ok(Viewers { stop, tasks })
    }

    /// Stops every viewer; the snapshots each received.
    pub(super) async fn stop(self) -> Result<Vec<usize>, String> {
        let _ = self.stop.send(true);
        let mut received = Vec::new();
        for task in self.tasks {
            received.push(task.await.map_err(|e| format!("a viewer failed: {e}"))??);
        }
        Ok(received)
    }
}

/// Asks for the live view's events and reads the answer's head; the body's lines follow (the
/// chunk-size lines of its chunked encoding among them, which never start with `data:`).
async fn subscribe(addr: &str) -> Result<BufReader<TcpStream>, String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("a viewer cannot connect to {addr}: {e}"))?;
    stream
        .write_all(
            format!(
                "GET /dashboard/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .map_err(|e| format!("a viewer's request failed: {e}"))?;
    let mut lines = BufReader::new(stream);
    let mut status = String::new();
    lines
        .read_line(&mut status)
        .await
        .map_err(|e| format!("a viewer's answer failed: {e}"))?;
    if !status.starts_with("HTTP/1.1 200") {
        return Err(format!("the live view refused a viewer: {status:?}"));
    }
    let mut header = String::new();
    while header != "\r\n" {
        header.clear();
        if lines.read_line(&mut header).await.unwrap_or(0) == 0 {
            return Err("the live view's answer ended in its head".into());
        }
    }
    Ok(lines)
}
