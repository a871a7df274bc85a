//! Schedule keys on the shared database (docs/schedules.md §5.15, §5.17): the store thread reads
//! an owner's schedule by its key, whoever holds it, as it reads one by its id (docs/schedules.md
//! §11.30). The unique index `tickstep_schedules_owner_key` (schema version 5) is what makes a key
//! one row across nodes; this is only its lookup.

use super::store_thread::Worker;
use crate::store_rows::ScheduleRow;
use crate::{Error, ObjId};

impl Worker {
    /// `owner`'s schedule keyed `key`, as the database holds it now.
    pub(super) fn fetch_key(
        &mut self,
        owner: ObjId,
        key: &str,
    ) -> Result<Option<ScheduleRow>, Error> {
        self.fetch_where(
            "owner = $1 AND key = $2",
            &[&owner.0, &key],
            "reading a schedule by its key",
        )
    }
}
