//! Opening the schedules engine on its store, for every host: a `SQLite` file (its directory
//! created if missing), a `postgres://` URL, or memory (docs/runtime.md §6.1).

use std::path::Path;

use tickstep_kernel::clock::Clock;
use tickstep_schedules::{Config, Runner, Schedules, World};

use crate::error::HostError;

/// The engine on `store` (`None`: in memory), or the error naming the store.
pub(crate) fn open_engine(
    store: Option<&Path>,
    clock: &(impl Clock + Clone + 'static),
    world: impl World + 'static,
    runner: impl Runner + 'static,
    config: Config,
) -> Result<Schedules, HostError> {
    let Some(path) = store else {
        return Ok(Schedules::in_memory(clock.clone(), world, runner, config));
    };
    // A `postgres://` URL names a server, not a file: it has no directory to create.
    let is_url = tickstep_schedules::is_server_location(path);
    if let Some(dir) = path
        .parent()
        .filter(|d| !is_url && !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(|source| HostError::StoreDir {
            path: dir.to_owned(),
            source,
        })?;
    }
    Schedules::open(path, clock.clone(), world, runner, config).map_err(|source| HostError::Store {
        path: path.to_owned(),
        source,
    })
}
