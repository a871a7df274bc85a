//! tickstep's worker in the peers section: this binary again, started with [`ENV`] set, as a
//! node on the facade (`Runtime` and `TokioDriver` on the `PostgreSQL` store).
//!
//! It takes the same command line as the Node workers (`bench/peers/node/job.js`), packed into
//! [`ENV`]: it makes its share of the jobs with `schedule_at` (one `Txn`, so this node holds
//! them from creation, docs/schedules.md §11.26), prints `ready`, and runs until killed. The
//! verb appends the job's id to `peers_done` in a transaction of its own. A killed worker's
//! running jobs run again where they are taken over (docs/runtime.md §6.7), and a rerun
//! appends only an id the table does not hold yet.

use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tickstep::schedules::{Namespace, ObjId, Options, Value};
use tickstep::{Runtime, TokioDriver};

/// Set in the worker process: `url|jobs|t0_us|span_us|first|step|name`.
pub(crate) const ENV: &str = "TICKSTEP_BENCH_PEERS_WORKER";

/// What a worker is told: the database, the jobs' due times and its share to enqueue: ids
/// `first`, `first + step`, … below `n` (none when `first` is `n`), so two workers each hold
/// half of every stretch of due times.
pub(crate) struct Job {
    pub(crate) url: String,
    pub(crate) n: i64,
    pub(crate) t0_us: i64,
    pub(crate) span_us: i64,
    pub(crate) first: i64,
    pub(crate) step: i64,
    pub(crate) name: String,
}

impl Job {
    /// Job `id`'s due time, Unix µs: the integer formula every worker uses.
    pub(crate) fn due_us(&self, id: i64) -> i64 {
        self.t0_us + id * self.span_us / self.n
    }

    /// The ids this worker enqueues.
    pub(crate) fn ids(&self) -> impl Iterator<Item = i64> {
        (self.first..self.n).step_by(usize::try_from(self.step.max(1)).unwrap_or(1))
    }

    /// The command-line arguments of a Node worker, in `job.js`'s order.
    pub(crate) fn argv(&self) -> Vec<String> {
        vec![
            self.url.clone(),
            self.n.to_string(),
            self.t0_us.to_string(),
            self.span_us.to_string(),
            self.first.to_string(),
            self.step.to_string(),
            self.name.clone(),
        ]
    }

    fn parse(packed: &str) -> Self {
        let parts: Vec<&str> = packed.split('|').collect();
        assert_eq!(
            parts.len(),
            7,
            "{ENV} is url|jobs|t0_us|span_us|first|step|name"
        );
        let num = |i: usize| parts[i].parse::<i64>().expect("a number");
        Job {
            url: parts[0].to_owned(),
            n: num(1),
            t0_us: num(2),
            span_us: num(3),
            first: num(4),
            step: num(5),
            name: parts[6].to_owned(),
        }
    }
}

/// The wall clock, Unix µs.
pub(crate) fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Runs the worker of [`ENV`]'s value and never returns (it is killed).
pub(crate) fn main(packed: &str) -> ! {
    run_until_killed("tickstep worker", node(Job::parse(packed)))
}

/// Runs a node's body on a current-thread runtime (the driver's future is `!Send`); it runs
/// until the bench kills it, so returning is a failure, said on stderr (the node's log).
pub(crate) fn run_until_killed(
    what: &str,
    body: impl std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>,
) -> ! {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = tokio::task::LocalSet::new().block_on(&threads, body);
    eprintln!("{what} stopped: {result:?}");
    std::process::exit(1);
}

async fn node(job: Job) -> Result<(), Box<dyn std::error::Error>> {
    let builder = Runtime::builder()
        .store_path(&job.url)
        .namespace(Namespace::new("peers")?)
        .lease(Duration::from_secs(10))
        // A killed node's running jobs run again on the node that takes them over
        // (docs/runtime.md §6.7); the verb checks first, below.
        .rerun_interrupted(true)
        .without_commands();
    let driver = TokioDriver::new(builder)?;
    // The verb's connections, as a tokio service would hold them: ten clients (the peers' pool
    // size), taken in turn; each append is a statement of its own (autocommitted, so a
    // transaction of its own), many in flight at once. One connection would serialise every
    // commit on one server backend.
    let mut clients = Vec::new();
    for _ in 0..10 {
        let (client, connection) = tokio_postgres::connect(&job.url, tokio_postgres::NoTls).await?;
        tokio::task::spawn_local(connection);
        clients.push(client);
    }
    let clients: Rc<[tokio_postgres::Client]> = clients.into();
    let turn = Rc::new(std::cell::Cell::new(0_usize));
    let name: Rc<str> = job.name.clone().into();
    driver.runtime().async_verb("job", move |call| {
        let started = now_us();
        let clients = Rc::clone(&clients);
        let client = turn.replace((turn.get() + 1) % clients.len());
        let name = Rc::clone(&name);
        async move {
            if let Some(Value::Int(id)) = call.args().first() {
                // A rerun serves a job a killed worker may have done already: its append is
                // autocommitted, so it is in the table or it never happened.
                if call.is_rerun() {
                    let done = clients[client]
                        .query_opt("SELECT 1 FROM peers_done WHERE id = $1 LIMIT 1", &[id])
                        .await
                        .map_err(|e| Value::Str(e.to_string()))?;
                    // Said in the worker's log (its stderr), for the note's count of reruns.
                    let seen = if done.is_some() {
                        "done already"
                    } else {
                        "appending"
                    };
                    eprintln!("rerun of job {id}: {seen}");
                    if done.is_some() {
                        return Ok(Value::Int(0));
                    }
                }
                clients[client]
                    .execute(
                        "INSERT INTO peers_done (id, worker, started_us) VALUES ($1, $2, $3)",
                        &[id, &&*name, &started],
                    )
                    .await
                    .map_err(|e| Value::Str(e.to_string()))?;
            }
            Ok(Value::Int(0))
        }
    });
    let started = std::time::Instant::now();
    let mut txn = driver.runtime().schedules().begin(ObjId(1));
    for id in job.ids() {
        let due = job.due_us(id) as f64 / 1e6;
        txn.schedule_at(ObjId(1), "job", due, vec![Value::Int(id)], Options::new())?;
    }
    txn.commit_async().await?;
    println!("ready {}", started.elapsed().as_millis());
    driver.run().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_due_evenly_over_the_span_and_the_command_line_round_trips() {
        let job = Job {
            url: "postgres://u@h/db".to_owned(),
            n: 4,
            t0_us: 1_000,
            span_us: 10,
            first: 1,
            step: 2,
            name: "w0".to_owned(),
        };
        let due: Vec<i64> = (0..4).map(|id| job.due_us(id)).collect();
        assert_eq!(due, [1_000, 1_002, 1_005, 1_007]);
        assert_eq!(job.ids().collect::<Vec<_>>(), [1, 3]);
        let back = Job::parse(&job.argv().join("|"));
        assert_eq!(back.argv(), job.argv());
    }
}
