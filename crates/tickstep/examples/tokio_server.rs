//! A runtime beside a TCP listener on one tokio thread: each line `in SECONDS TEXT` is answered
//! with TEXT after SECONDS, by a kernel timer; the runtime's dashboard (docs/serve.md §13.10) is
//! mounted on a second, HTTP listener; Ctrl-C or SIGTERM stops the server and commits the store.
//!
//! ```sh
//! cargo run -p tickstep --features dashboard --example tokio_server
//! nc 127.0.0.1 4001    # then type: in 2 hello
//! # and open http://127.0.0.1:4002/dashboard (the live frame chart, hot tasks, commands)
//! ```

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use tickstep::dashboard::{DashboardOptions, LiveFrames, PlainHost};
use tickstep::kernel::Priority;
use tickstep::schedules::ObjId;
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
    let mut driver = TokioDriver::new(Runtime::builder().without_commands().in_memory_store())?;
    let listener = TcpListener::bind("127.0.0.1:4001").await?;
    println!("listening on {}", listener.local_addr()?);
    // The dashboard: read-only (no grant), its chart fed by every frame the driver runs.
    let frames = LiveFrames::default();
    let recorded = frames.clone();
    driver.on_frame(move |rt| recorded.record(rt.frame_loop().heartbeat_time(), None));
    let host = Rc::new(PlainHost { reader: ObjId(1) });
    let options = DashboardOptions {
        title: "tokio_server".into(),
        grant: None,
        frames,
        ..Default::default()
    };
    let app = tickstep::dashboard::router(driver.runtime(), driver.handle(), &host, options);
    let web = TcpListener::bind("127.0.0.1:4002").await?;
    println!("dashboard on http://{}/dashboard", web.local_addr()?);
    tokio::task::spawn_local(async move {
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(web, app).await
    });
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
    // Ctrl-C, or SIGTERM from a service manager: commit the store and stop.
    driver.run_until(tickstep::shutdown_signal()).await?;
    println!("stopped cleanly");
    Ok(())
}
