//! Identity types shared by the engine and the handles: a command instance's slab [`Key`] and
//! the [`Mounted`] marker of what is being polled. A leaf: it imports nothing of the crate, so
//! handles (coroutines, bindings, scopes) can name an instance without reaching into the
//! scheduler's state.

/// A slot index plus the slot's generation when the key was made.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Key {
    pub(crate) idx: u32,
    pub(crate) generation: u32,
}

/// What is being polled right now: nothing, a command (by key) or a sideload (by id), packed in
/// one word so the check every yield makes is a single comparison and a coroutine stays small.
/// Layout: kind in the top two bits; a command's slot index (below 2^30) and generation below.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Mounted(u64);

impl Mounted {
    const KIND: u64 = 3 << 62;
    const COMMAND: u64 = 1 << 62;
    const SIDELOAD: u64 = 2 << 62;
    pub(crate) const NOTHING: Mounted = Mounted(0);

    pub(crate) fn command(key: Key) -> Self {
        debug_assert!(key.idx < MAX_SLOTS);
        Mounted(Self::COMMAND | u64::from(key.idx) << 32 | u64::from(key.generation))
    }

    pub(crate) fn sideload(id: u64) -> Self {
        Mounted(Self::SIDELOAD | (id & !Self::KIND))
    }

    /// The mounted command's key, if a command is mounted.
    pub(crate) fn as_command(self) -> Option<Key> {
        (self.0 & Self::KIND == Self::COMMAND).then_some(Key {
            idx: ((self.0 & !Self::KIND) >> 32) as u32,
            generation: self.0 as u32,
        })
    }

    /// The mounted sideload's id, if a sideload is mounted.
    pub(crate) fn as_sideload(self) -> Option<u64> {
        (self.0 & Self::KIND == Self::SIDELOAD).then_some(self.0 & !Self::KIND)
    }
}

/// Slots a scheduler can hold at once (live command instances), so a key packs into `Mounted`.
pub(crate) const MAX_SLOTS: u32 = 1 << 30;
