//! How a `SQLite` row gives up a column to the decoder both stores share
//! ([`decode`](crate::store::decode)): typed reads, and errors that name the schedule and the column.

use rusqlite::Row;
use rusqlite::types::FromSqlError;

use crate::store::codec::schedule_name;
use crate::store::decode::StoredColumns;
use crate::store_rows::ScheduleRow;

/// A stored value the codec cannot read: names the schedule (when its id read), the column and
/// its index, and a bounded excerpt of the value.
fn corrupt(id: Option<u64>, index: usize, column: &str, text: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        format!(
            "{}: bad {column} in schedules row: {:?}",
            schedule_name(id),
            crate::limits::excerpt(text)
        )
        .into(),
    )
}

/// Column `i` as borrowed text, or an error naming the column (docs/schedules.md §12.2).
/// (`ValueRef::as_str`'s own error, converted by `?`, names neither the column nor its type: a
/// blob or non-UTF-8 text in `verb` would read as a bare "Invalid type".)
fn text_column<'r>(row: &'r Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    let value = row.get_ref(i)?;
    value.as_str().map_err(|e| {
        let name = row.as_ref().column_name(i).unwrap_or("?").to_owned();
        match e {
            FromSqlError::InvalidType => {
                rusqlite::Error::InvalidColumnType(i, name, value.data_type())
            }
            other => rusqlite::Error::FromSqlConversionFailure(
                i,
                value.data_type(),
                format!("{name} is not UTF-8 text: {other}").into(),
            ),
        }
    })
}

/// Reads one row (selected with [`COLUMNS`](crate::store::codec::COLUMNS)), with the decoding both stores share.
pub(crate) fn decode(row: &Row<'_>) -> rusqlite::Result<ScheduleRow> {
    crate::store::decode::decode(row)
}

impl StoredColumns for Row<'_> {
    type Error = rusqlite::Error;

    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }

    fn int_or_null(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.get(i)
    }

    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.get(i)
    }

    fn text(&self, i: usize) -> rusqlite::Result<&str> {
        text_column(self, i)
    }

    fn text_or_null(&self, i: usize) -> rusqlite::Result<Option<&str>> {
        if self.get_ref(i)? == rusqlite::types::ValueRef::Null {
            return Ok(None);
        }
        text_column(self, i).map(Some)
    }

    fn corrupt(
        &self,
        id: Option<u64>,
        index: usize,
        column: &'static str,
        text: &str,
    ) -> rusqlite::Error {
        corrupt(id, index, column, text)
    }
}
