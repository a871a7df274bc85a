//! The free indices of a slab or pool, handed out lowest first.
//!
//! A last-in-first-out free list hands indices back in the order they were freed. Timers are
//! freed in deadline order, which has nothing to do with where they live, so after one burst the
//! list is a random permutation and every later `after()` writes a cold slot somewhere in a table
//! of 100k. Handing out the lowest free index instead makes the arms of a burst walk their tables
//! front to back, where the hardware prefetcher hides the misses, and keeps a scheduler's working
//! set packed at the front after its load drops.
//!
//! Two levels of bitmap: one bit per index, and one summary bit per 64-index word that still has
//! a free bit. Freeing sets two bits; taking the lowest reads one summary word and one word,
//! after skipping summary words that are empty (each covers 4,096 indices, so for 100k indices
//! the skip is at most 25 words).

/// A set of free indices that yields the lowest first.
#[derive(Default)]
pub(crate) struct FreeSet {
    /// Bit `i` of word `w`: index `64 * w + i` is free.
    words: Vec<u64>,
    /// Bit `j` of summary word `s`: `words[64 * s + j]` is not zero.
    summary: Vec<u64>,
    /// No summary word below this one has a bit set.
    first: usize,
}

impl FreeSet {
    /// Marks `index` free. It must not be free already.
    #[inline]
    pub(crate) fn insert(&mut self, index: u32) {
        let word = index as usize / 64;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
            self.summary.resize(word / 64 + 1, 0);
        }
        debug_assert_eq!(self.words[word] & (1 << (index % 64)), 0, "freed twice");
        self.words[word] |= 1 << (index % 64);
        self.summary[word / 64] |= 1 << (word % 64);
        self.first = self.first.min(word / 64);
    }

    /// Removes and returns the lowest free index.
    #[inline]
    pub(crate) fn take_lowest(&mut self) -> Option<u32> {
        while *self.summary.get(self.first)? == 0 {
            self.first += 1;
        }
        let summary = &mut self.summary[self.first];
        let word = self.first * 64 + summary.trailing_zeros() as usize;
        let bits = &mut self.words[word];
        let bit = bits.trailing_zeros();
        *bits &= *bits - 1;
        if *bits == 0 {
            *summary &= *summary - 1;
        }
        // Indices come from u32s, so the word's index times 64 fits in a u32.
        Some(word as u32 * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Against a `BTreeSet` model: any interleaving of frees and takes yields its minimum.
        #[test]
        fn the_free_set_behaves_like_an_ordered_set(
            ops in proptest::collection::vec(
                prop_oneof![(0_u32..20_000).prop_map(Some), Just(None)],
                0..400,
            )
        ) {
            let mut set = FreeSet::default();
            let mut model = BTreeSet::new();
            for op in ops {
                match op {
                    Some(index) if !model.contains(&index) => {
                        set.insert(index);
                        model.insert(index);
                    }
                    Some(_) => {}
                    None => prop_assert_eq!(set.take_lowest(), model.pop_first()),
                }
            }
            while let Some(lowest) = model.pop_first() {
                prop_assert_eq!(set.take_lowest(), Some(lowest));
            }
            prop_assert_eq!(set.take_lowest(), None);
        }
    }

    #[test]
    fn the_lowest_free_index_comes_out_first_whatever_the_order_freed() {
        let mut set = FreeSet::default();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut freed: Vec<u32> = (0..20_000).collect();
        for i in (1..freed.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            freed.swap(i, (state % (i as u64 + 1)) as usize);
        }
        for &index in &freed {
            set.insert(index);
        }
        for want in 0..10_000 {
            assert_eq!(set.take_lowest(), Some(want));
        }
        // Freeing below the scan position is seen again.
        set.insert(7);
        set.insert(4_097);
        assert_eq!(set.take_lowest(), Some(7));
        assert_eq!(set.take_lowest(), Some(4_097));
        for want in 10_000..20_000 {
            assert_eq!(set.take_lowest(), Some(want));
        }
        assert_eq!(set.take_lowest(), None);
        set.insert(300_000);
        assert_eq!(set.take_lowest(), Some(300_000));
        assert_eq!(set.take_lowest(), None);
    }
}
