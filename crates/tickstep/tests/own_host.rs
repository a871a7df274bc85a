//! The "bring your own object database and task system" guide (`examples/own_host.rs`) runs as a
//! test, so the guide cannot rot.

#[path = "../examples/own_host.rs"]
mod own_host;

#[test]
fn the_own_host_guide_runs_an_hour_of_sweeps() {
    own_host::main().unwrap();
}
