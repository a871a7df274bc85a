//! A `.wpilog` writer (`WPILib` data log format 1.0, docs/nt4.md §6) on a thread of its own.
//!
//! The frame encodes its changed values as data log records into one buffer and hands it to a
//! bounded channel as one message, never waiting: when the channel is full the batch is dropped
//! and its records counted. The thread wakes every [`LogConfig::flush_every`], copies the queued
//! records whole to a block (writing an entry's Start record before its first value in each
//! file), hands the emptied buffers back for reuse, and writes and flushes the block (one more
//! per 64 KiB), so a file cut by `kill -9` ends at a block boundary or inside the last block,
//! and a reader stops at its last whole record. Past [`LogConfig::max_file_bytes`] the file is
//! closed and the next one begins with its own header and the Start records of every entry, so
//! each file reads alone.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
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
    /// Batches that may wait for the thread (one per frame's `publish`, or per
    /// [`WpiLog::append`]); more are dropped, never waited for (docs/nt4.md §6.2).
    pub queue: usize,
    /// How often the thread wakes to write what queued: the longest a record waits before it
    /// is flushed to the file.
    pub flush_every: Duration,
}

impl LogConfig {
    /// Defaults: 64 MiB files, 1,024 queued batches (20 s of frames at 50 Hz), a write and flush
    /// every 100 ms.
    ///
    /// ```
    /// let config = tickstep_nt4::LogConfig::new("logs");
    /// assert_eq!(config.queue, 1_024);
    /// ```
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            max_file_bytes: 64 << 20,
            queue: 1_024,
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

/// What the frame hands the thread: one batch of already-encoded records per frame (one
/// channel message, however many topics changed: docs/nt4.md §6.2), or a flush request.
enum Record {
    Batch(Vec<u8>),
    Flush(SyncSender<()>),
}

/// The entries the log knows, shared by the handles (which name them) and the thread (which
/// writes their Start records). Entry `n` (from 1) is `entries[n - 1]`.
#[derive(Default)]
struct Registry {
    by_name: HashMap<String, u32>,
    entries: Vec<(Arc<str>, Arc<str>)>,
}

/// What the handles and the thread share besides the channel.
struct Shared {
    registry: Mutex<Registry>,
    /// Emptied batch buffers the thread hands back, so a frame's batch reuses one instead of
    /// allocating (at most `pool_cap`, the queue's length, wait here).
    pool: Mutex<Vec<Vec<u8>>>,
    pool_cap: usize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
    shared: Arc<Shared>,
    /// The writer thread, which [`WpiLog::flush`] wakes (the frame never does).
    thread: std::thread::Thread,
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
        let shared = Arc::new(Shared {
            registry: Mutex::default(),
            pool: Mutex::default(),
            pool_cap: config.queue.max(1),
        });
        let mut writer = Writer {
            config,
            files,
            file,
            written: 0,
            buf: Vec::new(),
            started: Vec::new(),
            shared: shared.clone(),
        };
        writer.header();
        let thread = std::thread::Builder::new()
            .name("tickstep-wpilog".into())
            .spawn(move || writer.run(&rx))
            .map_err(|source| LogError::Create {
                path: PathBuf::from("<thread>"),
                source,
            })?
            .thread()
            .clone();
        Ok(Self {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
            shared,
            thread,
        })
    }

    /// Queues one record; never blocks. A full queue drops it and counts it
    /// ([`WpiLog::dropped`]); a value of another type than the entry's first is not logged
    /// (docs/nt4.md §6.3).
    ///
    /// ```
    /// # use tickstep_nt4::{LogConfig, Value, WpiLog};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let log = WpiLog::start(LogConfig::new(dir.path())).unwrap();
    /// log.append("/tickstep/on", Value::Boolean(true), 0);
    /// ```
    // By value, as before the frame's batches were encoded in place: callers hand it over.
    #[allow(clippy::needless_pass_by_value)]
    pub fn append(&self, name: &str, value: Value, timestamp_us: u64) {
        let Some(id) = self.entry(name, value.log_type_str()) else {
            return;
        };
        let mut batch = self.buffer();
        encode(&mut batch, id, &value, timestamp_us);
        self.send(batch, 1);
    }

    /// The id of entry `name` with data log type `type_str`, named on first use; `None` when
    /// the name has another type (docs/nt4.md §6.3). The frame names each topic once.
    pub(crate) fn entry(&self, name: &str, type_str: &str) -> Option<u32> {
        let mut registry = lock(&self.shared.registry);
        if let Some(&id) = registry.by_name.get(name) {
            let known = &registry.entries[id as usize - 1].1;
            return (&**known == type_str).then_some(id);
        }
        registry
            .entries
            .push((Arc::from(name), Arc::from(type_str)));
        let id = u32::try_from(registry.entries.len()).unwrap_or(u32::MAX);
        registry.by_name.insert(name.to_owned(), id);
        Some(id)
    }

    /// An empty batch buffer, reused from the pool when one is there.
    pub(crate) fn buffer(&self) -> Vec<u8> {
        lock(&self.shared.pool).pop().unwrap_or_default()
    }

    /// Hands a batch of `records` encoded records to the thread; never blocks. A full queue
    /// drops the batch and counts its records (docs/nt4.md §6.2).
    pub(crate) fn send(&self, batch: Vec<u8>, records: u64) {
        if batch.is_empty() {
            recycle(&self.shared, batch);
            return;
        }
        match self.tx.try_send(Record::Batch(batch)) {
            Ok(()) => {}
            Err(TrySendError::Full(r) | TrySendError::Disconnected(r)) => {
                self.dropped.fetch_add(records, Ordering::Relaxed);
                if let Record::Batch(b) = r {
                    recycle(&self.shared, b);
                }
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
            self.thread.unpark();
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

/// Returns an emptied buffer to the pool (or frees it when the pool is full).
fn recycle(shared: &Shared, mut buffer: Vec<u8>) {
    buffer.clear();
    let mut pool = lock(&shared.pool);
    if pool.len() < shared.pool_cap {
        pool.push(buffer);
    }
}

/// Appends one data record of entry `id` (docs/nt4.md §6.3): the header, then the payload
/// straight from the value.
pub(crate) fn encode(out: &mut Vec<u8>, id: u32, value: &Value, timestamp: u64) {
    header(out, id, value.log_payload_len(), timestamp);
    value.write_log_payload(out);
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

struct Writer {
    config: LogConfig,
    files: Files,
    file: File,
    written: u64,
    buf: Vec<u8>,
    /// Whether entry `n`'s Start record is in the current file (index `n`).
    started: Vec<bool>,
    shared: Arc<Shared>,
}

const BLOCK: usize = 64 << 10;

impl Writer {
    /// Wakes every `flush_every` (or when [`WpiLog::flush`] unparks it), drains what queued
    /// meanwhile and writes it as blocks. The thread is never waiting on the channel, so the
    /// frame's `try_send` never has to wake it (a wake is a system call; docs/nt4.md §6.2).
    fn run(&mut self, rx: &Receiver<Record>) {
        loop {
            std::thread::park_timeout(self.config.flush_every);
            loop {
                match rx.try_recv() {
                    Ok(Record::Batch(batch)) => {
                        self.batch(&batch);
                        recycle(&self.shared, batch);
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

    /// Copies a batch's records into the block, each preceded by its entry's Start record the
    /// first time the entry appears in this file.
    fn batch(&mut self, mut batch: &[u8]) {
        while let Some((id, timestamp, len)) = parse_header(batch) {
            let id_index = id as usize;
            if self.started.len() <= id_index {
                self.started.resize(id_index + 1, false);
            }
            if !self.started[id_index] {
                self.started[id_index] = true;
                let entry = lock(&self.shared.registry)
                    .entries
                    .get(id_index.wrapping_sub(1))
                    .cloned();
                if let Some((name, type_str)) = entry {
                    start_record(&mut self.buf, id, &name, &type_str, timestamp);
                }
            }
            self.buf.extend_from_slice(&batch[..len]);
            batch = &batch[len..];
        }
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

    /// The next file, with its header and a Start record for every entry so far.
    fn rotate(&mut self) {
        let Ok((_, file)) = self.files.open() else {
            return;
        };
        let _ = self.file.sync_all();
        self.file = file;
        self.written = 0;
        self.header();
        let registry = lock(&self.shared.registry);
        for (i, (name, type_str)) in registry.entries.iter().enumerate() {
            let id = i + 1;
            if self.started.get(id).copied().unwrap_or(false) {
                let id = u32::try_from(id).unwrap_or(u32::MAX);
                start_record(&mut self.buf, id, name, type_str, 0);
            }
        }
    }
}

/// The entry id, timestamp and whole length of the record at the start of `batch` (one the
/// frame encoded, so well-formed); `None` at its end.
fn parse_header(batch: &[u8]) -> Option<(u32, u64, usize)> {
    let &bits = batch.first()?;
    let (iw, sw, tw) = (
        usize::from(bits & 3) + 1,
        usize::from((bits >> 2) & 3) + 1,
        usize::from((bits >> 4) & 7) + 1,
    );
    let head = 1 + iw + sw + tw;
    let le = |b: &[u8]| {
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(v)
    };
    let fields = batch.get(1..head)?;
    let id = u32::try_from(le(&fields[..iw])).ok()?;
    let size = usize::try_from(le(&fields[iw..iw + sw])).ok()?;
    let timestamp = le(&fields[iw + sw..]);
    let len = head.checked_add(size)?;
    (len <= batch.len()).then_some((id, timestamp, len))
}

/// The fewest little-endian bytes that hold `v` (at least one).
fn width(v: u64) -> usize {
    (((64 - v.leading_zeros()) as usize).div_ceil(8)).max(1)
}

/// A record's header: entry id, payload size and timestamp, each in its fewest bytes.
fn header(out: &mut Vec<u8>, id: u32, size: usize, timestamp: u64) {
    let (iw, sw, tw) = (width(u64::from(id)), width(size as u64), width(timestamp));
    out.push(((iw - 1) | ((sw - 1) << 2) | ((tw - 1) << 4)) as u8);
    out.extend_from_slice(&u64::from(id).to_le_bytes()[..iw]);
    out.extend_from_slice(&(size as u64).to_le_bytes()[..sw]);
    out.extend_from_slice(&timestamp.to_le_bytes()[..tw]);
}

fn record(out: &mut Vec<u8>, id: u32, payload: &[u8], timestamp: u64) {
    header(out, id, payload.len(), timestamp);
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
