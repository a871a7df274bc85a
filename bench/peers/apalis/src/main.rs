//! The apalis worker of tickstep-bench's peers section: enqueues its share of the jobs with
//! `push_all` (each with its due time), prints `ready`, then works them until killed. The
//! command line is the Node workers' (`bench/peers/node/job.js`: it enqueues ids `first`,
//! `first + step`, … below the number of jobs); settings and why:
//! docs/peers.md.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use apalis::prelude::*;
use apalis_postgres::{Config, PostgresStorage};
use futures::stream;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

/// The appends' pool and this worker's name, for the handler.
static APPEND: OnceLock<(PgPool, String)> = OnceLock::new();

fn now_us() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970");
    i64::try_from(since.as_micros()).expect("µs fit in i64")
}

/// The job: append its id to `peers_done` in a transaction of its own.
async fn job(id: i64) -> Result<(), BoxDynError> {
    let started = now_us();
    let (pool, name) = APPEND.get().expect("set before the worker runs");
    sqlx::query("INSERT INTO peers_done (id, worker, started_us) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(name)
        .bind(started)
        .execute(pool)
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), BoxDynError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, n, t0, span, first, step, name] = args.as_slice() else {
        return Err("usage: <url> <jobs> <t0_us> <span_us> <first> <step> <worker name>".into());
    };
    let (n, t0, span, first): (i64, i64, i64, i64) =
        (n.parse()?, t0.parse()?, span.parse()?, first.parse()?);
    let step: usize = step.parse()?;
    let pool = PgPoolOptions::new().max_connections(12).connect(url).await?;
    PostgresStorage::setup(&pool).await?;
    APPEND.get_or_init(|| (pool.clone(), name.clone()));
    let config = Config::default()
        .queue("job")
        .batch_size(100)
        .heartbeat_interval(Duration::from_secs(1))
        .missed_heartbeats(10);
    let mut backend = PostgresStorage::<i64>::new(&pool)
        .with_config(config)
        .with_pubsub();
    let started = Instant::now();
    // apalis schedules in whole Unix seconds: the next second at or after the due time, so no
    // job runs early.
    let tasks = (first..n).step_by(step.max(1)).map(|id| {
        let due_us = t0 + id * span / n;
        let second = u64::try_from((due_us + 999_999) / 1_000_000).expect("after 1970");
        TaskBuilder::new(id).run_at_timestamp(second).build()
    });
    backend.push_all(&mut stream::iter(tasks)).await?;
    println!("ready {}", started.elapsed().as_millis());
    WorkerBuilder::new(format!("apalis-{name}"))
        .backend(backend)
        .parallelize(tokio::spawn)
        .build(job)
        .run()
        .await?;
    Ok(())
}
