//! The deadline heap: an indexed 4-ary min-heap of `after()` and positive `every()` entries.
//!
//! Keyed by `(deadline, sequence)`, so entries due at the same instant fire in the order they
//! were armed. A position table maps each slot index to its place in the heap, which makes
//! cancellation a direct O(log n) removal: a cancelled timer leaves the heap at once instead of
//! lingering as a tombstone (so the idle wake and `queue_depths` never see it).
//!
//! Four children per node halve the depth of a binary heap, and the four siblings share a cache
//! line or two, which is what matters once a heap of 100k timers no longer fits in cache.
//! When many timers come due in one step (a burst, or a scheduler that slept), popping them one
//! by one costs O(k log n) scattered memory accesses; past [`BULK_AFTER`] pops the heap switches to
//! one sequential pass instead: split off every due node, sort those, and rebuild the rest in
//! O(n). The order handed back is the same either way.
//!
//! The sort of a large burst splits it by one radix pass on the deadline first, then sorts the
//! small buckets in cache ([`sort_due`]).
//!
//! Why still a heap and not a hierarchical timing wheel (tokio's `DelayQueue`): profiling the
//! 100k-timer benchmarks showed the heap itself is a minor cost. Arming is a sift-up that rarely
//! climbs, a burst leaves the heap in one linear pass, and what dominates is touching each timer's
//! slot and closure in deadline order, which a wheel must do too. (Arming touches them as well;
//! the slab and the closure pools hand out their lowest free index, so arming walks them in
//! order, see `free_set`.) A wheel would also need a sort
//! of each expired bucket to keep exact deadlines and arming order, and a scan to find the
//! earliest deadline for the idle wake, which the heap reads at its root.

use crate::Priority;
use crate::clock::Instant;

const ABSENT: u32 = u32::MAX;
const ARITY: usize = 4;
/// Due timers popped one at a time before the bulk path takes over.
const BULK_AFTER: usize = 32;
/// Bits of the deadline the radix pass splits a burst by (2,048 buckets: the counts stay in L1).
const RADIX_BITS: u32 = 11;
/// Below this many due nodes a comparison sort is cheaper than clearing the radix counts.
const RADIX_FROM: usize = 512;

#[derive(Clone, Copy)]
struct Node {
    deadline: Instant,
    seq: u64,
    slot: u32,
    /// Carried here (in what would be padding) so a due timer can be queued without touching
    /// its slot.
    priority: Priority,
}

impl Node {
    /// The ordering key: deadline, then arming order.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.deadline.as_nanos()) << 64) | u128::from(self.seq)
    }

    #[inline]
    fn before(&self, other: &Node) -> bool {
        self.key() < other.key()
    }
}

pub(crate) struct TimerHeap {
    nodes: Vec<Node>,
    /// Heap position of each slot index, `ABSENT` when the slot is not on the heap.
    position: Vec<u32>,
    next_seq: u64,
    /// The bulk path's output buffer, kept to reuse its allocation.
    sorted: Vec<Node>,
}

impl TimerHeap {
    pub(crate) fn new() -> Self {
        TimerHeap {
            nodes: Vec::new(),
            position: Vec::new(),
            next_seq: 0,
            sorted: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The earliest deadline.
    pub(crate) fn peek_deadline(&self) -> Option<Instant> {
        self.nodes.first().map(|n| n.deadline)
    }

    /// Arms `slot` for `deadline`. The slot must not be on the heap already.
    pub(crate) fn push(&mut self, slot: u32, deadline: Instant, priority: Priority) {
        let index = slot as usize;
        if index >= self.position.len() {
            self.position.resize(index + 1, ABSENT);
        }
        debug_assert_eq!(self.position[index], ABSENT, "slot armed twice");
        let node = Node {
            deadline,
            seq: self.next_seq,
            slot,
            priority,
        };
        self.next_seq += 1;
        self.nodes.push(node);
        self.sift_up(self.nodes.len() - 1);
    }

    /// Removes and returns the earliest slot if its deadline is at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<(u32, Priority)> {
        let first = self.nodes.first()?;
        if first.deadline > now {
            return None;
        }
        let popped = (first.slot, first.priority);
        self.remove_at(0);
        Some(popped)
    }

    /// Removes every slot due at or before `now` and calls `each` with them in
    /// `(deadline, sequence)` order.
    pub(crate) fn drain_due(&mut self, now: Instant, mut each: impl FnMut(u32, Priority)) {
        for _ in 0..BULK_AFTER {
            match self.pop_due(now) {
                Some((slot, priority)) => each(slot, priority),
                None => return,
            }
        }
        if self.peek_deadline().is_none_or(|d| d > now) {
            return;
        }
        // Bulk path: one pass moves the due nodes to the end of the array, they are sorted out of
        // it, and the rest is re-heapified.
        let mut kept = 0;
        for i in 0..self.nodes.len() {
            let node = self.nodes[i];
            if node.deadline <= now {
                self.position[node.slot as usize] = ABSENT;
            } else {
                self.nodes.swap(kept, i);
                kept += 1;
            }
        }
        let mut sorted = std::mem::take(&mut self.sorted);
        sort_due(&self.nodes[kept..], &mut sorted);
        self.nodes.truncate(kept);
        self.heapify();
        for node in &sorted {
            each(node.slot, node.priority);
        }
        self.sorted = sorted;
    }

    /// Removes `slot` wherever it is in the heap. Returns whether it was there.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        match self.position.get(slot as usize) {
            Some(&pos) if pos != ABSENT => {
                self.remove_at(pos as usize);
                true
            }
            _ => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        for node in &self.nodes {
            self.position[node.slot as usize] = ABSENT;
        }
        self.nodes.clear();
    }

    fn remove_at(&mut self, pos: usize) {
        let removed = self.nodes[pos].slot;
        self.position[removed as usize] = ABSENT;
        let last = self.nodes.pop().expect("remove_at on an empty heap");
        if pos < self.nodes.len() {
            // Put the last node in the hole and restore order in whichever direction it broke.
            self.nodes[pos] = last;
            self.position[last.slot as usize] = pos as u32;
            if pos > 0 && last.before(&self.nodes[(pos - 1) / ARITY]) {
                self.sift_up(pos);
            } else {
                self.sift_down(pos);
            }
        }
    }

    /// Restores the heap over all nodes (Floyd's bottom-up build) and rewrites every position.
    fn heapify(&mut self) {
        let len = self.nodes.len();
        if len > 1 {
            for pos in (0..=(len - 2) / ARITY).rev() {
                self.sift_down(pos);
            }
        }
        for (pos, node) in self.nodes.iter().enumerate() {
            self.position[node.slot as usize] = pos as u32;
        }
    }

    fn sift_up(&mut self, mut pos: usize) {
        let node = self.nodes[pos];
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if !node.before(&self.nodes[parent]) {
                break;
            }
            self.nodes[pos] = self.nodes[parent];
            self.position[self.nodes[pos].slot as usize] = pos as u32;
            pos = parent;
        }
        self.nodes[pos] = node;
        self.position[node.slot as usize] = pos as u32;
    }

    fn sift_down(&mut self, mut pos: usize) {
        let node = self.nodes[pos];
        let len = self.nodes.len();
        loop {
            let first = ARITY * pos + 1;
            if first >= len {
                break;
            }
            let mut child = first;
            for candidate in first + 1..(first + ARITY).min(len) {
                if self.nodes[candidate].before(&self.nodes[child]) {
                    child = candidate;
                }
            }
            if !self.nodes[child].before(&node) {
                break;
            }
            self.nodes[pos] = self.nodes[child];
            self.position[self.nodes[pos].slot as usize] = pos as u32;
            pos = child;
        }
        self.nodes[pos] = node;
        self.position[node.slot as usize] = pos as u32;
    }

    /// Checks the heap property and the position table (tests only).
    #[cfg(test)]
    fn check(&self) {
        for (pos, node) in self.nodes.iter().enumerate() {
            assert_eq!(self.position[node.slot as usize] as usize, pos);
            if pos > 0 {
                assert!(!node.before(&self.nodes[(pos - 1) / ARITY]));
            }
        }
    }
}

/// Copies `due` into `sorted` in firing order, `(deadline, sequence)`: the same order as
/// `sort_unstable_by_key(Node::key)`.
///
/// A large burst is first split by one radix pass on the top [`RADIX_BITS`] bits of each
/// deadline's offset from the earliest one: a single sequential read and a scatter into 2,048
/// buckets already in deadline order. Each bucket (about 50 nodes for 100k spread evenly) is then
/// sorted where it lies, in cache. A full comparison sort of 100k nodes made a quarter of the
/// instructions of firing them; a full least-significant-digit radix sort saved those but
/// streamed the whole burst through memory once per digit. Sorting in place instead (an American
/// flag sort) saves the output buffer but chains one cache miss per node behind the last: the
/// scatter's reads are sequential and its writes independent, so their misses overlap.
fn sort_due(due: &[Node], sorted: &mut Vec<Node>) {
    sorted.clear();
    if due.len() < RADIX_FROM {
        sorted.extend_from_slice(due);
        sorted.sort_unstable_by_key(Node::key);
        return;
    }
    let nanos = |node: &Node| node.deadline.as_nanos();
    let min = due.iter().map(nanos).min().unwrap_or(0);
    let max = due.iter().map(nanos).max().unwrap_or(0);
    let shift = (u64::BITS - (max - min).leading_zeros()).saturating_sub(RADIX_BITS);
    let bucket = |node: &Node| ((nanos(node) - min) >> shift) as usize;
    let mut ends = [0_usize; 1 << RADIX_BITS];
    for node in due {
        ends[bucket(node)] += 1;
    }
    let mut total = 0;
    for end in &mut ends {
        total += *end;
        *end = total;
    }
    // Filled back to front, so each bucket's cursor finishes at its start.
    sorted.resize(due.len(), due[0]);
    for node in due.iter().rev() {
        let cursor = &mut ends[bucket(node)];
        *cursor -= 1;
        sorted[*cursor] = *node;
    }
    // Each cursor now marks its bucket's start; the first bucket starts at 0.
    let mut start = 0;
    for &next_start in &ends[1..] {
        sorted[start..next_start].sort_unstable_by_key(Node::key);
        start = next_start;
    }
    sorted[start..].sort_unstable_by_key(Node::key);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_at_every_position_keeps_the_heap_ordered() {
        for n in 1..40u32 {
            for victim in 0..n {
                let mut heap = TimerHeap::new();
                for slot in 0..n {
                    // A scrambled but deterministic deadline order.
                    heap.push(
                        slot,
                        Instant::from_nanos(u64::from((slot * 7919) % 97)),
                        Priority::Normal,
                    );
                }
                assert!(heap.remove(victim));
                assert!(!heap.remove(victim));
                heap.check();
                let mut last = (Instant::ZERO, 0);
                let mut popped = 0;
                while let Some((slot, _)) = heap.pop_due(Instant::MAX) {
                    assert_ne!(slot, victim);
                    let key = (Instant::from_nanos(u64::from((slot * 7919) % 97)), slot);
                    assert!(key >= last);
                    last = key;
                    popped += 1;
                    heap.check();
                }
                assert_eq!(popped, n - 1);
            }
        }
    }

    #[test]
    fn equal_deadlines_pop_in_arming_order() {
        let mut heap = TimerHeap::new();
        for slot in [5, 3, 9, 1] {
            heap.push(slot, Instant::from_nanos(10), Priority::Normal);
        }
        let order: Vec<u32> =
            std::iter::from_fn(|| heap.pop_due(Instant::from_nanos(10)).map(|(s, _)| s)).collect();
        assert_eq!(order, [5, 3, 9, 1]);
    }

    #[test]
    fn pop_due_leaves_future_deadlines() {
        let mut heap = TimerHeap::new();
        heap.push(0, Instant::from_nanos(20), Priority::Low);
        assert_eq!(heap.pop_due(Instant::from_nanos(19)), None);
        assert_eq!(
            heap.pop_due(Instant::from_nanos(20)),
            Some((0, Priority::Low))
        );
    }

    #[test]
    fn drain_due_takes_the_bulk_path_in_the_same_order() {
        for n in [10u32, 33, 200, 1000] {
            let mut heap = TimerHeap::new();
            let deadline = |slot: u32| Instant::from_nanos(u64::from((slot * 7919) % 101));
            for slot in 0..n {
                heap.push(slot, deadline(slot), Priority::High);
            }
            let mut fired = Vec::new();
            heap.drain_due(Instant::from_nanos(60), |slot, _| fired.push(slot));
            heap.check();
            let mut want: Vec<u32> = (0..n)
                .filter(|&s| deadline(s) <= Instant::from_nanos(60))
                .collect();
            want.sort_by_key(|&s| (deadline(s), s));
            assert_eq!(fired, want, "n={n}");
            assert_eq!(heap.len(), n as usize - want.len());
            // What is left still pops in order and can still be cancelled.
            let left: Vec<u32> = (0..n).filter(|s| !want.contains(s)).collect();
            if let Some(&victim) = left.first() {
                assert!(heap.remove(victim));
                heap.check();
            }
            let mut last = (Instant::ZERO, 0);
            while let Some((slot, _)) = heap.pop_due(Instant::MAX) {
                assert!((deadline(slot), slot) >= last);
                last = (deadline(slot), slot);
            }
        }
    }

    #[test]
    fn the_radix_sort_orders_like_a_comparison_sort() {
        // Spreads from all-equal to the whole clock, with heavy ties and shuffled sequences.
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (len, spread) in [
            (RADIX_FROM, 1),
            (RADIX_FROM, 0),
            (2_000, 50),
            (5_000, 1_000_000_000),
            (3_000, u64::MAX),
        ] {
            let mut due: Vec<Node> = (0..len)
                .map(|i| Node {
                    deadline: Instant::from_nanos(match spread {
                        0 => 7,
                        u64::MAX => next(),
                        s => 1_000 + next() % s,
                    }),
                    seq: next() % 1_000_000,
                    slot: u32::try_from(i).unwrap(),
                    priority: Priority::Normal,
                })
                .collect();
            let mut sorted = vec![due[0]; 3]; // leftovers from an earlier burst
            sort_due(&due, &mut sorted);
            due.sort_unstable_by_key(Node::key);
            let keys = |nodes: &[Node]| nodes.iter().map(Node::key).collect::<Vec<_>>();
            assert_eq!(keys(&sorted), keys(&due), "len={len} spread={spread}");
        }
    }
}
