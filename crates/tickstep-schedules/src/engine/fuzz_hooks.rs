//! What the fuzz targets need from the engine (feature `fuzzing` only): loading rows as a store
//! would, and building every `schedule_info` record.

use super::handle::Schedules;
use super::storage::Loader;
use crate::row::{RowSink, ScheduleRow};

impl Schedules {
    /// Loads `rows` as a store's load would, catch-up included (for the fuzz targets).
    pub(crate) fn load_rows_for_fuzzing(&self, rows: Vec<ScheduleRow>) {
        let now = self.shared.clock.unix_nanos();
        let mut core = self.shared.core.borrow_mut();
        let mut loader = Loader::new(&mut core, now);
        for row in rows {
            loader
                .apply(row)
                .expect("applying a decoded row cannot fail");
        }
        let behind = loader.finish(0);
        core.catch_up_loaded(behind);
    }

    /// Builds every entry's `schedule_info` record (for the fuzz targets); their run counts'
    /// sum.
    pub(crate) fn schedules_info_for_fuzzing(&self) -> u64 {
        let now = self.shared.clock.unix_nanos();
        let core = self.shared.core.borrow();
        core.table
            .iter()
            .map(|e| core.info(e, now).run_count)
            .fold(0, u64::wrapping_add)
    }
}
