//! A small, real host for tests and examples: an object world with owners, wizards, parents and
//! verbs, and a runner that records firings and lets the test decide their outcomes.
//!
//! These are what the crate's own tests and examples drive the engine with; a host embedding the
//! engine may use them for its tests too. Both are cheap-to-clone shared handles, so a test keeps
//! one clone while the engine owns another.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::{Firing, ObjId, Outcome, Refused, RunId, Runner, Schedules, Value, World};

struct Object {
    owner: ObjId,
    parent: Option<ObjId>,
    wizard: bool,
    anonymous: bool,
    /// verb name → (verb owner, executable by anyone)
    verbs: HashMap<String, (ObjId, bool)>,
}

impl Object {
    fn owned_by(owner: ObjId) -> Self {
        Object {
            owner,
            parent: None,
            wizard: false,
            anonymous: false,
            verbs: HashMap::new(),
        }
    }
}

/// An in-memory object world implementing [`World`].
///
/// `controls(who, obj)` is "`who` is `obj` or owns it". A verb is callable when it is found on the
/// target or an ancestor and is executable by the caller: public verbs by anyone, private ones by
/// their owner and wizards.
///
/// ```
/// use tickstep_schedules::World;
/// use tickstep_schedules::testkit::TestWorld;
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// let prog = world.add_programmer();
/// let thing = world.add_object(prog);
/// assert!(world.controls(prog, thing));
/// assert!(!world.controls(wiz, thing), "wizards are exempt in the engine, not here");
/// ```
#[derive(Clone, Default)]
pub struct TestWorld {
    objects: Rc<RefCell<HashMap<ObjId, Object>>>,
}

impl TestWorld {
    /// An empty world.
    ///
    /// ```
    /// use tickstep_schedules::{ObjId, World};
    /// assert!(!tickstep_schedules::testkit::TestWorld::new().valid(ObjId(0)));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    fn add(&self, make: impl FnOnce(ObjId) -> Object) -> ObjId {
        let mut objects = self.objects.borrow_mut();
        let id = ObjId(i64::try_from(objects.len()).unwrap_or(i64::MAX) + 1);
        objects.insert(id, make(id));
        id
    }

    /// A wizard player (owns itself).
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let wiz = world.add_wizard();
    /// assert!(world.is_wizard(wiz));
    /// ```
    pub fn add_wizard(&self) -> ObjId {
        self.add(|id| Object {
            wizard: true,
            ..Object::owned_by(id)
        })
    }

    /// A non-wizard player (owns itself).
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// assert!(!world.is_wizard(p) && world.controls(p, p));
    /// ```
    pub fn add_programmer(&self) -> ObjId {
        self.add(Object::owned_by)
    }

    /// An object owned by `owner`.
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// let o = world.add_object(p);
    /// assert!(world.valid(o) && world.controls(p, o));
    /// ```
    pub fn add_object(&self, owner: ObjId) -> ObjId {
        self.add(|_| Object::owned_by(owner))
    }

    /// An anonymous object owned by `owner`.
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// assert!(world.is_anonymous(world.add_anonymous(p)));
    /// ```
    pub fn add_anonymous(&self, owner: ObjId) -> ObjId {
        self.add(|_| Object {
            anonymous: true,
            ..Object::owned_by(owner)
        })
    }

    /// Makes `parent` the parent of `obj` (verbs are inherited).
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// let (base, child) = (world.add_object(p), world.add_object(p));
    /// world.add_verb(base, "tick");
    /// world.set_parent(child, base);
    /// assert!(world.verb_callable(p, child, "tick"));
    /// ```
    pub fn set_parent(&self, obj: ObjId, parent: ObjId) {
        if let Some(o) = self.objects.borrow_mut().get_mut(&obj) {
            o.parent = Some(parent);
        }
    }

    /// Adds a verb executable by anyone, owned by `obj`'s owner.
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// world.add_verb(p, "v");
    /// assert!(world.verb_callable(world.add_programmer(), p, "v"));
    /// ```
    pub fn add_verb(&self, obj: ObjId, name: &str) {
        let mut objects = self.objects.borrow_mut();
        if let Some(o) = objects.get_mut(&obj) {
            o.verbs.insert(name.to_owned(), (o.owner, true));
        }
    }

    /// Adds a verb without the x bit: callable only by `verb_owner` and wizards.
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let (a, b) = (world.add_programmer(), world.add_programmer());
    /// world.add_private_verb(a, "secret", a);
    /// assert!(world.verb_callable(a, a, "secret"));
    /// assert!(!world.verb_callable(b, a, "secret"));
    /// ```
    pub fn add_private_verb(&self, obj: ObjId, name: &str, verb_owner: ObjId) {
        if let Some(o) = self.objects.borrow_mut().get_mut(&obj) {
            o.verbs.insert(name.to_owned(), (verb_owner, false));
        }
    }

    /// Removes a verb.
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// world.add_verb(p, "v");
    /// world.remove_verb(p, "v");
    /// assert!(!world.verb_callable(p, p, "v"));
    /// ```
    pub fn remove_verb(&self, obj: ObjId, name: &str) {
        if let Some(o) = self.objects.borrow_mut().get_mut(&obj) {
            o.verbs.remove(name);
        }
    }

    /// Destroys `obj` (MOO `recycle()`).
    ///
    /// ```
    /// use tickstep_schedules::World;
    /// let world = tickstep_schedules::testkit::TestWorld::new();
    /// let p = world.add_programmer();
    /// let o = world.add_object(p);
    /// world.recycle(o);
    /// assert!(!world.valid(o));
    /// ```
    pub fn recycle(&self, obj: ObjId) {
        self.objects.borrow_mut().remove(&obj);
    }
}

impl World for TestWorld {
    fn valid(&self, obj: ObjId) -> bool {
        self.objects.borrow().contains_key(&obj)
    }

    fn is_wizard(&self, who: ObjId) -> bool {
        self.objects.borrow().get(&who).is_some_and(|o| o.wizard)
    }

    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        who == obj
            || self
                .objects
                .borrow()
                .get(&obj)
                .is_some_and(|o| o.owner == who)
    }

    fn verb_callable(&self, perms: ObjId, target: ObjId, verb: &str) -> bool {
        let objects = self.objects.borrow();
        let wizard = objects.get(&perms).is_some_and(|o| o.wizard);
        let mut at = Some(target);
        // Bounded walk: a parent cycle cannot hang the test world.
        for _ in 0..=objects.len() {
            let Some(obj) = at.and_then(|id| objects.get(&id)) else {
                return false;
            };
            if let Some(&(owner, executable)) = obj.verbs.get(verb) {
                return executable || wizard || owner == perms;
            }
            at = obj.parent;
        }
        false
    }

    fn is_anonymous(&self, obj: ObjId) -> bool {
        self.objects.borrow().get(&obj).is_some_and(|o| o.anonymous)
    }
}

type StartHook = Rc<dyn Fn(&Firing)>;

#[derive(Default)]
struct RunnerState {
    started: Vec<(RunId, Firing)>,
    running: Vec<RunId>,
    cancelled: Vec<RunId>,
    refusing: Option<String>,
    on_start: Option<StartHook>,
}

/// A [`Runner`] that records every firing and leaves it running until the test reports it.
///
/// ```
/// use tickstep_schedules::testkit::TestRunner;
/// let runner = TestRunner::new();
/// assert!(runner.started().is_empty());
/// assert!(runner.running().is_empty());
/// ```
#[derive(Clone, Default)]
pub struct TestRunner {
    state: Rc<RefCell<RunnerState>>,
}

impl TestRunner {
    /// A runner that accepts every firing.
    ///
    /// ```
    /// let runner = tickstep_schedules::testkit::TestRunner::new();
    /// # let _ = runner;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Every firing started so far, with its run id, in order.
    ///
    /// ```
    /// assert!(tickstep_schedules::testkit::TestRunner::new().started().is_empty());
    /// ```
    pub fn started(&self) -> Vec<(RunId, Firing)> {
        self.state.borrow().started.clone()
    }

    /// Runs started and not yet finished through this runner, oldest first.
    ///
    /// ```
    /// assert!(tickstep_schedules::testkit::TestRunner::new().running().is_empty());
    /// ```
    pub fn running(&self) -> Vec<RunId> {
        self.state.borrow().running.clone()
    }

    /// The runs the engine asked this runner to stop ([`Runner::cancel`]), oldest first,
    /// whether or not this runner had started them.
    ///
    /// ```
    /// let runner = tickstep_schedules::testkit::TestRunner::new();
    /// assert!(runner.cancelled().is_empty());
    /// ```
    pub fn cancelled(&self) -> Vec<RunId> {
        self.state.borrow().cancelled.clone()
    }

    /// Refuse every start with `reason` (or accept again with `None`).
    ///
    /// ```
    /// use std::rc::Rc;
    /// use tickstep_schedules::{Firing, ObjId, RunId, Runner, ScheduleId};
    /// let runner = tickstep_schedules::testkit::TestRunner::new();
    /// runner.set_refusing(Some("queue full"));
    /// let f = Firing { schedule: ScheduleId::from_raw(1), run: RunId(1), target: ObjId(1), verb: Rc::from("v"),
    ///     args: Rc::from(Vec::new()), state: None, elapsed: None, player: ObjId(1), authority: ObjId(1),
    ///     nominal_unix_nanos: 0, time_limit: None, tick_limit: None };
    /// assert!(runner.start(&f).is_err());
    /// ```
    pub fn set_refusing(&self, reason: Option<&str>) {
        self.state.borrow_mut().refusing = reason.map(str::to_owned);
    }

    /// Calls `hook` inside every [`Runner::start`] (after the run is numbered), as a verb that
    /// calls back into the engine would.
    ///
    /// ```
    /// let runner = tickstep_schedules::testkit::TestRunner::new();
    /// runner.on_start(|firing| println!("firing {}", firing.schedule));
    /// ```
    pub fn on_start(&self, hook: impl Fn(&Firing) + 'static) {
        self.state.borrow_mut().on_start = Some(Rc::new(hook));
    }

    /// Reports `outcome` for `run` to `engine`; returns what [`Schedules::report`] returned.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Outcome, RunId, Value};
    /// let runner = TestRunner::new();
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), runner.clone(), Default::default());
    /// assert!(!runner.finish(&engine, RunId(1), Outcome::Returned(Value::Int(0))));
    /// ```
    pub fn finish(&self, engine: &Schedules, run: RunId, outcome: Outcome) -> bool {
        self.state.borrow_mut().running.retain(|&r| r != run);
        engine.report(run, outcome)
    }

    /// Finishes every running run with a return value of 0.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let runner = TestRunner::new();
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), runner.clone(), Default::default());
    /// runner.finish_all(&engine);
    /// ```
    pub fn finish_all(&self, engine: &Schedules) {
        let runs = std::mem::take(&mut self.state.borrow_mut().running);
        for run in runs {
            engine.report(run, Outcome::Returned(Value::Int(0)));
        }
    }
}

impl Runner for TestRunner {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        let hook = {
            let mut state = self.state.borrow_mut();
            if let Some(reason) = &state.refusing {
                return Err(Refused(reason.clone()));
            }
            state.started.push((firing.run, firing.clone()));
            state.running.push(firing.run);
            state.on_start.clone()
        };
        if let Some(hook) = hook {
            hook(firing);
        }
        Ok(())
    }

    fn cancel(&self, run: RunId) -> bool {
        let mut state = self.state.borrow_mut();
        let before = state.running.len();
        state.running.retain(|r| *r != run);
        state.cancelled.push(run);
        state.running.len() < before
    }
}

/// A [`Runner`] that starts nothing: it remembers each run's id, so a benchmark can report
/// outcomes in bulk with [`CountingRunner::take_started`]. No firing is recorded beyond its id,
/// so it costs a push.
///
/// ```
/// use tickstep_schedules::testkit::CountingRunner;
/// let runner = CountingRunner::default();
/// assert!(runner.take_started().is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct CountingRunner {
    started: Rc<RefCell<Vec<RunId>>>,
}

impl CountingRunner {
    /// The ids of every run started since the last call, oldest first.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::CountingRunner;
    /// assert!(CountingRunner::default().take_started().is_empty());
    /// ```
    pub fn take_started(&self) -> Vec<RunId> {
        std::mem::take(&mut *self.started.borrow_mut())
    }

    /// Moves the ids of every run started since the last call onto the end of `out`, keeping
    /// `out`'s allocation (the benchmark's steady state allocates nothing).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::CountingRunner;
    /// let mut out = Vec::new();
    /// CountingRunner::default().drain_started_into(&mut out);
    /// assert!(out.is_empty());
    /// ```
    pub fn drain_started_into(&self, out: &mut Vec<RunId>) {
        out.append(&mut self.started.borrow_mut());
    }
}

impl Runner for CountingRunner {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        self.started.borrow_mut().push(firing.run);
        Ok(())
    }
}

/// A [`ManualClock`](tickstep_kernel::clock::ManualClock) that does not say it is virtual
/// ([`Clock::is_virtual`](tickstep_kernel::clock::Clock::is_virtual)): an engine reading it does
/// what it does on real time — the tick hands a persistent firing's update to the store's writer
/// and never waits for it, and the firing starts at a later tick (docs/schedules.md §11.42) —
/// while the test moves the time. With no store (or nothing that persists) it changes nothing.
///
/// ```
/// use std::time::Duration;
/// use tickstep_schedules::kernel::clock::{Clock, ManualClock};
/// use tickstep_schedules::testkit::{RealTimeClock, TestRunner, TestWorld};
/// use tickstep_schedules::{Options, Schedules};
///
/// let dir = tempfile::tempdir().unwrap();
/// let clock = ManualClock::new();
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// world.add_verb(wiz, "ping");
/// let engine = Schedules::open(dir.path().join("s.db"), RealTimeClock(clock.clone()), world,
///     TestRunner::new(), Default::default()).unwrap();
/// let mut txn = engine.begin(wiz);
/// txn.schedule_every(wiz, "ping", 1.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
/// clock.advance(Duration::from_secs(1));
/// assert_eq!(engine.tick().unwrap().starts_waiting, 1); // its update goes to the writer
/// engine.wait_for_writes().unwrap();
/// assert_eq!(engine.tick().unwrap().started, 1); // written: it starts
/// ```
#[derive(Clone, Debug)]
pub struct RealTimeClock(pub tickstep_kernel::clock::ManualClock);

impl tickstep_kernel::clock::Clock for RealTimeClock {
    fn now(&self) -> tickstep_kernel::clock::Instant {
        self.0.now()
    }

    fn unix_nanos(&self) -> u64 {
        self.0.unix_nanos()
    }

    fn sleep_until(&self, deadline: tickstep_kernel::clock::Instant) {
        self.0.sleep_until(deadline);
    }
}
