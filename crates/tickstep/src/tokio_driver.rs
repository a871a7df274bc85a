//! The [`Runtime`] as a future on a tokio current-thread runtime, beside a server's sockets
//! (feature `tokio`; docs/runtime.md §5.6–§5.10).
//!
//! # How a server embeds the runtime
//!
//! * **Threading.** The runtime stays single-threaded and `!Send`, so the [`TokioDriver`]'s
//!   future is `!Send` and is awaited on the thread that polls it: the body of `#[tokio::main]`
//!   (either flavour), a runtime's `block_on`, or a [`LocalSet`](tokio::task::LocalSet);
//!   `tokio::spawn` refuses it at compile time (docs/runtime.md §5.16). Socket tasks spawned with
//!   `spawn_local` on a `LocalSet` beside it may hold the runtime ([`TokioDriver::runtime`], an `Rc`) and use it directly between
//!   frames: nothing inside the runtime is borrowed while the driver awaits. Other threads, and
//!   `Send` tasks of a multi-thread runtime, reach it through a [`RuntimeHandle`].
//! * **Frames and waiting.** The driver runs one frame at a time, exactly as
//!   [`Runtime::step_frame`] does, but the frame loop never sleeps the thread: it records when
//!   it wants to run next and the driver awaits tokio's timer until then, so every other task
//!   on the thread (accepting connections, reading lines) runs between frames. A frame that
//!   found work keeps the frame rate (the next frame is one period after this one started); a
//!   frame that found the kernel idle sleeps on tokio's timer straight to the kernel's next wake
//!   (34 ms before its earliest deadline) — the kernel's idle sleep, mapped onto tokio. An idle
//!   server therefore runs no frames at all, and its thread is parked in tokio like any idle
//!   server's.
//! * **Wake-ups.** A [`RuntimeHandle`] is `Send + Sync + Clone`. [`RuntimeHandle::submit`] and
//!   [`RuntimeHandle::call`] deliver a closure that runs on the runtime's thread, *between*
//!   frames, as soon as the thread is free — never inside a frame's budget, never delaying the
//!   frame grid of a busy runtime. An idle runtime is woken by it and runs its next frame at the
//!   next frame slot (at once when the runtime has idled for longer than a frame), so kernel
//!   tasks, timers and schedules the closure created are noticed without waiting for the old
//!   wake. [`RuntimeHandle::wake`] does only that last part, for same-thread tasks that used
//!   the runtime directly (a connection task that created a schedule).
//!   The schedules store wakes the driver the same way when its own thread claims schedules or
//!   reads an operator stop, so an idle node takes schedules over at once (docs/runtime.md
//!   §6.3). A task on the driver's thread that creates or stops schedules on `PostgreSQL`
//!   awaits `Txn::commit_async` rather than blocking the thread on `Txn::commit`
//!   (docs/runtime.md §6.4).
//! * **Shutdown.** [`TokioDriver::run_until`] ends when its `stop` future completes (a signal, a
//!   cancellation token) or a handle calls [`RuntimeHandle::shutdown`]. It then runs the
//!   closures already submitted, commits the store (the schedules' last cadence updates, as
//!   [`Runtime::shutdown`] does) and returns; later submissions fail with [`DriverStopped`].
//!   A command failure ends it the same way, returning the error after the commit. Dropping the
//!   runtime then closes the engine, which on `PostgreSQL` hands the node's schedules back.
//!   [`shutdown_signal`](crate::shutdown_signal) is the `stop` of a service: Ctrl-C or SIGTERM
//!   (docs/runtime.md §5.12).
//! * **Time.** With the system clock, the driver sleeps with `tokio::time::sleep` for the gap
//!   between the runtime's clock and the frame it waits for. With a
//!   [`ManualClock`](crate::kernel::ManualClock) the runtime's clock *follows tokio's*: the driver
//!   sleeps on tokio's timer for the virtual gap, and moves the manual clock by exactly the tokio
//!   time that passed (before running a submission that arrived early, too, so the submission
//!   sees the time it arrived at). tokio's timer has millisecond resolution, so frames land on
//!   whole milliseconds (at 60 fps, about 59 frames a virtual second). Under tokio's
//!   paused clock (`#[tokio::test(start_paused = true)]`, tokio's `test-util` feature), tokio
//!   jumps its clock to the next timer whenever every task is waiting, so the runtime, its
//!   schedules and every `tokio::time` timer of the test share one virtual timeline and an hour
//!   passes in milliseconds. That is how this crate's tests run; no test sleeps. Moving the
//!   manual clock by hand while the driver sleeps is allowed but is noticed only at its next
//!   wake (call [`RuntimeHandle::wake`]).
//!
//! # Costs
//!
//! Per frame: one `tokio::time::sleep` (a timer-wheel entry) and one poll of an unbounded
//! channel. Per submission: one boxed closure and one channel send (plus a oneshot for
//! [`RuntimeHandle::call`]). Idle: nothing — the thread is parked until a timer, a socket or a
//! submission wakes it.
//!
//! # Decisions
//!
//! Rules docs/runtime.md §9.13–§9.17.
//!
//! * Submitted closures run between frames, not inside one: a closure is arbitrary code the
//!   kernel cannot budget, and running it as soon as the thread is free gives other tasks a reply
//!   well inside one frame. Work the closure schedules (kernel tasks, commands, firings) runs in
//!   the frames, under the budget.
//! * The idle test reads the kernel's main scheduler (its attachment and its wake); schedulers a
//!   host binds to other phases run while the main one is busy, or when a submission or
//!   [`RuntimeHandle::wake`] starts a frame.
//! * A runtime built with the default command cycle is never idle (its job is due every 20 ms):
//!   build it [without commands](crate::RuntimeBuilder::without_commands) and run the command
//!   scheduler from a kernel job while commands run, when the idle server must cost nothing.

use std::future::Future;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::{Clock, Instant};
use tokio::sync::{mpsc, oneshot};

use crate::host::HostError;
use crate::hosted::FrameWaits;
use crate::{Runtime, RuntimeBuilder, RuntimeError};

/// A closure submitted to the runtime's thread.
type Job = Box<dyn FnOnce(&Runtime) + Send>;
/// The host's per-frame observer.
type FrameObserver = Box<dyn FnMut(&Runtime)>;

enum Message {
    Job(Job),
    Wake,
    Shutdown,
}

/// Drives a [`Runtime`] on tokio's timer. See the [module docs](self) for the model.
///
/// ```
/// use std::time::Duration;
/// use tickstep::{Runtime, TokioDriver};
/// use tickstep::kernel::{ManualClock, Priority};
///
/// // A server builds `new_current_thread().enable_all()`; this example runs in virtual time.
/// let tokio_rt = tokio::runtime::Builder::new_current_thread()
///     .enable_time()
///     .start_paused(true)
///     .build()
///     .unwrap();
/// let local = tokio::task::LocalSet::new();
/// local.block_on(&tokio_rt, async {
///     let builder = Runtime::builder().manual_clock(ManualClock::new()).without_commands();
///     let driver = TokioDriver::new(builder.in_memory_store())?;
///     let handle = driver.handle();
///     let stopper = handle.clone();
///     driver.runtime().scheduler().after(Duration::from_secs(30), move || stopper.shutdown(),
///         Priority::Normal)?;
///     driver.run().await?; // 30 virtual seconds, then a clean stop
///     assert!(handle.submit(|_| {}).is_err());
///     Ok::<(), Box<dyn std::error::Error>>(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The driver's future stays on the thread that awaits it (docs/runtime.md §5.16): any tokio
/// runtime's `block_on` (a multi-thread `#[tokio::main]` too) or a `LocalSet` runs it, and moving
/// it to a worker thread does not compile:
///
/// ```compile_fail
/// # async fn wrong() -> Result<(), tickstep::RuntimeError> {
/// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
/// tokio::spawn(driver.run()); // error: the driver's future is not `Send`
/// # Ok(())
/// # }
/// ```
pub struct TokioDriver {
    runtime: Rc<Runtime>,
    waits: FrameWaits,
    before_frame: Option<FrameObserver>,
    on_frame: Option<FrameObserver>,
    sender: mpsc::UnboundedSender<Message>,
    inbox: mpsc::UnboundedReceiver<Message>,
}

/// A `Send + Sync` way into a runtime driven by a [`TokioDriver`], from any thread or task.
///
/// ```
/// fn needs_send_sync<T: Send + Sync + Clone>(_: &T) {}
/// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
/// needs_send_sync(&driver.handle());
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RuntimeHandle {
    sender: mpsc::UnboundedSender<Message>,
}

/// The driver has stopped (shut down, or dropped): the submission was not delivered and was
/// dropped.
///
/// ```
/// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
/// let handle = driver.handle();
/// drop(driver);
/// let err = handle.submit(|_| {}).unwrap_err();
/// assert_eq!(err.to_string(), "the runtime's tokio driver has stopped; the submission was dropped");
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the runtime's tokio driver has stopped; the submission was dropped")]
#[non_exhaustive]
pub struct DriverStopped;

/// What one wait between frames ended with.
enum Waited {
    /// The next frame is due (its time came, or a submission woke an idle runtime).
    Due,
    /// Stop: shutdown requested, or the stop future completed.
    Stop,
}

/// What to wait for after a frame.
struct Plan {
    /// When the next frame is due (`None`: only a submission or the stop ends the wait).
    until: Option<Instant>,
    /// While idle: the frame slot a submission brings the wait forward to.
    slot: Option<Instant>,
}

impl TokioDriver {
    /// Builds the runtime from `builder` with its frame waits handed to the driver.
    ///
    /// # Errors
    ///
    /// Whatever [`RuntimeBuilder::build`] returns.
    ///
    /// ```
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// assert_eq!(driver.runtime().stats().frames, 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn new(builder: RuntimeBuilder) -> Result<TokioDriver, RuntimeError> {
        let waits = FrameWaits::default();
        let runtime = Rc::new(builder.host_waits(waits.clone()).build()?);
        let (sender, inbox) = mpsc::unbounded_channel();
        // Claims, takeovers and operator stops found on the store's thread start a frame at
        // the next slot, whose re-arm ticks the engine (docs/runtime.md §6.3).
        let news = sender.clone();
        runtime.on_store_news(std::sync::Arc::new(move || {
            let _ = news.send(Message::Wake);
        }));
        Ok(TokioDriver {
            runtime,
            waits,
            before_frame: None,
            on_frame: None,
            sender,
            inbox,
        })
    }

    /// The runtime, for tasks on the driver's thread (register verbs before running; use it
    /// between frames from `spawn_local` tasks).
    ///
    /// ```
    /// use tickstep::schedules::Value;
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// driver.runtime().verb("ring", |_| Ok(Value::Int(0)));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn runtime(&self) -> &Rc<Runtime> {
        &self.runtime
    }

    /// A new `Send` handle to this driver.
    ///
    /// ```
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// let handle = driver.handle();
    /// std::thread::spawn(move || handle.submit(|rt| { let _ = rt.stats(); })).join().unwrap()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn handle(&self) -> RuntimeHandle {
        RuntimeHandle {
            sender: self.sender.clone(),
        }
    }

    /// Calls `observe` after every frame that ran (not after idle frames), with nothing borrowed:
    /// where a server records its frame times (e.g. [`FrameLoop::heartbeat_time`]).
    ///
    /// [`FrameLoop::heartbeat_time`]: crate::kernel::FrameLoop::heartbeat_time
    ///
    /// ```
    /// let mut driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// driver.on_frame(|rt| println!("frame took {:?}", rt.frame_loop().heartbeat_time()));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn on_frame(&mut self, observe: impl FnMut(&Runtime) + 'static) {
        self.on_frame = Some(Box::new(observe));
    }

    /// Calls `observe` just before every step of the frame loop (a frame, or an idle pass that
    /// runs none), with nothing borrowed. Paired with [`on_frame`](Self::on_frame) it brackets
    /// each frame that ran: where a server reads a clock of its own at the frame's start (e.g.
    /// the thread's CPU time, to tell the frame's own work from time the OS gave to other
    /// processes, docs/runtime.md §5.11).
    ///
    /// ```
    /// let mut driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// let started = std::rc::Rc::new(std::cell::Cell::new(0_u64));
    /// let mark = std::rc::Rc::clone(&started);
    /// driver.before_frame(move |rt| mark.set(rt.frame_loop().frames_run()));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn before_frame(&mut self, observe: impl FnMut(&Runtime) + 'static) {
        self.before_frame = Some(Box::new(observe));
    }

    /// Runs frames until a handle calls [`RuntimeHandle::shutdown`]; then commits the store.
    ///
    /// # Errors
    ///
    /// As [`TokioDriver::run_until`].
    ///
    /// ```
    /// # let tokio_rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// driver.handle().shutdown(); // already asked: the first wait ends the run
    /// tokio::task::LocalSet::new().block_on(&tokio_rt, driver.run())?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub async fn run(self) -> Result<(), RuntimeError> {
        self.run_until(std::future::pending::<()>()).await
    }

    /// Runs frames until `stop` completes (e.g. [`shutdown_signal`](crate::shutdown_signal)'s
    /// Ctrl-C or SIGTERM, a cancellation token's `cancelled()`) or a handle calls
    /// [`RuntimeHandle::shutdown`]. Then it runs the closures already submitted, commits the
    /// store and returns. A service stops on SIGTERM with one line:
    /// `driver.run_until(tickstep::shutdown_signal()).await?` (docs/runtime.md §5.12).
    ///
    /// # Errors
    ///
    /// [`RuntimeError::Command`] / [`RuntimeError::CommandPanicked`] when a command failed (the
    /// driver stops, after committing); [`RuntimeError::Host`] with `HostError::Store` when the final commit fails.
    ///
    /// ```
    /// # let tokio_rt = tokio::runtime::Builder::new_current_thread().enable_time()
    /// #     .start_paused(true).build().unwrap();
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// tokio::task::LocalSet::new().block_on(&tokio_rt, async {
    ///     let stop = tokio::time::sleep(std::time::Duration::from_secs(20)); // or shutdown_signal()
    ///     driver.run_until(stop).await
    /// })?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub async fn run_until(mut self, stop: impl Future) -> Result<(), RuntimeError> {
        let stop = std::pin::pin!(stop);
        let mut stop = stop;
        let outcome = loop {
            let ran_before = self.runtime.frame_loop().frames_run();
            if let Some(observe) = self.before_frame.as_mut() {
                observe(&self.runtime);
            }
            if let Err(error) = self.runtime.step_frame() {
                break Err(error);
            }
            if self.runtime.frame_loop().frames_run() > ran_before
                && let Some(observe) = self.on_frame.as_mut()
            {
                observe(&self.runtime);
            }
            let frame_ran = self.waits.take();
            let main = self.runtime.scheduler();
            // Busy: the next frame is due one period on (the loop's own arithmetic). Idle: the
            // kernel's wake, and never before that next frame slot.
            let plan = if main.is_attached() {
                Plan {
                    until: frame_ran,
                    slot: None,
                }
            } else {
                Plan {
                    until: main
                        .wake_at()
                        .map(|wake| frame_ran.map_or(wake, |f| wake.max(f))),
                    slot: frame_ran,
                }
            };
            match self.wait(plan, stop.as_mut()).await {
                Waited::Due => {}
                Waited::Stop => break Ok(()),
            }
        };
        self.finish(outcome)
    }

    /// Waits on tokio's timer until the plan's instant. Submissions run as they arrive; while
    /// idle the first one brings the wait forward to the frame slot after the last frame (at
    /// once when that slot has passed), never earlier: the frame loop counts one period per
    /// frame from its last slot, so running frames ahead of their slots would push its grid
    /// into the future.
    async fn wait(&mut self, plan: Plan, mut stop: std::pin::Pin<&mut impl Future>) -> Waited {
        let clock = self.runtime.clock().clone();
        let (started, base) = (tokio::time::Instant::now(), clock.now());
        let mut until = plan.until;
        let mut slot = plan.slot;
        let timer = tokio::time::sleep(until.map_or(Duration::MAX, |at| gap_until(&clock, at)));
        let mut timer = std::pin::pin!(timer);
        loop {
            match next_event(
                stop.as_mut(),
                &mut self.inbox,
                timer.as_mut(),
                until.is_some(),
            )
            .await
            {
                // The driver holds a sender itself, so a closed inbox cannot happen; stop.
                Event::Stop | Event::Message(None) => return Waited::Stop,
                Event::Message(Some(message)) => {
                    // The job sees the time it arrived at, on a manual clock too.
                    follow_tokio(&clock, base, started.elapsed());
                    if let Delivered::Shutdown = self.deliver(message) {
                        return Waited::Stop;
                    }
                    if let Some(at) = slot.take() {
                        let gap = gap_until(&clock, at);
                        if gap.is_zero() {
                            return Waited::Due;
                        }
                        until = Some(at);
                        timer.as_mut().reset(tokio::time::Instant::now() + gap);
                    }
                }
                Event::Timer => {
                    follow_tokio(&clock, base, started.elapsed());
                    return Waited::Due;
                }
            }
        }
    }

    fn deliver(&self, message: Message) -> Delivered {
        match message {
            Message::Job(job) => {
                job(&self.runtime);
                Delivered::Ran
            }
            Message::Wake => Delivered::Ran,
            Message::Shutdown => Delivered::Shutdown,
        }
    }

    /// Runs what was already submitted, refuses the rest, and commits the store.
    fn finish(mut self, outcome: Result<(), RuntimeError>) -> Result<(), RuntimeError> {
        self.inbox.close();
        while let Ok(message) = self.inbox.try_recv() {
            if let Message::Job(job) = message {
                job(&self.runtime);
            }
        }
        let committed = self.runtime.schedules().flush().map_err(|source| {
            RuntimeError::Host(HostError::Store {
                path: self
                    .runtime
                    .store_path()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                source,
            })
        });
        outcome.and(committed)
    }
}

enum Delivered {
    Ran,
    Shutdown,
}

/// What ended one poll of a wait.
enum Event {
    Stop,
    Message(Option<Message>),
    Timer,
}

/// The first of: `stop` done, a message, the timer (when `timed`) — checked in that order. A
/// hand-written `select!`, so the `tokio` feature needs no proc-macro (tokio's `macros` feature
/// would rebuild `syn` with its `full` feature, and with it every derive in the workspace).
fn next_event<'a, S: Future + ?Sized>(
    mut stop: std::pin::Pin<&'a mut S>,
    inbox: &'a mut mpsc::UnboundedReceiver<Message>,
    mut timer: std::pin::Pin<&'a mut tokio::time::Sleep>,
    timed: bool,
) -> impl Future<Output = Event> + 'a {
    std::future::poll_fn(move |cx| {
        if stop.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(Event::Stop);
        }
        if let std::task::Poll::Ready(message) = inbox.poll_recv(cx) {
            return std::task::Poll::Ready(Event::Message(message));
        }
        if timed && timer.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(Event::Timer);
        }
        std::task::Poll::Pending
    })
}

/// How long tokio should sleep until the runtime's clock reads `at`.
fn gap_until(clock: &crate::RuntimeClock, at: Instant) -> Duration {
    Duration::from_nanos(at.as_nanos().saturating_sub(clock.now().as_nanos()))
}

/// A manual clock follows tokio's: it reads `base` (its reading when the wait began) plus the
/// tokio time that has passed since, and never goes back.
fn follow_tokio(clock: &crate::RuntimeClock, base: Instant, passed: Duration) {
    if let Some(manual) = clock.manual() {
        let target = base.saturating_add(passed);
        if target > manual.now() {
            manual.set(target);
        }
    }
}

impl RuntimeHandle {
    /// Runs `job` on the runtime's thread between frames, as soon as that thread is free; an idle
    /// runtime runs a frame right after it.
    ///
    /// # Errors
    ///
    /// [`DriverStopped`] when the driver has stopped (the job is dropped).
    ///
    /// ```
    /// use tickstep::schedules::{ObjId, Options};
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// driver.runtime().verb("ring", |_| Ok(tickstep::schedules::Value::Int(0)));
    /// let handle = driver.handle();
    /// std::thread::spawn(move || {
    ///     handle.submit(|rt| {
    ///         let mut txn = rt.schedules().begin(ObjId(1));
    ///         txn.schedule_every(ObjId(1), "ring", 60.0, vec![], Options::new()).unwrap();
    ///         txn.commit().unwrap();
    ///     })
    /// }).join().unwrap()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn submit(&self, job: impl FnOnce(&Runtime) + Send + 'static) -> Result<(), DriverStopped> {
        self.sender
            .send(Message::Job(Box::new(job)))
            .map_err(|_| DriverStopped)
    }

    /// Runs `job` as [`submit`](Self::submit) does and resolves to its result.
    ///
    /// # Errors
    ///
    /// [`DriverStopped`] when the driver stopped before running it.
    ///
    /// ```
    /// async fn live(handle: &tickstep::RuntimeHandle) -> Result<usize, tickstep::DriverStopped> {
    ///     handle.call(|rt| rt.schedules().live_count()).await
    /// }
    /// ```
    pub async fn call<R: Send + 'static>(
        &self,
        job: impl FnOnce(&Runtime) -> R + Send + 'static,
    ) -> Result<R, DriverStopped> {
        let (reply, answer) = oneshot::channel();
        self.submit(move |rt| {
            let _ = reply.send(job(rt)); // the caller may have given up waiting
        })?;
        answer.await.map_err(|_| DriverStopped)
    }

    /// Wakes an idle runtime so it runs a frame now (after a same-thread task added a schedule
    /// or a kernel timer directly). A busy runtime is not disturbed.
    ///
    /// # Errors
    ///
    /// [`DriverStopped`] when the driver has stopped.
    ///
    /// ```
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// driver.handle().wake()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wake(&self) -> Result<(), DriverStopped> {
        self.sender.send(Message::Wake).map_err(|_| DriverStopped)
    }

    /// Asks the driver to stop: it runs what was submitted before, commits the store and its
    /// `run` returns. Does nothing if it has already stopped.
    ///
    /// ```
    /// let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
    /// driver.handle().shutdown();
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn shutdown(&self) {
        let _ = self.sender.send(Message::Shutdown);
    }
}

impl std::fmt::Debug for TokioDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokioDriver")
            .field("runtime", &self.runtime)
            .finish_non_exhaustive()
    }
}
