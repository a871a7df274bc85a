//! Closure pools: small `after()` closures stored by type, so arming a timer allocates nothing.
//!
//! A boxed closure costs an allocation when the timer is armed, a free when it fires, and, with
//! 100k timers pending, a cache miss on the way: fire order is deadline order, which has nothing
//! to do with allocation order, so every box is a cold line somewhere in the heap. Measured on the
//! `timer_fire_100k` bench, the box was about half the cost of a timer.
//!
//! Instead, every closure type gets one pool, a `Vec<Option<F>>` of that exact type (found by
//! `TypeId`), with its own set of free cells. A closure is moved into its pool's lowest free cell
//! and named by the cell's index. No allocation happens once the pool has grown, and timers armed
//! from one call site sit densely side by side (an `Rc` capture takes 8 bytes, not a 32-byte heap
//! chunk plus the allocator's bookkeeping), so the cells of 100k timers fit in the L2 cache, and a
//! burst of timers fills them front to back. All of it is safe
//! code: the type is recovered by `Any::downcast_ref`, never by a cast.
//!
//! Costs: a hash lookup by `TypeId` per `after()`; a pool keeps the capacity of its high-water
//! mark (as the slab does) until its scheduler is dropped. Zero-sized closures (a `Box` of them
//! allocates nothing) and closures over [`MAX_POOLED`] bytes are still boxed.
//!
//! Re-entrancy: each pool is its own `RefCell`, borrowed only to move a closure in or out. The
//! closure runs, or is dropped, after that borrow ends, so it may arm or cancel timers of its own
//! type.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use super::free_set::FreeSet;
use super::panics::run_task;

type Panic = Box<dyn Any + Send>;

/// Closures larger than this are boxed: a pool cell is as large as its closure type.
pub(crate) const MAX_POOLED: usize = 64;

/// Marks a [`PooledFn`] whose closure has already been taken out to run.
const TAKEN: u32 = u32::MAX;

/// One closure type's storage, seen without its type.
trait Pool: Any {
    /// Takes the closure at `index` out and runs it with panics caught.
    fn run(&self, index: u32) -> Option<Panic>;
    /// Takes the closure at `index` out and drops it.
    fn discard(&self, index: u32);
    /// Reads the cell at `index` (a warm-up load, see [`PooledFn::touch`]).
    fn touch(&self, index: u32) -> u64;
}

/// The pool of one closure type `F`: a cell is `None` once its closure has been taken out.
/// (`Option` of a closure that captures a reference or an `Rc` costs no extra bytes.)
struct TypedPool<F> {
    state: RefCell<Cells<F>>,
}

/// A pool's cells and which of them are empty.
struct Cells<F> {
    cells: Vec<Option<F>>,
    /// Emptied cells, reused lowest index first, so the closures of a burst of timers are
    /// written front to back (see [`FreeSet`]).
    free: FreeSet,
}

impl<F: FnOnce() + 'static> TypedPool<F> {
    fn new() -> Self {
        TypedPool {
            state: RefCell::new(Cells {
                cells: Vec::new(),
                free: FreeSet::default(),
            }),
        }
    }

    fn insert(&self, f: F) -> u32 {
        let mut pool = self.state.borrow_mut();
        let Some(index) = pool.free.take_lowest() else {
            let index = u32::try_from(pool.cells.len())
                .ok()
                .filter(|&i| i != TAKEN)
                .expect("more than 4 billion pending timers of one closure type");
            pool.cells.push(Some(f));
            return index;
        };
        let cell = &mut pool.cells[index as usize];
        debug_assert!(cell.is_none(), "the free set names only empty cells");
        *cell = Some(f);
        index
    }

    /// Moves the closure out (the borrow ends before the caller runs or drops it).
    fn take(&self, index: u32) -> F {
        let mut pool = self.state.borrow_mut();
        let f = pool.cells[index as usize]
            .take()
            .expect("a pooled closure is taken once");
        pool.free.insert(index);
        f
    }
}

impl<F: FnOnce() + 'static> Pool for TypedPool<F> {
    fn run(&self, index: u32) -> Option<Panic> {
        let f = self.take(index);
        run_task(f).err()
    }

    fn discard(&self, index: u32) {
        drop(self.take(index));
    }

    fn touch(&self, index: u32) -> u64 {
        self.state.try_borrow().map_or(0, |pool| {
            u64::from(matches!(pool.cells.get(index as usize), Some(Some(_))))
        })
    }
}

/// A closure waiting in its pool. Dropping it drops the closure, as dropping a `Box` would.
pub(crate) struct PooledFn {
    /// A thin pointer keeps [`super::slab::Body`] (and with it a slot) small.
    pool: Rc<Box<dyn Pool>>,
    index: u32,
}

impl PooledFn {
    /// Runs the closure with panics caught; returns the panic, if any.
    pub(crate) fn run(mut self) -> Option<Panic> {
        let index = std::mem::replace(&mut self.index, TAKEN);
        self.pool.run(index)
    }

    /// Loads the closure's cell, so that many of these in a row overlap their cache misses.
    pub(crate) fn touch(&self) -> u64 {
        self.pool.touch(self.index)
    }
}

impl Drop for PooledFn {
    fn drop(&mut self) {
        if self.index != TAKEN {
            self.pool.discard(self.index);
        }
    }
}

/// A `TypeId` is already a hash: use its bits as they are.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }
}

type ByType = HashMap<TypeId, Rc<Box<dyn Pool>>, BuildHasherDefault<TypeIdHasher>>;

/// Every pool of one scheduler, by closure type (boxed on first use: a scheduler that never arms
/// a timer stays one small allocation).
#[derive(Default)]
pub(crate) struct Pools {
    by_type: Option<Box<ByType>>,
}

impl Pools {
    /// Moves `f` into the pool of its type (created on first use).
    pub(crate) fn store<F: FnOnce() + 'static>(&mut self, f: F) -> PooledFn {
        let pool = self
            .by_type
            .get_or_insert_with(Box::default)
            .entry(TypeId::of::<F>())
            .or_insert_with(|| Rc::new(Box::new(TypedPool::<F>::new())));
        let typed: &dyn Any = &***pool;
        let index = typed
            .downcast_ref::<TypedPool<F>>()
            .expect("pools are keyed by their closure type")
            .insert(f);
        PooledFn {
            pool: Rc::clone(pool),
            index,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_pooled_closure_runs_once_and_its_cell_is_reused() {
        let mut pools = Pools::default();
        let runs = Rc::new(Cell::new(0));
        let make = |runs: &Rc<Cell<i32>>| {
            let r = Rc::clone(runs);
            move || r.set(r.get() + 1)
        };
        let first = pools.store(make(&runs));
        assert_eq!(first.index, 0);
        assert!(first.run().is_none());
        assert_eq!(runs.get(), 1);
        let again = pools.store(make(&runs));
        assert_eq!(again.index, 0, "the freed cell is reused");
        drop(again);
        assert_eq!(runs.get(), 1, "dropping does not run it");
        assert_eq!(Rc::strong_count(&runs), 1, "dropping drops the captures");
    }

    #[test]
    fn a_closure_may_store_and_drop_its_own_type_while_running() {
        fn job(log: &Rc<RefCell<Vec<u32>>>, n: u32) -> impl FnOnce() + 'static {
            let log = Rc::clone(log);
            move || log.borrow_mut().push(n)
        }
        let pools = Rc::new(RefCell::new(Pools::default()));
        let log = Rc::new(RefCell::new(Vec::new()));
        let (p, l) = (Rc::clone(&pools), Rc::clone(&log));
        let outer = pools.borrow_mut().store(move || {
            let inner = p.borrow_mut().store(job(&l, 1));
            let dropped = p.borrow_mut().store(job(&l, 2));
            drop(dropped);
            assert!(inner.run().is_none());
        });
        assert!(outer.run().is_none());
        assert_eq!(*log.borrow(), [1]);
    }

    #[test]
    fn a_panic_is_caught_and_the_cell_freed() {
        let mut pools = Pools::default();
        let value = 7_u64;
        let f = pools.store(move || {
            assert!(value == 0, "boom {value}");
        });
        assert!(f.run().is_some());
        let g = pools.store(move || assert_eq!(value, 7));
        assert_eq!(g.index, 0);
        assert!(g.run().is_none());
    }
}
