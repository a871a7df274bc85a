//! One page of a filtered, ordered list of a store's schedules, read in the store
//! (docs/schedules.md §9.17), as [`Inspector::page`](crate::Inspector::page) asks either store
//! for it: the filters, the order and `LIMIT … OFFSET …` are SQL, the page's
//! rows are read with only the columns a list shows, and two counts say how many matched and how
//! many there are. One query builder serves both stores; they differ only in how a JSON column
//! is looked into, a flag is tested and text is compared (`store::list_sql`).
//!
//! A text search is the one filter SQL cannot do: it looks for the text in the arguments as
//! they read (`{1, "a"}`), which the store keeps as tagged JSON. With one, the matching rows'
//! id, verb, arguments, owner and key are read in order (no other column), searched here, and
//! only the asked page's rows read whole.

use std::fmt::Write as _;

use crate::store::codec::{from_sql, parse_fault, parse_ops, to_sql};
use crate::store::decode::StoredColumns;
use crate::store::list_sql::{Dialect, Param, Reader};
use crate::{
    Error, Fault, FaultKind, MissedReason, ObjId, ScheduleId, ScheduleKind, ScheduleStatus, Value,
};

/// The most rows one page may ask for.
///
/// ```
/// assert_eq!(tickstep_schedules::MAX_PAGE_SIZE, 1_000);
/// ```
pub const MAX_PAGE_SIZE: usize = 1_000;

/// What [`Inspector::page`](crate::Inspector::page) selects and in which order
/// (docs/schedules.md §9.17): every filter given must hold; `None` is no filter.
///
/// ```
/// use tickstep_schedules::{ListOrder, ListQuery, ScheduleKind};
/// let query = ListQuery { kind: Some(ScheduleKind::Cron), order: ListOrder::Next, ..ListQuery::new(50) };
/// assert_eq!((query.page, query.page_size), (1, 50));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListQuery {
    /// Only schedules of this kind.
    pub kind: Option<ScheduleKind>,
    /// Only schedules in this state (docs/schedules.md §9.13; a store holds no retired one).
    pub status: Option<ScheduleStatus>,
    /// Only schedules this principal owns.
    pub owner: Option<ObjId>,
    /// Only schedules that call this verb (the whole name).
    pub verb: Option<String>,
    /// Only schedules of this namespace (docs/schedules.md §15.5), within the inspector's own.
    pub namespace: Option<String>,
    /// Only schedules with this text in their verb, their arguments as they read (`{1, "a"}`,
    /// each argument's literal, joined by spaces), their owner as `#N`, or their key;
    /// case-sensitive.
    pub text: Option<String>,
    /// Owners whose name, where the caller knows names, holds [`ListQuery::text`]: their
    /// schedules match it too.
    pub text_owners: Vec<ObjId>,
    /// Only schedules whose last fault is of this kind (docs/schedules.md §9.19): the
    /// schedules a takeover left [`FaultKind::TakenOver`], for one.
    ///
    /// ```
    /// use tickstep_schedules::{FaultKind, ListQuery};
    /// let taken = ListQuery { last_fault: Some(FaultKind::TakenOver), ..ListQuery::new(50) };
    /// assert!(ListQuery::new(50).last_fault.is_none() && taken.last_fault.is_some());
    /// ```
    pub last_fault: Option<FaultKind>,
    /// The order; ties by id.
    pub order: ListOrder,
    /// Which page, from 1; past the last page is the last page.
    pub page: usize,
    /// Rows a page, 1 to [`MAX_PAGE_SIZE`].
    pub page_size: usize,
}

impl ListQuery {
    /// Every schedule, by id, first page of `page_size` rows.
    ///
    /// ```
    /// let query = tickstep_schedules::ListQuery::new(50);
    /// assert!(query.kind.is_none() && query.text.is_none());
    /// ```
    #[must_use]
    pub fn new(page_size: usize) -> Self {
        ListQuery {
            kind: None,
            status: None,
            owner: None,
            verb: None,
            namespace: None,
            text: None,
            text_owners: Vec::new(),
            last_fault: None,
            order: ListOrder::Id,
            page: 1,
            page_size,
        }
    }
}

/// The order of a [`ListQuery`]'s rows; ties are by id, so pages never overlap.
///
/// ```
/// assert_eq!(tickstep_schedules::ListOrder::default(), tickstep_schedules::ListOrder::Id);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListOrder {
    /// By id.
    #[default]
    Id,
    /// By owner's id.
    Owner,
    /// By verb, byte by byte.
    Verb,
    /// By kind's name (`at`, `cron`, `every`).
    Kind,
    /// By state, in [`ScheduleStatus`]'s order (active, running, failing, paused).
    State,
    /// By when the next firing is due; nothing due last.
    Next,
    /// By key, byte by byte; no key last.
    Key,
    /// By when the last firing started, the most recent first; never fired last
    /// (docs/schedules.md §9.19).
    ///
    /// ```
    /// use tickstep_schedules::{ListOrder, ListQuery};
    /// let recent = ListQuery { order: ListOrder::LastRun, ..ListQuery::new(1_000) };
    /// assert_ne!(recent, ListQuery::new(1_000));
    /// ```
    LastRun,
    /// By when the last point was missed, the most recent first; nothing missed last
    /// (docs/schedules.md §9.19, §9.15).
    ///
    /// ```
    /// use tickstep_schedules::{ListOrder, ListQuery};
    /// let missed = ListQuery { order: ListOrder::LastMiss, ..ListQuery::new(1_000) };
    /// assert_eq!(missed.order, ListOrder::LastMiss);
    /// ```
    LastMiss,
}

/// One page of a list, with how many schedules matched and how many the inspector sees.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("s.db");
/// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
/// #     tickstep_schedules::testkit::TestWorld::new(),
/// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
/// let page = tickstep_schedules::Inspector::open(&path).unwrap()
///     .page(&tickstep_schedules::ListQuery::new(50)).unwrap();
/// assert_eq!((page.rows.len(), page.matched, page.total, page.page, page.pages()), (0, 0, 0, 1, 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ListPage {
    /// The page's rows, in order.
    pub rows: Vec<ListedSchedule>,
    /// How many schedules match the filters.
    pub matched: u64,
    /// How many schedules the inspector sees (its namespace's, or every one).
    pub total: u64,
    /// The page these rows are: the one asked for, or the last when it asked past it.
    pub page: usize,
    /// The rows a page.
    pub page_size: usize,
}

impl ListPage {
    /// How many pages the matched schedules fill (1 when none matched).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let page = tickstep_schedules::Inspector::open(&path).unwrap()
    ///     .page(&tickstep_schedules::ListQuery::new(10)).unwrap();
    /// assert_eq!(page.pages(), 1);
    /// ```
    #[must_use]
    pub fn pages(&self) -> usize {
        pages(self.matched, self.page_size)
    }
}

fn pages(matched: u64, page_size: usize) -> usize {
    usize::try_from(matched.div_ceil(page_size as u64))
        .unwrap_or(usize::MAX)
        .max(1)
}

/// A schedule as a list shows it: the columns a list row needs, and no other.
///
/// ```
/// # use tickstep_schedules::kernel::clock::ManualClock;
/// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// # use tickstep_schedules::{Inspector, ListQuery, Options, Schedules, ScheduleStatus};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("s.db");
/// # let world = TestWorld::new();
/// # let wiz = world.add_wizard();
/// # world.add_verb(wiz, "v");
/// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
/// let mut txn = engine.begin(wiz);
/// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new().key("beat")).unwrap();
/// txn.commit().unwrap();
/// let row = &Inspector::open(&path).unwrap().page(&ListQuery::new(50)).unwrap().rows[0];
/// assert_eq!((row.id, row.key.as_deref(), row.status), (id, Some("beat"), ScheduleStatus::Active));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ListedSchedule {
    /// Its id.
    pub id: ScheduleId,
    /// The application it belongs to (docs/schedules.md §15.5).
    pub namespace: String,
    /// Its kind.
    pub kind: ScheduleKind,
    /// The verb it calls.
    pub verb: String,
    /// Its arguments.
    pub args: Vec<Value>,
    /// Its owner.
    pub owner: ObjId,
    /// Its key, if any.
    pub key: Option<String>,
    /// Nanoseconds between cadence points.
    pub interval_ns: u64,
    /// A `cron` schedule's expression and zone.
    pub calendar: Option<(String, String)>,
    /// What it is doing (docs/schedules.md §9.13).
    pub status: ScheduleStatus,
    /// A paused schedule's note.
    pub pause_note: Option<String>,
    /// When its next firing is due, as [`StoredSchedule::next_due_unix_nanos`] says it.
    ///
    /// [`StoredSchedule::next_due_unix_nanos`]: crate::StoredSchedule::next_due_unix_nanos
    pub next_due_unix_nanos: Option<u64>,
    /// When its last firing started (0 if never).
    pub last_run_unix_nanos: u64,
    /// Its most recent fault.
    pub last_fault: Option<Fault>,
    /// Its last missed point: when (float Unix seconds) and why, as
    /// [`MissedPoints::last`](crate::MissedPoints::last) says it.
    pub last_miss: Option<(f64, MissedReason)>,
    /// Faults since its last success.
    pub consecutive_faults: u32,
    /// Firings started.
    pub run_count: u64,
    /// Faults over its life.
    pub fault_count: u64,
}
/// `ORDER BY`'s terms for `order` in `dialect`, ties by id.
fn order_by(dialect: Dialect, order: ListOrder) -> String {
    let by = match order {
        ListOrder::Id => String::new(),
        ListOrder::Owner => "owner, ".to_owned(),
        ListOrder::Verb => format!("{}, ", dialect.bytewise("verb")),
        ListOrder::Kind => format!("{}, ", dialect.bytewise("kind")),
        ListOrder::State => format!("{}, ", dialect.status()),
        // A deadline of 0 is none, as a list shows it.
        ListOrder::Next => format!(
            "CASE WHEN {armed} AND fire_at <> 0 THEN 0 ELSE 1 END, \
             CASE WHEN {armed} AND fire_at <> 0 THEN fire_at END, ",
            armed = dialect.armed()
        ),
        ListOrder::Key => {
            let key = dialect.key();
            format!(
                "CASE WHEN {key} IS NULL THEN 1 ELSE 0 END, {}, ",
                dialect.bytewise(&key)
            )
        }
        // Never fired is 0, so last.
        ListOrder::LastRun => "last_run DESC, ".to_owned(),
        ListOrder::LastMiss => {
            let at = dialect.last_miss();
            format!("CASE WHEN {at} IS NULL THEN 1 ELSE 0 END, {at} DESC, ")
        }
    };
    format!("{by}id")
}

/// The `WHERE` conditions and their parameters.
struct Conditions {
    sql: Vec<String>,
    params: Vec<Param>,
}

impl Conditions {
    fn push(&mut self, dialect: Dialect, condition: impl Fn(&str) -> String, param: Param) {
        self.params.push(param);
        self.sql.push(condition(&dialect.param(self.params.len())));
    }

    fn clause(&self) -> String {
        if self.sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.sql.join(" AND "))
        }
    }
}

/// The page `query` asks for, read through `reader` in `dialect`, within `namespace` (`None`:
/// every one), in one read transaction: the counts and the rows are of one snapshot.
pub(crate) fn read_page<R: Reader + ?Sized>(
    reader: &R,
    dialect: Dialect,
    namespace: Option<String>,
    query: &ListQuery,
) -> Result<ListPage, Error> {
    reader.execute(if dialect.postgres {
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    } else {
        "BEGIN"
    })?;
    let page = in_snapshot(reader, dialect, namespace, query);
    // Only read: ending it cannot lose anything, and a failed read's error is the one to tell.
    let ended = reader.execute("COMMIT");
    let page = page?;
    ended.map(|()| page)
}

fn in_snapshot<R: Reader + ?Sized>(
    reader: &R,
    dialect: Dialect,
    namespace: Option<String>,
    query: &ListQuery,
) -> Result<ListPage, Error> {
    let mut scope = Conditions {
        sql: Vec::new(),
        params: Vec::new(),
    };
    let ns = dialect.namespace();
    if let Some(namespace) = namespace {
        scope.push(dialect, |p| format!("{ns} = {p}"), Param::Text(namespace));
    }
    let total = count(reader, dialect, &scope)?;
    let filters = filtered(dialect, scope, query);
    let order = order_by(dialect, query.order);
    let table = dialect.table;
    let columns = dialect.listed_columns();
    let size = query.page_size;
    let Some(text) = &query.text else {
        let matched = count(reader, dialect, &filters)?;
        let page = query.page.min(pages(matched, size));
        let sql = format!(
            "SELECT {columns} FROM {table}{} ORDER BY {order} LIMIT {size} OFFSET {}",
            filters.clause(),
            (page - 1) * size
        );
        let rows = listed_rows(reader, &sql, &filters.params)?;
        return Ok(ListPage {
            rows,
            matched,
            total,
            page,
            page_size: size,
        });
    };
    let found = searched(reader, dialect, &filters, &order, query, text)?;
    let matched = found.len() as u64;
    let page = query.page.min(pages(matched, size));
    let wanted = found
        .get((page - 1) * size..)
        .unwrap_or_default()
        .iter()
        .take(size)
        .copied()
        .collect::<Vec<_>>();
    let mut rows = Vec::new();
    if !wanted.is_empty() {
        let mut ids = String::new();
        for (i, id) in wanted.iter().enumerate() {
            let _ = write!(ids, "{}{}", if i > 0 { ", " } else { "" }, to_sql(*id));
        }
        let sql = format!("SELECT {columns} FROM {table} WHERE id IN ({ids})");
        rows = listed_rows(reader, &sql, &[])?;
        rows.sort_by_key(|r| wanted.iter().position(|id| *id == r.id.get()));
    }
    Ok(ListPage {
        rows,
        matched,
        total,
        page,
        page_size: size,
    })
}

/// The ids of the rows `filters` keep that hold `text` (docs/schedules.md §9.17), in `order`.
fn searched<R: Reader + ?Sized>(
    reader: &R,
    dialect: Dialect,
    filters: &Conditions,
    order: &str,
    query: &ListQuery,
    text: &str,
) -> Result<Vec<u64>, Error> {
    // The text is looked for here: the matching rows' ids in order, then the page's rows.
    let sql = format!(
        "SELECT id, verb, args, owner, {} FROM {}{} ORDER BY {order}",
        dialect.key(),
        dialect.table,
        filters.clause()
    );
    let mut found = Vec::new();
    reader.each(&sql, &filters.params, &mut |row| {
        let id = from_sql(row.int(0)?);
        let owner = ObjId(row.int(3)?);
        let hit = row.text(1)?.contains(text)
            || row.text_or_null(4)?.is_some_and(|k| k.contains(text))
            || owner.to_string().contains(text)
            || query.text_owners.contains(&owner)
            || args(row, Some(id), 2)?
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
                .contains(text);
        if hit {
            found.push(id);
        }
        Ok(())
    })?;
    Ok(found)
}

/// `scope` and every filter of `query` but the text.
fn filtered(dialect: Dialect, scope: Conditions, query: &ListQuery) -> Conditions {
    let mut filters = scope;
    let ns = dialect.namespace();
    if let Some(namespace) = &query.namespace {
        filters.push(
            dialect,
            |p| format!("{ns} = {p}"),
            Param::Text(namespace.clone()),
        );
    }
    if let Some(kind) = query.kind {
        filters.push(
            dialect,
            |p| format!("kind = {p}"),
            Param::Text(kind.as_str().to_owned()),
        );
    }
    if let Some(owner) = query.owner {
        filters.push(dialect, |p| format!("owner = {p}"), Param::Int(owner.0));
    }
    if let Some(verb) = &query.verb {
        filters.push(
            dialect,
            |p| format!("verb = {p}"),
            Param::Text(verb.clone()),
        );
    }
    if let Some(kind) = query.last_fault {
        let fault = dialect.last_fault_kind();
        filters.push(
            dialect,
            |p| format!("{fault} = {p}"),
            Param::Text(kind.as_str().to_owned()),
        );
    }
    if let Some(status) = query.status {
        // The rank is this crate's own number: written into the SQL, it needs no parameter
        // (whose type `PostgreSQL` would infer as the CASE's `integer`).
        filters
            .sql
            .push(format!("({}) = {}", dialect.status(), status as u8));
    }
    filters
}

fn count<R: Reader + ?Sized>(
    reader: &R,
    dialect: Dialect,
    conditions: &Conditions,
) -> Result<u64, Error> {
    let sql = format!(
        "SELECT COUNT(*) FROM {}{}",
        dialect.table,
        conditions.clause()
    );
    let mut n = 0;
    reader.each(&sql, &conditions.params, &mut |row| {
        n = from_sql(row.int(0)?);
        Ok(())
    })?;
    Ok(n)
}

fn listed_rows<R: Reader + ?Sized>(
    reader: &R,
    sql: &str,
    params: &[Param],
) -> Result<Vec<ListedSchedule>, Error> {
    let mut rows = Vec::new();
    reader.each(sql, params, &mut |row| {
        rows.push(listed(row)?);
        Ok(())
    })?;
    Ok(rows)
}

/// Column `index`'s arguments (JSON, NULL for none).
fn args<E>(
    row: &dyn StoredColumns<Error = E>,
    id: Option<u64>,
    index: usize,
) -> Result<Vec<Value>, E> {
    match row.text_or_null(index)? {
        None => Ok(Vec::new()),
        Some(text) => serde_json::from_str(text).map_err(|_| row.corrupt(id, index, "args", text)),
    }
}

/// A row read with [`Dialect::listed_columns`].
fn listed<E>(row: &dyn StoredColumns<Error = E>) -> Result<ListedSchedule, E> {
    let id = from_sql(row.int(0)?);
    let some = Some(id);
    let kind_text = row.text(2)?;
    let kind =
        ScheduleKind::parse(kind_text).ok_or_else(|| row.corrupt(some, 2, "kind", kind_text))?;
    let calendar = match (row.text_or_null(8)?, row.text_or_null(9)?) {
        (Some(expr), Some(zone)) => Some((expr.to_owned(), zone.to_owned())),
        _ => None,
    };
    let ops = match row.text_or_null(10)? {
        None => None,
        Some(text) => Some(parse_ops(text).ok_or_else(|| row.corrupt(some, 10, "ops", text))?),
    };
    let (pause_note, last_miss) = match ops {
        None => (None, None),
        Some(ops) => (
            ops.paused.map(|p| p.note),
            ops.missed.view(ops.paused_missed).last,
        ),
    };
    let rank = row.int(11)?;
    let status = usize::try_from(rank)
        .ok()
        .and_then(|i| ScheduleStatus::ALL.get(i).copied())
        .ok_or_else(|| row.corrupt(some, 11, "status", &rank.to_string()))?;
    let armed = row.int(12)? != 0;
    let fire_at = from_sql(row.int(13)?);
    let last_fault = match row.text_or_null(15)? {
        None => None,
        Some(text) => {
            Some(parse_fault(text).ok_or_else(|| row.corrupt(some, 15, "last_fault", text))?)
        }
    };
    let consecutive = row.int(16)?;
    Ok(ListedSchedule {
        id: ScheduleId::from_raw(id),
        namespace: row.text(1)?.to_owned(),
        kind,
        verb: row.text(3)?.to_owned(),
        args: args(row, some, 4)?,
        owner: ObjId(row.int(5)?),
        key: row.text_or_null(6)?.map(str::to_owned),
        interval_ns: from_sql(row.int(7)?),
        calendar,
        status,
        pause_note,
        next_due_unix_nanos: armed.then_some(fire_at),
        last_run_unix_nanos: from_sql(row.int(14)?),
        last_fault,
        last_miss,
        consecutive_faults: u32::try_from(consecutive)
            .map_err(|_| row.corrupt(some, 16, "consecutive_faults", &consecutive.to_string()))?,
        run_count: from_sql(row.int(17)?),
        fault_count: from_sql(row.int(18)?),
    })
}
