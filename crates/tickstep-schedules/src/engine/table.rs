//! The schedule table: a slab of entries, an id index, and a min-heap of deadlines.
//!
//! The heap uses lazy deletion: re-arming or removing an entry does not search the heap; a popped
//! item whose deadline no longer matches its entry's `fire_at` (or whose entry is gone or disarmed)
//! is dropped. Each arming pushes one item, and each firing pops at least one, so the heap stays
//! within a small factor of the number of armed entries. Costs: arm O(log n), pop O(log n) plus
//! one hash lookup, insert/remove O(1) amortised.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::entry::Entry;

/// Hashes integer keys (schedule ids, run ids) with one multiply, FxHash-style.
///
/// SipHash guards string-keyed maps against hash flooding; these keys are ids the engine or the
/// host hands out, and a firing looks them up several times, so the cheap hash is a measured win
/// (`fire_inmem` went from about 540 to 165 ns per firing).
#[derive(Clone, Copy, Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by ids.
pub(super) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Hashes schedule ids for the table's index so that consecutive ids land in consecutive buckets.
///
/// The engine hands ids out in order, so loading a store or firing a batch of schedules created
/// together walks the index sequentially instead of missing the cache on every lookup (the hash
/// table's bucket is chosen by the low bits, which are the id's own). The top seven bits, which
/// the table uses as a per-bucket tag, are mixed so that tags still tell neighbours apart.
#[derive(Clone, Copy, Default)]
pub(super) struct SequentialIdHasher(u64);

impl Hasher for SequentialIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        const TAG: u64 = 0x7f << 57;
        (self.0 & !TAG) ^ (self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) & TAG)
    }
}

/// Re-arms to do once a tick's loop is over, so an entry is visited at most once per tick:
/// (id, deadline).
pub(super) type Later = Vec<(u64, u64)>;

#[derive(Debug, Default)]
pub(crate) struct Table {
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    index: HashMap<u64, u32, BuildHasherDefault<SequentialIdHasher>>,
    heap: BinaryHeap<Reverse<(u64, u64)>>,
}

impl Table {
    /// Reserves room for `n` more entries (used when loading a store).
    pub(super) fn reserve(&mut self, n: usize) {
        self.slots.reserve_exact(n);
        self.index.reserve(n);
    }

    /// Adds armed deadlines in bulk (loading a store): the heap is rebuilt in O(n) instead of
    /// sifting each deadline in, which matters at a million schedules.
    pub(super) fn arm_in_bulk(&mut self, deadlines: Vec<(u64, u64)>) {
        // Same layout: this collect reuses the vector's allocation.
        let mut items: Vec<Reverse<(u64, u64)>> = deadlines.into_iter().map(Reverse).collect();
        items.append(&mut std::mem::take(&mut self.heap).into_vec());
        self.heap = BinaryHeap::from(items);
    }

    pub(super) fn len(&self) -> usize {
        self.index.len()
    }

    /// Inserts `entry`, arming it when `entry.armed`.
    pub(super) fn insert(&mut self, entry: Entry) {
        if entry.armed {
            self.heap.push(Reverse((entry.fire_at, entry.id)));
        }
        self.place(entry);
    }

    /// Inserts `entry` without touching the heap; the caller arms it (see
    /// [`Table::arm_in_bulk`]).
    pub(super) fn place(&mut self, entry: Entry) {
        let id = entry.id;
        let slot = if let Some(slot) = self.free.pop() {
            self.slots[slot as usize] = Some(entry);
            slot
        } else {
            self.slots.push(Some(entry));
            u32::try_from(self.slots.len() - 1).expect("more than 4 billion schedules")
        };
        self.index.insert(id, slot);
    }

    pub(super) fn get(&self, id: u64) -> Option<&Entry> {
        let slot = *self.index.get(&id)?;
        self.slots[slot as usize].as_ref()
    }

    pub(super) fn get_mut(&mut self, id: u64) -> Option<&mut Entry> {
        let slot = *self.index.get(&id)?;
        self.slots[slot as usize].as_mut()
    }

    pub(super) fn remove(&mut self, id: u64) -> Option<Entry> {
        let slot = self.index.remove(&id)?;
        self.free.push(slot);
        self.slots[slot as usize].take()
    }

    /// Arms `id` to fire at `at` (the entry must exist). A paused entry only keeps `at` as its
    /// deadline, unarmed: resuming arms it there (docs/schedules.md §9.4).
    pub(super) fn arm(&mut self, id: u64, at: u64) {
        if let Some(e) = self.get_mut(id) {
            e.fire_at = at;
            if let Some(paused) = e.extra.as_deref_mut().and_then(|x| x.ops.paused.as_mut()) {
                paused.armed = true;
                return;
            }
            e.armed = true;
            self.heap.push(Reverse((at, id)));
        }
    }

    /// Drops stale items from the top of the heap; returns the earliest live deadline.
    pub(super) fn next_deadline(&mut self) -> Option<u64> {
        while let Some(&Reverse((at, id))) = self.heap.peek() {
            if self.is_current(at, id) {
                return Some(at);
            }
            self.heap.pop();
        }
        None
    }

    /// Pops the earliest entry due at or before `now`, disarming it.
    pub(super) fn pop_due(&mut self, now: u64) -> Option<u64> {
        let at = self.next_deadline()?;
        if at > now {
            return None;
        }
        let Reverse((_, id)) = self.heap.pop()?;
        if let Some(e) = self.get_mut(id) {
            e.armed = false;
        }
        Some(id)
    }

    fn is_current(&self, at: u64, id: u64) -> bool {
        self.get(id).is_some_and(|e| e.armed && e.fire_at == at)
    }

    /// Arms `id` at `at`; a deadline already due waits in `later` for the tick's end
    /// (docs/schedules.md §10.2).
    #[inline]
    pub(super) fn arm_at(&mut self, id: u64, at: u64, now: u64, later: &mut Later) {
        if at <= now {
            later.push((id, at));
        } else {
            self.arm(id, at);
        }
    }

    /// Puts back an entry an operator's action changed, when writing the change failed.
    pub(super) fn restore(&mut self, before: Entry) {
        let (id, armed, at) = (before.id, before.armed, before.fire_at);
        if let Some(e) = self.get_mut(id) {
            *e = before;
            e.armed = false;
            if armed {
                self.arm(id, at);
            }
        }
    }

    /// Where `firing` waits for its durable start in its schedule's running list
    /// (docs/schedules.md §11.42).
    #[inline]
    pub(super) fn waiting_place(&self, firing: &crate::Firing) -> Option<usize> {
        self.get(firing.schedule.get())?.waiting_start(firing.run)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.slots.iter().flatten()
    }
}
