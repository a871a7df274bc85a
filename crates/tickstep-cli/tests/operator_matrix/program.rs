//! The matrix's `Runtime` program (docs/runtime.md §7.13): a job runner written on the public
//! facade of the `tickstep` crate only, as a user would — a `TokioDriver` on a current-thread tokio
//! runtime, the store given by path or URL, three named schedules of one verb (made at the first
//! start, found by their keys after), the runtime's dashboard with actions, and
//! `tickstep::shutdown_signal()` (SIGTERM, Ctrl-C) to stop.
//!
//! It speaks to the test on stdout: `@ABANDONED N` (firings a previous run left in flight),
//! `@S KEY ID` for each schedule, `@HTTP ADDR` for the dashboard, `@READY`, then `@F ID POINT` each time
//! the verb runs (the cadence point it serves), and at the end `@STOPPED committed` once the driver has committed the store with no
//! store failure on the way.

use std::io::Write as _;
use std::net::SocketAddr;
use std::rc::Rc;

use tickstep::dashboard::{ActionGrant, DashboardOptions, LiveFrames, PlainHost};
use tickstep::schedules::{ObjId, Options, Value};
use tickstep::{Runtime, TokioDriver};

/// The store the program runs on (its presence makes the test binary the program).
pub(crate) const STORE: &str = "TICKSTEP_MATRIX_STORE";
/// The dashboard's action token.
pub(crate) const TOKEN: &str = "TICKSTEP_MATRIX_TOKEN";
/// The program's schedules, by key: one for each operator, and the control.
const KEYS: [&str; 3] = ["cli", "dashboard", "control"];
/// Who owns them, and whom the dashboard's actions act as (every principal is a wizard in the
/// default world, docs/runtime.md §9.1).
const OWNER: ObjId = ObjId(1);

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// Runs the program if the test binary was started as it; returns at once otherwise.
pub(crate) fn entry() {
    let (Ok(store), Ok(token)) = (std::env::var(STORE), std::env::var(TOKEN)) else {
        return;
    };
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&threads, run(store, token));
}

async fn run(store: String, token: String) {
    let builder = Runtime::builder().store_path(&store).without_commands();
    let mut driver = TokioDriver::new(builder).expect("the program opens its store");
    let rt = Rc::clone(driver.runtime());
    say(&format!("@ABANDONED {}", rt.abandoned_firings()));
    rt.verb("job", |call| {
        let point = call.firing().nominal_unix_nanos;
        say(&format!("@F {} {point}", call.schedule().get()));
        Ok(Value::Int(0))
    });
    for key in KEYS {
        let mut txn = rt.schedules().begin(OWNER);
        // Made at the first start; found by its key after (docs/schedules.md §5.13).
        let id = txn
            .schedule_every(OWNER, "job", 1.0, vec![], Options::new().key(key))
            .expect("a schedule of the program");
        txn.commit().expect("its commit");
        say(&format!("@S {key} {}", id.get()));
    }

    let frames = LiveFrames::default();
    let recorded = frames.clone();
    driver.on_frame(move |rt| recorded.record(rt.frame_loop().heartbeat_time(), None));
    let options = DashboardOptions {
        title: "operator matrix program".into(),
        grant: Some(ActionGrant::new(&token, OWNER.to_string()).expect("the token")),
        frames,
        ..Default::default()
    };
    let host = Rc::new(PlainHost { reader: OWNER });
    let app = tickstep::dashboard::router(&rt, driver.handle(), &host, options);
    let web = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    say(&format!("@HTTP {}", web.local_addr().unwrap()));
    tokio::task::spawn_local(async move {
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(web, app).await
    });

    // The handlers are in place before the test may send the signal (docs/runtime.md §5.12).
    let stop = tickstep::shutdown_signal();
    say("@READY");
    driver
        .run_until(stop)
        .await
        .expect("the driver stops and commits the store");
    // What a store error would have cost is said, not hidden behind the clean exit.
    match rt.stats().store_errors {
        0 => say("@STOPPED committed"),
        n => say(&format!("@STOPPED with {n} store failures")),
    }
}
