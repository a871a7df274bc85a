//! A `.wpilog` writer (`WPILib` data log format 1.0, docs/nt4.md §6) on a thread of its own.
//!
//! The frame hands records to a bounded channel and never waits: when the channel is full the
//! record is counted as dropped. The thread wakes every [`LogConfig::flush_every`], appends the
//! queued records whole to a buffer and writes and flushes it as one block (or one per 64 KiB),
//! so a file
//! cut by `kill -9` ends at a block boundary or inside the last block, and a reader stops at
//! its last whole record. Past [`LogConfig::max_file_bytes`] the file is closed and the next one
//! begins with its own header and the Start records of every entry, so each file reads alone.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::Duration;

use crate::value::Value;

/// Where and how a log is written.
///
/// ```
/// use tickstep_nt4::LogConfig;
/// let config = LogConfig::new("/tmp/robot-logs");
/// assert_eq!(config.max_file_bytes, 64 << 20);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LogConfig {
    /// The folder the files go in (`tickstep_<n>.wpilog`, `n` counting from the first free).
    pub dir: PathBuf,
    /// A file past this size is closed and the next begun (docs/nt4.md §6.4).
    pub max_file_bytes: u64,
    /// Records that may wait for the thread; more are dropped, never waited for (docs/nt4.md §6.2).
    pub queue: usize,
    /// How often the thread wakes to write what queued: the longest a record waits before it
    /// is flushed to the file.
    pub flush_every: Duration,
}

impl LogConfig {
    /// Defaults: 64 MiB files, 16,384 queued records, a write and flush every 100 ms.
    ///
    /// ```
    /// let config = tickstep_nt4::LogConfig::new("logs");
    /// assert_eq!(config.queue, 16_384);
    /// ```
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            max_file_bytes: 64 << 20,
            queue: 16_384,
            flush_every: Duration::from_millis(100),
        }
    }
}

/// Why a log could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The folder or the first file could not be made.
    #[error("wpilog: cannot create {path}: {source}")]
    Create {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A size limit below what one file's header needs.
    #[error("wpilog: max_file_bytes {0} is below 4096 (docs/nt4.md §6.4)")]
    TooSmall(u64),
}

enum Record {
    Value {
        name: Arc<str>,
        value: Value,
        timestamp: u64,
    },
    Flush(SyncSender<()>),
}

/// A handle to the log thread. Clones share it; the thread flushes and ends when the last is
/// dropped.
///
/// ```
/// use tickstep_nt4::{LogConfig, Value, WpiLog};
/// let dir = tempfile::tempdir().unwrap();
/// let log = WpiLog::start(LogConfig::new(dir.path())).unwrap();
/// log.append("/tickstep/x", Value::Double(1.0), 20_000);
/// log.flush();
/// assert_eq!(log.dropped(), 0);
/// ```
#[derive(Clone)]
pub struct WpiLog {
    tx: SyncSender<Record>,
    dropped: Arc<AtomicU64>,
    names: Arc<std::sync::Mutex<HashMap<String, Arc<str>>>>,
}

impl std::fmt::Debug for WpiLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WpiLog")
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

impl WpiLog {
    /// Creates the folder and the first file, and starts the thread.
    ///
    /// # Errors
    /// [`LogError::Create`] when the folder or file cannot be made; [`LogError::TooSmall`] for a
    /// size limit under 4 KiB.
    ///
    /// ```
    /// use tickstep_nt4::{LogConfig, LogError, WpiLog};
    /// let mut config = LogConfig::new("unused");
    /// config.max_file_bytes = 10;
    /// assert!(matches!(WpiLog::start(config), Err(LogError::TooSmall(10))));
    /// ```
    pub fn start(config: LogConfig) -> Result<Self, LogError> {
        if config.max_file_bytes < 4096 {
            return Err(LogError::TooSmall(config.max_file_bytes));
        }
        std::fs::create_dir_all(&config.dir).map_err(|source| LogError::Create {
            path: config.dir.clone(),
            source,
        })?;
        let mut files = Files {
            dir: config.dir.clone(),
            next: 0,
        };
        let (_, file) = files.open()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(config.queue.max(1));
        let mut writer = Writer {
            config,
            files,
            file,
            written: 0,
            buf: Vec::new(),
            entries: HashMap::new(),
        };
        writer.header();
        std::thread::Builder::new()
            .name("tickstep-wpilog".into())
            .spawn(move || writer.run(&rx))
            .map_err(|source| LogError::Create {
                path: PathBuf::from("<thread>"),
                source,
            })?;
        Ok(Self {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
            names: Arc::default(),
        })
    }

    /// Queues one record; never blocks. A full queue drops it and counts it ([`WpiLog::dropped`]).
    ///
    /// ```
    /// # use tickstep_nt4::{LogConfig, Value, WpiLog};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let log = WpiLog::start(LogConfig::new(dir.path())).unwrap();
    /// log.append("/tickstep/on", Value::Boolean(true), 0);
    /// ```
    pub fn append(&self, name: &str, value: Value, timestamp_us: u64) {
        let name = {
            let mut names = self
                .names
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(n) = names.get(name) {
                n.clone()
            } else {
                let n: Arc<str> = Arc::from(name);
                names.insert(name.to_owned(), n.clone());
                n
            }
        };
        match self.tx.try_send(Record::Value {
            name,
            value,
            timestamp: timestamp_us,
        }) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Waits until everything queued so far is written and flushed (for shutdown and tests; the
    /// frame never calls it).
    ///
    /// ```
    /// # use tickstep_nt4::{LogConfig, WpiLog};
    /// # let dir = tempfile::tempdir().unwrap();
    /// WpiLog::start(LogConfig::new(dir.path())).unwrap().flush();
    /// ```
    pub fn flush(&self) {
        let (done_tx, done_rx) = std::sync::mpsc::sync_channel(1);
        if self.tx.send(Record::Flush(done_tx)).is_ok() {
            let _ = done_rx.recv();
        }
    }

    /// Records dropped because the queue was full.
    ///
    /// ```
    /// # use tickstep_nt4::{LogConfig, WpiLog};
    /// # let dir = tempfile::tempdir().unwrap();
    /// assert_eq!(WpiLog::start(LogConfig::new(dir.path())).unwrap().dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

struct Files {
    dir: PathBuf,
    next: u32,
}

impl Files {
    /// Opens the first free `tickstep_<n>.wpilog`.
    fn open(&mut self) -> Result<(PathBuf, File), LogError> {
        loop {
            let path = self.dir.join(format!("tickstep_{}.wpilog", self.next));
            self.next += 1;
            match File::options().write(true).create_new(true).open(&path) {
                Ok(f) => return Ok((path, f)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(source) => return Err(LogError::Create { path, source }),
            }
        }
    }
}

struct Entry {
    id: u32,
    type_str: String,
}

struct Writer {
    config: LogConfig,
    files: Files,
    file: File,
    written: u64,
    buf: Vec<u8>,
    entries: HashMap<Arc<str>, Entry>,
}

const BLOCK: usize = 64 << 10;

impl Writer {
    /// Wakes every `flush_every`, drains what queued meanwhile and writes it as blocks. The
    /// thread is never waiting on the channel, so the frame's `try_send` never has to wake it
    /// (a wake is a system call; docs/nt4.md §6.2).
    fn run(&mut self, rx: &Receiver<Record>) {
        loop {
            std::thread::sleep(self.config.flush_every);
            loop {
                match rx.try_recv() {
                    Ok(Record::Value {
                        name,
                        value,
                        timestamp,
                    }) => {
                        self.value(&name, &value, timestamp);
                        if self.buf.len() >= BLOCK {
                            self.write_block();
                        }
                    }
                    Ok(Record::Flush(done)) => {
                        self.write_block();
                        let _ = done.send(());
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.write_block();
                        return;
                    }
                }
            }
            self.write_block();
        }
    }

    fn header(&mut self) {
        self.buf.extend_from_slice(b"WPILOG");
        self.buf.extend_from_slice(&0x0100u16.to_le_bytes());
        let extra = b"tickstep";
        self.buf
            .extend_from_slice(&(extra.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(extra);
    }

    fn value(&mut self, name: &Arc<str>, value: &Value, timestamp: u64) {
        if !self.entries.contains_key(name) {
            let id = self.entries.len() as u32 + 1;
            self.entries.insert(
                name.clone(),
                Entry {
                    id,
                    type_str: value.log_type_str().to_owned(),
                },
            );
            start_record(&mut self.buf, id, name, value.log_type_str(), timestamp);
        }
        let entry = &self.entries[name];
        if entry.type_str != value.log_type_str() {
            return; // an entry keeps its first type (docs/nt4.md §6.3)
        }
        let mut payload = Vec::new();
        value.write_log_payload(&mut payload);
        record(&mut self.buf, entry.id, &payload, timestamp);
    }

    /// Writes the buffer as one block and flushes it; rotates past the size limit.
    fn write_block(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        // A write error (disk full) loses this block, never the frame.
        if self.file.write_all(&self.buf).is_ok() {
            let _ = self.file.flush();
            self.written += self.buf.len() as u64;
        }
        self.buf.clear();
        if self.written >= self.config.max_file_bytes {
            self.rotate();
        }
    }

    fn rotate(&mut self) {
        let Ok((_, file)) = self.files.open() else {
            return;
        };
        let _ = self.file.sync_all();
        self.file = file;
        self.written = 0;
        self.header();
        let mut entries: Vec<_> = self.entries.iter().collect();
        entries.sort_by_key(|(_, e)| e.id);
        let mut buf = std::mem::take(&mut self.buf);
        for (name, e) in entries {
            start_record(&mut buf, e.id, name, &e.type_str, 0);
        }
        self.buf = buf;
    }
}

/// The fewest little-endian bytes that hold `v` (at least one).
fn width(v: u64) -> usize {
    (((64 - v.leading_zeros()) as usize).div_ceil(8)).max(1)
}

fn record(out: &mut Vec<u8>, id: u32, payload: &[u8], timestamp: u64) {
    let (iw, sw, tw) = (
        width(u64::from(id)),
        width(payload.len() as u64),
        width(timestamp),
    );
    out.push(((iw - 1) | ((sw - 1) << 2) | ((tw - 1) << 4)) as u8);
    out.extend_from_slice(&u64::from(id).to_le_bytes()[..iw]);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes()[..sw]);
    out.extend_from_slice(&timestamp.to_le_bytes()[..tw]);
    out.extend_from_slice(payload);
}

fn start_record(out: &mut Vec<u8>, id: u32, name: &str, type_str: &str, timestamp: u64) {
    let mut p = vec![0u8];
    p.extend_from_slice(&id.to_le_bytes());
    for s in [name, type_str, ""] {
        p.extend_from_slice(&(s.len() as u32).to_le_bytes());
        p.extend_from_slice(s.as_bytes());
    }
    record(out, 0, &p, timestamp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_example_records_are_byte_exact() {
        // docs/nt4.md §6.3: an int entry (ID 1) with value 3 at one second is 14 bytes.
        let mut out = Vec::new();
        record(&mut out, 1, &3i64.to_le_bytes(), 1_000_000);
        assert_eq!(
            out,
            [0x20, 0x01, 0x08, 0x40, 0x42, 0x0f, 3, 0, 0, 0, 0, 0, 0, 0]
        );
        let mut start = Vec::new();
        start_record(&mut start, 1, "test", "int64", 1_000_000);
        assert_eq!(start.len(), 32);
        assert_eq!(&start[..7], &[0x20, 0x00, 0x1a, 0x40, 0x42, 0x0f, 0x00]);
    }
}
