pub(crate) fn run(
    _rt: &tickstep::Runtime,
    _w: &super::world::DemoWorldState,
    _d: Option<std::time::Duration>,
    _s: &std::sync::atomic::AtomicBool,
) -> Result<(), String> {
    Err("--tui is not built yet".into())
}
