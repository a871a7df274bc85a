//! Trigger nodes: the memoized boolean expression tree behind triggers, one node per signal. A
//! leaf (it imports nothing of the crate), shared by triggers, bindings and the trigger phase.

use std::cell::Cell;
use std::rc::Rc;

use tickstep_kernel::clock::Instant;

/// What a trigger node sees when evaluated.
pub(crate) struct Ctx {
    pub(crate) cycle: u64,
    pub(crate) now: Instant,
}

/// One signal in a trigger's expression tree, memoized per cycle.
pub(crate) struct Node {
    eval: Box<dyn Fn(&Ctx) -> bool>,
    /// (cycle, value) of the last evaluation.
    memo: Cell<(u64, bool)>,
}

impl Node {
    pub(crate) fn new(eval: impl Fn(&Ctx) -> bool + 'static) -> Rc<Node> {
        Rc::new(Node {
            eval: Box::new(eval),
            // No cycle has this number, so a node never read is evaluated on its first read.
            memo: Cell::new((u64::MAX, false)),
        })
    }

    pub(crate) fn value(&self, ctx: &Ctx) -> bool {
        let (cycle, value) = self.memo.get();
        if cycle == ctx.cycle {
            return value;
        }
        let value = (self.eval)(ctx);
        self.memo.set((ctx.cycle, value));
        value
    }
}
