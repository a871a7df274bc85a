//! The reference suite's `ParallelGroupBuilderTest`, ported (behaviour, not text): one test per
//! reference test, named after it. Its null-argument tests (`optionalVarargNullArray`,
//! `optionalNullInVarargs`, `requiringVarargNullArray`, `requiringNullInVarargs`, `namedWithNull`)
//! have no Rust form; see the crate docs.

mod common;

use common::*;
use tickstep_commands::compose;

#[test]
fn optional_populates_optional_only() {
    let (a, b) = (parked("A"), parked("B"));
    assert_eq!(compose::race([&a, &b]).unwrap().name(), "(A | B)");
}

#[test]
fn requiring_populates_required_only() {
    let (a, b) = (parked("A"), parked("B"));
    assert_eq!(compose::parallel([&a, &b]).unwrap().name(), "(A & B)");
}

#[test]
fn mixed_required_and_optional() {
    let (req_a, req_b) = (parked("ReqA"), parked("ReqB"));
    let (opt_x, opt_y) = (parked("OptX"), parked("OptY"));
    let group = compose::deadline([&req_a, &req_b], [&opt_x, &opt_y]).unwrap();
    assert_eq!(group.name(), "[(ReqA & ReqB) * (OptX | OptY)]");
}

#[test]
fn automatic_name_with_until() {
    let (a, b) = (parked("A"), parked("B"));
    let group = compose::parallel([&a, &b]).unwrap().until(|| false);
    assert_eq!(group.name(), "((A & B) | Until Condition)");
}
