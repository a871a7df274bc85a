//! What the tests of this crate share with the schedules crate's: its throwaway `PostgreSQL`
//! server (included, not copied), at the path its `pg_or_skip!` macro names.

#[path = "../../../tickstep-schedules/tests/common/pg.rs"]
pub(crate) mod pg;
