//! The kernel of tickstep: the clock every layer reads.
//!
//! (The frame-budgeted scheduler and the frame loop land here next; see the README.)

#![forbid(unsafe_code)]

pub mod clock;
