//! `WPILib`'s own data log reader (robotpy-wpiutil's `DataLogReader`) reads what `WpiLog` wrote:
//! the scheduler's telemetry on a `ManualClock`, rotated files that each read alone, and a file
//! cut by `kill -9` (docs/nt4.md §6, §7.1).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use tickstep_commands::{CommandScheduler, Mechanism};
use tickstep_kernel::clock::ManualClock;
use tickstep_nt4::{LogConfig, SchedulerTelemetry, Value, WpiLog, topics};

/// Runs `read_log.py` on `files` and returns its JSON.
fn read_logs(python: &str, files: &[PathBuf]) -> Json {
    let out = Process::new(python)
        .arg(common::script("read_log.py"))
        .args(files)
        .stderr(Stdio::inherit())
        .output()
        .expect("run read_log.py");
    assert!(out.status.success(), "read_log.py failed");
    serde_json::from_slice(&out.stdout).expect("read_log.py prints JSON")
}

fn log_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wpilog"))
        .collect();
    // tickstep_<n>.wpilog in n's order.
    files.sort_by_key(|p| {
        let stem = p.file_stem().unwrap().to_str().unwrap();
        stem.trim_start_matches("tickstep_").parse::<u32>().unwrap()
    });
    files
}

fn records_of<'a>(file: &'a Json, name: &'a str) -> impl Iterator<Item = &'a Json> + 'a {
    file["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(move |r| r[0] == name)
}

#[test]
fn data_log_reader_reads_the_schedulers_telemetry_on_virtual_time() {
    let Some(python) = common::python_with("wpiutil.log") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = LogConfig::new(dir.path());
    config.flush_every = Duration::from_millis(5);
    let log = WpiLog::start(config).unwrap();
    let clock = ManualClock::new();
    let scheduler = CommandScheduler::new(clock.clone());
    let arm = Mechanism::new(&scheduler, "arm");
    let raise = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(1)
        .named("raise");
    let hold = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(5)
        .named("hold");
    let mut telemetry = SchedulerTelemetry::new(&scheduler);
    telemetry.log(&log).mechanism(&arm);
    for frame in 0..10u64 {
        match frame {
            2 => drop(scheduler.schedule(&raise)),
            6 => drop(scheduler.schedule(&hold)),
            _ => {}
        }
        scheduler.run().unwrap();
        telemetry.publish();
        clock.advance(Duration::from_millis(20));
    }
    log.flush();
    assert_eq!(log.dropped(), 0);

    let files = log_files(dir.path());
    assert_eq!(files.len(), 1);
    let read = read_logs(&python, &files);
    let file = &read["files"][0];
    assert_eq!(file["valid"], json!(true));
    assert_eq!(file["version"], json!(0x0100));
    assert_eq!(file["extra"], json!("tickstep"));
    let types: Vec<(String, String)> = file["entries"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| {
            (
                v[0].as_str().unwrap().to_owned(),
                v[1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        types.contains(&(topics::CYCLE.to_owned(), "int64".to_owned())),
        "{types:?}"
    );
    assert!(types.contains(&(topics::RUNNING.to_owned(), "string[]".to_owned())));
    assert!(types.contains(&(
        topics::SCHEDULER.to_owned(),
        "proto:wpi.proto.ProtobufScheduler".to_owned()
    )));
    assert!(types.contains(&(
        "/.schema/proto:tickstep_scheduler.proto".to_owned(),
        "proto:FileDescriptorProto".to_owned()
    )));

    // The arm changed hands twice, each at the frame it happened, on the ManualClock's time.
    let arm: Vec<(u64, String)> = records_of(file, "/tickstep/mechanisms/arm")
        .map(|r| (r[1].as_u64().unwrap(), r[2].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        arm,
        [
            (0, String::new()),
            (40_000, "raise".into()),
            (120_000, "hold".into())
        ]
    );
    // The cycle counter changes every frame; the running list only when it changes.
    let cycles: Vec<i64> = records_of(file, topics::CYCLE)
        .map(|r| r[2].as_i64().unwrap())
        .collect();
    assert_eq!(cycles, (1..=10).collect::<Vec<_>>());
    let running: Vec<Json> = records_of(file, topics::RUNNING)
        .map(|r| r[2].clone())
        .collect();
    assert_eq!(running, [json!([]), json!(["raise"]), json!(["hold"])]);
    let ids: Vec<Json> = records_of(file, topics::RUNNING_IDS)
        .map(|r| r[2].clone())
        .collect();
    assert_eq!(
        ids.last().unwrap(),
        &json!([scheduler.running()[0].id.get()])
    );
}

/// The child side of the `kill -9` test: logs a counter until it is killed (at most 60 s).
#[test]
fn child_logs_until_killed() {
    let Ok(dir) = std::env::var("TICKSTEP_NT4_LOG_CHILD") else {
        return;
    };
    let mut config = LogConfig::new(dir);
    config.flush_every = Duration::from_millis(5);
    let log = WpiLog::start(config).unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    let mut i = 0i64;
    while Instant::now() < end {
        log.append(
            "/tickstep/counter",
            Value::Int(i),
            u64::try_from(i).unwrap() * 20_000,
        );
        log.append(
            "/tickstep/names",
            Value::StringArray(vec![format!("n{i}"); 3]),
            u64::try_from(i).unwrap() * 20_000,
        );
        i += 1;
        if i % 64 == 0 {
            log.flush(); // pace the writer so the queue never drops (the test counts every value)
        }
    }
}

#[test]
fn a_log_cut_by_kill_9_reads_up_to_its_last_block() {
    let Some(python) = common::python_with("wpiutil.log") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = Process::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_logs_until_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TICKSTEP_NT4_LOG_CHILD", dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (real time, bounded: the child is another process) until a few blocks are on disk.
    let file = dir.path().join("tickstep_0.wpilog");
    let end = Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&file).map_or(0, |m| m.len()) < 200_000 {
        assert!(Instant::now() < end, "the child wrote too little");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child ended by itself"
        );
        std::thread::yield_now();
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no final flush
    child.wait().unwrap();

    let read = read_logs(&python, &[file]);
    let file = &read["files"][0];
    assert_eq!(file["valid"], json!(true));
    let counter: Vec<i64> = records_of(file, "/tickstep/counter")
        .map(|r| r[2].as_i64().unwrap())
        .collect();
    assert!(
        counter.len() > 1_000,
        "only {} records survived",
        counter.len()
    );
    // Every record up to the cut is there, in order, whole.
    assert_eq!(
        counter,
        (0..i64::try_from(counter.len()).unwrap()).collect::<Vec<_>>()
    );
    for r in records_of(file, "/tickstep/names") {
        let i = r[1].as_u64().unwrap() / 20_000;
        assert_eq!(
            r[2],
            json!([format!("n{i}"), format!("n{i}"), format!("n{i}")])
        );
    }
}

#[test]
fn rotated_files_each_read_alone() {
    let Some(python) = common::python_with("wpiutil.log") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = LogConfig::new(dir.path());
    config.max_file_bytes = 4096;
    config.flush_every = Duration::from_millis(5);
    let log = WpiLog::start(config).unwrap();
    for i in 0..2_000i64 {
        log.append(
            "/tickstep/counter",
            Value::Int(i),
            u64::try_from(i).unwrap(),
        );
        if i % 100 == 99 {
            log.flush();
        }
    }
    log.flush();
    let files = log_files(dir.path());
    assert!(files.len() >= 3, "{files:?}");
    for f in &files {
        // Each file past its block stops at the size limit's first block boundary.
        assert!(std::fs::metadata(f).unwrap().len() < 4096 + 64 * 1024);
    }
    let read = read_logs(&python, &files);
    let mut all = Vec::new();
    for file in read["files"].as_array().unwrap() {
        assert_eq!(file["valid"], json!(true));
        assert_eq!(
            file["entries"].as_object().unwrap().len(),
            1,
            "each file starts its entry"
        );
        all.extend(records_of(file, "/tickstep/counter").map(|r| r[2].as_i64().unwrap()));
    }
    assert_eq!(all, (0..2_000).collect::<Vec<_>>());
}
