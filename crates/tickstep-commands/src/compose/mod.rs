//! Compositions: commands built from commands, written with the same coroutine API users have.
//!
//! * [`sequence`], [`parallel`], [`race`], [`deadline`] and [`wait`] — in `group`.
//! * Chaining methods on [`Command`](crate::Command): `and_then`, `along_with`, `race_with`,
//!   `with_timeout`, `until` — in `chain`.
//! * [`StateMachine`] — in `state_machine`; its drawing ([`StateGraph`]) in `graph`.
//!
//! A composition requires the union of its children's requirements and takes the highest child
//! priority, so it claims everything its children need before they start; its children run as
//! its children (they may use its mechanisms, and die with it). A composition ends in the same
//! cycle as the child that ends it, because children run before their parent in each cycle.
//! A child that cannot start fails the composition (`CompletedWithError`), which cancels it.

mod chain;
mod graph;
mod group;
mod state_machine;

pub use graph::{EdgeKind, GraphEdge, GraphTarget, StateGraph};
pub use group::{deadline, parallel, race, sequence, wait};
pub use state_machine::{MAX_STATE_ENTRIES_PER_RUN, StateId, StateMachine};
