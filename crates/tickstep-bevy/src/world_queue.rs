//! World access from kernel tasks, commands and verbs: a deferred queue applied at sync points
//! (docs/bevy.md §5).
//!
//! Kernel tasks, command bodies and schedule verbs are `'static` closures and futures run by
//! `!Send` schedulers; none of them can borrow Bevy's `World`. They reach it the way Bevy's own
//! `Commands` do: they *queue* an operation (`FnOnce(&mut World)`), and the plugin applies the
//! queue at a sync point where it holds `&mut World`, in the order the operations were queued:
//!
//! * right after each kernel step (in the kernel's schedule, `Last` by default) and each phase
//!   scheduler's step;
//! * right after each commands cycle (in `FixedUpdate`).
//!
//! An operation that needs an answer returns a [`Reply`]: a future (for async tasks and command
//! bodies) that resolves after the sync point, and a slot that sync code can poll. So a task never
//! holds `&mut World` across an `.await`, and no `unsafe` is involved. A [`SystemId`] can be run
//! the same way ([`WorldQueue::run_system`]), which is how a task calls a one-shot system.
//!
//! Operations queued while the queue is being applied wait for the next sync point, so an
//! operation that queues itself cannot livelock a frame. A panicking operation propagates, as a
//! panicking Bevy command does.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bevy_ecs::bundle::Bundle;
use bevy_ecs::entity::Entity;
use bevy_ecs::system::{RegisteredSystemError, SystemId};
use bevy_ecs::world::World;

type Op = Box<dyn FnOnce(&mut World)>;

/// A cloneable handle to the plugin's queue of deferred world operations.
///
/// Get it from [`TickstepKernel::world`](crate::TickstepKernel::world) (or the commands' and
/// schedules' resources, which share the same queue).
///
/// ```
/// use bevy_ecs::world::World;
/// use tickstep_bevy::WorldQueue;
///
/// let queue = WorldQueue::default();
/// let spawned = queue.spawn(());
/// let mut world = World::new();
/// assert_eq!(queue.apply(&mut world), 1); // what the plugin does at a sync point
/// assert!(world.get_entity(spawned.try_take().unwrap()).is_ok());
/// ```
///
/// It belongs to the app's main thread, like the schedulers that use it (`!Send`):
///
/// ```compile_fail
/// fn send<T: Send>(_: T) {}
/// send(tickstep_bevy::WorldQueue::default());
/// ```
#[derive(Clone, Default)]
pub struct WorldQueue {
    ops: Rc<RefCell<Vec<Op>>>,
}

impl std::fmt::Debug for WorldQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldQueue")
            .field("queued", &self.len())
            .finish()
    }
}

impl WorldQueue {
    /// Queues `op` for the next sync point.
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::WorldQueue;
    ///
    /// #[derive(Resource, Default)]
    /// struct Score(u32);
    ///
    /// let queue = WorldQueue::default();
    /// queue.push(|world| world.resource_mut::<Score>().0 += 1);
    /// let mut world = World::new();
    /// world.init_resource::<Score>();
    /// queue.apply(&mut world);
    /// assert_eq!(world.resource::<Score>().0, 1);
    /// ```
    pub fn push(&self, op: impl FnOnce(&mut World) + 'static) {
        self.ops.borrow_mut().push(Box::new(op));
    }

    /// Queues `f` and returns a [`Reply`] that holds its result after the next sync point.
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::WorldQueue;
    ///
    /// #[derive(Resource)]
    /// struct Gold(u32);
    ///
    /// let queue = WorldQueue::default();
    /// let gold = queue.with(|world| world.resource::<Gold>().0);
    /// assert!(gold.try_take().is_none()); // not applied yet
    /// let mut world = World::new();
    /// world.insert_resource(Gold(3));
    /// queue.apply(&mut world);
    /// assert_eq!(gold.try_take(), Some(3));
    /// ```
    pub fn with<R: 'static>(&self, f: impl FnOnce(&mut World) -> R + 'static) -> Reply<R> {
        let reply = Reply::new();
        let slot = Rc::clone(&reply.slot);
        self.push(move |world| {
            let value = f(world);
            let waker = {
                let mut slot = slot.borrow_mut();
                slot.value = Some(value);
                slot.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        reply
    }

    /// Spawns `bundle` at the next sync point; the reply holds the new entity.
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::WorldQueue;
    ///
    /// #[derive(Component)]
    /// struct Crate;
    ///
    /// let queue = WorldQueue::default();
    /// let entity = queue.spawn(Crate);
    /// let mut world = World::new();
    /// queue.apply(&mut world);
    /// assert!(world.get::<Crate>(entity.try_take().unwrap()).is_some());
    /// ```
    pub fn spawn<B: Bundle>(&self, bundle: B) -> Reply<Entity> {
        self.with(move |world| world.spawn(bundle).id())
    }

    /// Runs the one-shot system `id` at the next sync point; the reply holds its output (or why it
    /// could not run).
    ///
    /// ```
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::WorldQueue;
    ///
    /// let mut world = World::new();
    /// let double = world.register_system(|| 21 * 2);
    /// let queue = WorldQueue::default();
    /// let answer = queue.run_system(double);
    /// queue.apply(&mut world);
    /// assert_eq!(answer.try_take().unwrap().unwrap(), 42);
    /// ```
    pub fn run_system<O: 'static>(
        &self,
        id: SystemId<(), O>,
    ) -> Reply<Result<O, RegisteredSystemError<(), O>>> {
        self.with(move |world| world.run_system(id))
    }

    /// How many operations wait for the next sync point.
    ///
    /// ```
    /// use tickstep_bevy::WorldQueue;
    /// let queue = WorldQueue::default();
    /// queue.push(|_| {});
    /// assert_eq!(queue.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.ops.borrow().len()
    }

    /// Whether nothing waits for the next sync point.
    ///
    /// ```
    /// use tickstep_bevy::WorldQueue;
    /// assert!(WorldQueue::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ops.borrow().is_empty()
    }

    /// Applies every operation queued so far, in order, and returns how many ran. Operations they
    /// queue wait for the next call. The plugin calls this at its sync points; a host driving a
    /// world by hand may too.
    ///
    /// # Panics
    ///
    /// If an operation panics (the panic propagates, as a Bevy command's does; the operations
    /// after it stay queued).
    ///
    /// ```
    /// use bevy_ecs::world::World;
    /// use tickstep_bevy::WorldQueue;
    ///
    /// let queue = WorldQueue::default();
    /// let again = queue.clone();
    /// queue.push(move |_| again.push(|_| {})); // queues one more while applied
    /// let mut world = World::new();
    /// assert_eq!((queue.apply(&mut world), queue.len()), (1, 1));
    /// ```
    pub fn apply(&self, world: &mut World) -> usize {
        if self.ops.borrow().is_empty() {
            return 0;
        }
        let batch = std::mem::take(&mut *self.ops.borrow_mut());
        let count = batch.len();
        let mut batch = batch.into_iter();
        let rest = PutBack {
            queue: self,
            rest: &mut batch,
        };
        for op in rest.rest.by_ref() {
            op(world);
        }
        count
    }
}

/// On a panic mid-batch, puts the operations not yet run back at the front of the queue.
struct PutBack<'a> {
    queue: &'a WorldQueue,
    rest: &'a mut std::vec::IntoIter<Op>,
}

impl Drop for PutBack<'_> {
    fn drop(&mut self) {
        if self.rest.len() == 0 {
            return;
        }
        let mut ops = self.queue.ops.borrow_mut();
        let later = std::mem::take(&mut *ops);
        ops.extend(self.rest.by_ref());
        ops.extend(later);
    }
}

/// The answer to a queued world operation: ready after the sync point that applied it.
///
/// Await it from an async kernel task or a command body (it wakes the task when the answer
/// lands), or poll it with [`Reply::try_take`] from sync code. Dropping it does not cancel the
/// operation.
///
/// ```
/// use std::time::Duration;
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::{TickstepKernel, TickstepPlugin};
/// use tickstep_bevy::kernel::{ManualClock, Priority};
///
/// #[derive(Component)]
/// struct Health(u32);
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
/// let hero = app.world_mut().spawn(Health(7)).id();
/// let kernel = app.world().non_send::<TickstepKernel>();
/// let world = kernel.world().clone();
/// let _task = kernel.scheduler().spawn(async move {
///     let hp = world.with(move |w| w.get::<Health>(hero).map(|h| h.0)).await;
///     world.push(move |w| { w.get_mut::<Health>(hero).unwrap().0 = hp.unwrap() * 2; });
/// }, Priority::Normal);
/// for _ in 0..3 {
///     app.update(); // frame 1: the read is queued and answered; frame 2: the write lands
/// }
/// assert_eq!(app.world().get::<Health>(hero).unwrap().0, 14);
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
#[must_use = "a reply holds the operation's result; drop it explicitly to ignore the result"]
pub struct Reply<R> {
    slot: Rc<RefCell<Slot<R>>>,
}

struct Slot<R> {
    value: Option<R>,
    waker: Option<Waker>,
}

impl<R> Reply<R> {
    fn new() -> Self {
        Reply {
            slot: Rc::new(RefCell::new(Slot {
                value: None,
                waker: None,
            })),
        }
    }

    /// Takes the answer if the operation has been applied (once: later calls return `None`).
    ///
    /// ```
    /// use bevy_ecs::world::World;
    /// use tickstep_bevy::WorldQueue;
    /// let queue = WorldQueue::default();
    /// let r = queue.with(|_| 5);
    /// queue.apply(&mut World::new());
    /// assert_eq!((r.try_take(), r.try_take()), (Some(5), None));
    /// ```
    pub fn try_take(&self) -> Option<R> {
        self.slot.borrow_mut().value.take()
    }

    /// Whether the answer is waiting to be taken.
    ///
    /// ```
    /// use tickstep_bevy::WorldQueue;
    /// let queue = WorldQueue::default();
    /// assert!(!queue.with(|_| ()).is_ready());
    /// ```
    pub fn is_ready(&self) -> bool {
        self.slot.borrow().value.is_some()
    }
}

impl<R> std::fmt::Debug for Reply<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl<R> Future for Reply<R> {
    type Output = R;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let mut slot = self.slot.borrow_mut();
        if let Some(value) = slot.value.take() {
            return Poll::Ready(value);
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_operation_leaves_the_rest_queued_in_order() {
        let queue = WorldQueue::default();
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        queue.push(move |_| l.borrow_mut().push(1));
        queue.push(|_| panic!("boom"));
        let l = log.clone();
        queue.push(move |_| l.borrow_mut().push(3));
        let mut world = World::new();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            queue.apply(&mut world);
        }));
        assert!(caught.is_err());
        assert_eq!(queue.len(), 1);
        queue.apply(&mut world);
        assert_eq!(*log.borrow(), [1, 3]);
    }
}
