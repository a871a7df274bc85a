//! The deadline heap: an indexed binary min-heap of `after()` and positive `every()` entries.
//!
//! Keyed by `(deadline, sequence)`, so entries due at the same instant fire in the order they
//! were armed. A position table maps each slot index to its place in the heap, which makes
//! cancellation a direct O(log n) removal: a cancelled timer leaves the heap at once instead of
//! lingering as a tombstone (so the idle wake and `queue_depths` never see it).

use crate::clock::Instant;

const ABSENT: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    deadline: Instant,
    seq: u64,
    slot: u32,
}

impl Node {
    fn before(&self, other: &Node) -> bool {
        (self.deadline, self.seq) < (other.deadline, other.seq)
    }
}

pub(crate) struct TimerHeap {
    nodes: Vec<Node>,
    /// Heap position of each slot index, `ABSENT` when the slot is not on the heap.
    position: Vec<u32>,
    next_seq: u64,
}

impl TimerHeap {
    pub(crate) fn new() -> Self {
        TimerHeap {
            nodes: Vec::new(),
            position: Vec::new(),
            next_seq: 0,
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
    pub(crate) fn push(&mut self, slot: u32, deadline: Instant) {
        let index = slot as usize;
        if index >= self.position.len() {
            self.position.resize(index + 1, ABSENT);
        }
        debug_assert_eq!(self.position[index], ABSENT, "slot armed twice");
        let node = Node {
            deadline,
            seq: self.next_seq,
            slot,
        };
        self.next_seq += 1;
        self.nodes.push(node);
        self.sift_up(self.nodes.len() - 1);
    }

    /// Removes and returns the earliest slot if its deadline is at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<u32> {
        let first = self.nodes.first()?;
        if first.deadline > now {
            return None;
        }
        let slot = first.slot;
        self.remove_at(0);
        Some(slot)
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
            if pos > 0 && last.before(&self.nodes[(pos - 1) / 2]) {
                self.sift_up(pos);
            } else {
                self.sift_down(pos);
            }
        }
    }

    fn sift_up(&mut self, mut pos: usize) {
        let node = self.nodes[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
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
            let left = 2 * pos + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.nodes[right].before(&self.nodes[left]) {
                right
            } else {
                left
            };
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
                assert!(!node.before(&self.nodes[(pos - 1) / 2]));
            }
        }
    }
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
                    heap.push(slot, Instant::from_nanos(u64::from((slot * 7919) % 97)));
                }
                assert!(heap.remove(victim));
                assert!(!heap.remove(victim));
                heap.check();
                let mut last = (Instant::ZERO, 0);
                let mut popped = 0;
                while let Some(slot) = heap.pop_due(Instant::MAX) {
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
            heap.push(slot, Instant::from_nanos(10));
        }
        let order: Vec<u32> =
            std::iter::from_fn(|| heap.pop_due(Instant::from_nanos(10))).collect();
        assert_eq!(order, [5, 3, 9, 1]);
    }

    #[test]
    fn pop_due_leaves_future_deadlines() {
        let mut heap = TimerHeap::new();
        heap.push(0, Instant::from_nanos(20));
        assert_eq!(heap.pop_due(Instant::from_nanos(19)), None);
        assert_eq!(heap.pop_due(Instant::from_nanos(20)), Some(0));
    }
}
