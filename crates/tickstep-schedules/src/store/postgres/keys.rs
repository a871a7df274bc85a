//! Schedule keys on the shared database (docs/schedules.md §5.15, §5.17): the store thread reads
//! an owner's schedule by its key, whoever holds it, as it reads one by its id (docs/schedules.md
//! §11.30). The unique index `tickstep_schedules_owner_key` (schema version 5) is what makes a key
//! one row across nodes; this is only its lookup.

use super::codec;
use super::database_error;
use super::worker::Worker;
use crate::row::ScheduleRow;
use crate::{Error, ObjId};

impl Worker {
    /// `owner`'s schedule keyed `key`, as the database holds it now.
    pub(super) fn fetch_key(
        &mut self,
        owner: ObjId,
        key: &str,
    ) -> Result<Option<ScheduleRow>, Error> {
        let context = "reading a schedule by its key";
        self.reconnect_if_closed()?;
        let row = self
            .client
            .query_opt(
                &format!("{} WHERE owner = $1 AND key = $2", codec::select_all()),
                &[&owner.0, &key],
            )
            .map_err(database_error(context))?;
        row.map(|r| codec::decode(&r).map_err(|source| Error::Database { context, source }))
            .transpose()
    }
}
