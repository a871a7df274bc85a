//! Where the pages' rows come from: a running engine, read between frames on the runtime's thread
//! through its host's eyes, or a store alone, read through an [`Inspector`] off any async thread
//! (its `PostgreSQL` client blocks). Both end as the same [`Row`]s and [`Detail`]s, so each view
//! has one renderer (docs/serve.md §13.10).

use std::path::Path;

use crate::Runtime;
use crate::schedules::{
    Inspector, ListOrder, ListQuery, ListedSchedule, Namespace, ScheduleId, ScheduleInfo,
    StoredSchedule, Value,
};

use super::detail::{Detail, Firing};
use super::host::DashboardHost;
use super::names::Names;
use super::pages::{LIST_CAP, Row};
use super::query::{Filter, Sort};
use super::stored::{info_json, record_json, value_json};

/// How many next fire times a store's detail view shows.
const NEXT_SHOWN: usize = 5;

/// Every live schedule of the runtime, as the host's reader sees them.
pub(crate) fn runtime_rows(rt: &Runtime, host: &dyn DashboardHost) -> Vec<Row> {
    let txn = rt.schedules().begin(host.reader());
    let ids = txn.schedules(None).unwrap_or_default();
    ids.into_iter()
        .filter_map(|id| txn.schedule_info(id).ok())
        .map(|info| info_row(info, host))
        .collect()
}

/// A schedule's list row from its `schedule_info`.
fn info_row(info: ScheduleInfo, host: &dyn DashboardHost) -> Row {
    Row {
        id: info.id.get(),
        owner: host.name_of(info.owner),
        kind: info.kind,
        args: joined(&info.args),
        status: info.status(),
        namespace: None,
        interval: info.interval,
        calendar: info.calendar.map(|c| (c.expr, c.zone)),
        pause_note: info.pause.map(|p| p.note),
        last_run: info.last_run,
        last_fault: fault_text(info.consecutive_faults, info.last_fault.as_ref()),
        verb: info.verb,
        key: info.key,
        next_run: info.next_run,
        run_count: info.run_count,
        fault_count: info.fault_count,
    }
}

/// Schedule `id` of the runtime with every `schedule_info` field, or `None` if the reader sees
/// no such schedule.
pub(crate) fn runtime_detail(rt: &Runtime, host: &dyn DashboardHost, id: u64) -> Option<Detail> {
    let txn = rt.schedules().begin(host.reader());
    let mut info = txn.schedule_info(ScheduleId::from_raw(id)).ok()?;
    let mut fields = Vec::new();
    if let Value::Map(pairs) = info.to_value() {
        for (key, value) in pairs {
            let key = match key {
                Value::Str(name) => name,
                other => other.to_string(),
            };
            fields.push((key, value.to_string()));
        }
    }
    let firings = info.history.iter().map(Firing::from).collect();
    let next_runs = std::mem::take(&mut info.next_runs);
    Some(Detail {
        row: info_row(info, host),
        fields,
        firings,
        next_runs,
    })
}

/// One page of the store's list, as `filter` asks: filtered, ordered and paged in the store
/// (docs/schedules.md §9.17, docs/serve.md §13.2), with how many matched and how many there are.
pub(crate) fn store_page(
    location: &Path,
    namespace: Option<Namespace>,
    filter: &Filter,
    names: &Names,
) -> Result<StorePage, String> {
    store_page_of(location, namespace, filter, names, LIST_CAP)
}

/// What a bulk action on a store would act on (docs/serve.md §13.16): the first `at_most` of the
/// schedules `filter` matches, by id, and how many it matches — read as one page in the store.
pub(crate) fn store_matches(
    location: &Path,
    namespace: Option<Namespace>,
    filter: &Filter,
    names: &Names,
    at_most: usize,
) -> Result<(Vec<Row>, usize), String> {
    let first = Filter {
        sort: Sort::Id,
        page: 1,
        ..filter.clone()
    };
    let page = store_page_of(location, namespace, &first, names, at_most)?;
    Ok((
        page.rows,
        usize::try_from(page.matched).unwrap_or(usize::MAX),
    ))
}

/// [`store_page`] with `page_size` rows a page.
fn store_page_of(
    location: &Path,
    namespace: Option<Namespace>,
    filter: &Filter,
    names: &Names,
    page_size: usize,
) -> Result<StorePage, String> {
    let inspector = open(location, namespace)?;
    let read = |query: &ListQuery| inspector.page(query).map_err(|e| failed(location, &e));
    let mut query = ListQuery {
        kind: filter.kind,
        status: filter.state,
        owner: None,
        verb: filter.verb.clone(),
        namespace: filter.namespace.clone(),
        text: filter.search.clone(),
        // q= finds an owner's name too (docs/serve.md §13.2).
        text_owners: filter
            .search
            .as_deref()
            .map(|q| names.containing(q))
            .unwrap_or_default(),
        last_fault: None,
        order: match filter.sort {
            Sort::Id => ListOrder::Id,
            Sort::Owner => ListOrder::Owner,
            Sort::Verb => ListOrder::Verb,
            Sort::Kind => ListOrder::Kind,
            Sort::State => ListOrder::State,
            Sort::Next => ListOrder::Next,
            Sort::Key => ListOrder::Key,
        },
        page: filter.page,
        page_size,
    };
    if let Some(name) = &filter.owner {
        // By name where the host lends names, else as `#N`; any other name is nobody's.
        let Some(owner) = names.named(name) else {
            let none = read(&ListQuery::new(1))?;
            return Ok(StorePage {
                rows: Vec::new(),
                matched: 0,
                total: none.total,
                page: 1,
            });
        };
        query.owner = Some(owner);
    }
    let page = read(&query)?;
    Ok(StorePage {
        rows: page
            .rows
            .into_iter()
            .map(|s| listed_row(s, names))
            .collect(),
        matched: page.matched,
        total: page.total,
        page: page.page,
    })
}

/// A page of a store's list ([`store_page`]).
pub(crate) struct StorePage {
    pub(crate) rows: Vec<Row>,
    pub(crate) matched: u64,
    pub(crate) total: u64,
    pub(crate) page: usize,
}

fn listed_row(s: ListedSchedule, names: &Names) -> Row {
    let seconds = |ns: u64| ns as f64 / 1e9;
    Row {
        id: s.id.get(),
        owner: names.name_of(s.owner),
        kind: s.kind,
        args: joined(&s.args),
        status: s.status,
        next_run: s.next_due_unix_nanos.map_or(0.0, seconds),
        namespace: Some(s.namespace),
        interval: seconds(s.interval_ns),
        calendar: s.calendar,
        pause_note: s.pause_note,
        last_run: seconds(s.last_run_unix_nanos),
        last_fault: fault_text(s.consecutive_faults, s.last_fault.as_ref()),
        verb: s.verb,
        key: s.key,
        run_count: s.run_count,
        fault_count: s.fault_count,
    }
}

fn stored_row(s: StoredSchedule, names: &Names) -> Row {
    let seconds = |ns: u64| ns as f64 / 1e9;
    Row {
        id: s.id.get(),
        owner: names.name_of(s.owner),
        kind: s.kind,
        args: joined(&s.args),
        status: s.status(),
        next_run: s.next_due_unix_nanos().map_or(0.0, seconds),
        namespace: Some(s.namespace),
        interval: seconds(s.interval_ns),
        calendar: s.calendar.map(|c| (c.expr, c.zone)),
        pause_note: s.pause.map(|p| p.note),
        last_run: seconds(s.last_run_unix_nanos),
        last_fault: fault_text(s.consecutive_faults, s.last_fault.as_ref()),
        verb: s.verb,
        key: s.key,
        run_count: s.run_count,
        fault_count: s.fault_count,
    }
}

/// The last fault as text while the last settled firing is the one that faulted.
fn fault_text(consecutive_faults: u32, fault: Option<&crate::schedules::Fault>) -> Option<String> {
    fault
        .filter(|_| consecutive_faults > 0)
        .map(|f| format!("{}: {}", f.kind.as_str(), value_json(&f.value)))
}

/// Saved schedule `id` with every `schedule_info` field the store keeps, its next fire times and
/// its history; `None` if the store holds no such schedule.
pub(crate) fn store_detail(
    location: &Path,
    namespace: Option<Namespace>,
    id: u64,
    now_unix_nanos: u64,
    names: &Names,
) -> Result<Option<Detail>, String> {
    let inspector = open(location, namespace)?;
    let Some(saved) = inspector
        .get(ScheduleId::from_raw(id))
        .map_err(|e| failed(location, &e))?
    else {
        return Ok(None);
    };
    let history = inspector
        .history(saved.id)
        .map_err(|e| failed(location, &e))?;
    let mut info = info_json(&saved);
    let next: Vec<f64> = saved
        .next_runs(now_unix_nanos, NEXT_SHOWN)
        .into_iter()
        .map(|ns| ns as f64 / 1e9)
        .collect();
    if let Some(map) = info.as_object_mut() {
        // How late the kept firings started (docs/schedules.md §9.16).
        for (key, value) in crate::schedules::Lateness::of(&history).fields() {
            map.insert(key.to_owned(), value_json(&value));
        }
        map.insert("next_runs".into(), next.clone().into());
        map.insert(
            "history".into(),
            history.iter().map(record_json).collect::<Vec<_>>().into(),
        );
    }
    let fields = info
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| (key.clone(), value.to_string()))
        .collect();
    Ok(Some(Detail {
        row: stored_row(saved, names),
        fields,
        firings: history.iter().map(Firing::from).collect(),
        next_runs: next,
    }))
}

/// Opens the store read-only, reading `namespace`'s schedules alone when it is given, with its
/// location (password hidden) in the error.
pub(crate) fn open(location: &Path, namespace: Option<Namespace>) -> Result<Inspector, String> {
    let inspector = Inspector::open(location).map_err(|e| failed(location, &e))?;
    Ok(match namespace {
        Some(namespace) => inspector.in_namespace(namespace),
        None => inspector,
    })
}

/// `error` with the store named (its password hidden).
pub(crate) fn failed(location: &Path, error: &crate::schedules::Error) -> String {
    format!(
        "{}: {}",
        crate::schedules::display_location(location),
        crate::kernel::ErrorChain(error)
    )
}

fn joined(args: &[Value]) -> String {
    args.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::pages::{self, Chrome};
    use crate::dashboard::query::parse_filter;
    use crate::schedules::{ObjId, Options};

    /// A store of a few hundred schedules of five owners, three kinds, two verbs, some keyed,
    /// some paused, some that have run and faulted.
    fn store(path: &Path) {
        let clock = crate::kernel::ManualClock::new();
        let rt = Runtime::builder()
            .manual_clock(clock)
            .store_path(path)
            .build()
            .unwrap();
        rt.verb("ring", |_| Ok(Value::Int(0)));
        rt.verb("boom", |_| Err(Value::from("E_BOOM")));
        let mut ids = Vec::new();
        for n in 0..240_u32 {
            let owner = ObjId(i64::from(1 + n % 5));
            let verb = if n % 4 == 0 { "boom" } else { "ring" };
            let mut options = Options::new();
            if n % 3 == 0 {
                options = options.key(format!("job-{}", (n * 7) % 240));
            }
            let args = vec![
                Value::from(format!("tea {n}")),
                Value::Int(i64::from(n % 9)),
            ];
            let mut txn = rt.schedules().begin(owner);
            let id = match n % 3 {
                0 => txn.schedule_every(owner, verb, f64::from(1 + n % 7), args, options),
                1 => txn.schedule_cron(
                    owner,
                    verb,
                    &format!("{} 3 * * *", n % 60),
                    "UTC",
                    args,
                    options,
                ),
                _ => txn.schedule_at(
                    owner,
                    verb,
                    rt.schedules().now_unix_seconds() + f64::from(3 + n % 11),
                    args,
                    options,
                ),
            }
            .unwrap();
            txn.commit().unwrap();
            ids.push((owner, id));
        }
        rt.run_for(std::time::Duration::from_millis(2500)).unwrap();
        for (owner, id) in ids.iter().step_by(9) {
            let _ = rt.schedules().pause(*owner, *id, "maintenance");
        }
        rt.shutdown().unwrap();
    }

    #[test]
    fn a_stores_page_is_the_page_the_in_memory_list_made_of_every_row() {
        // docs/schedules.md §9.17, docs/serve.md §13.2: the same rows in the same order, the
        // same counts and links, rendered the same. Owners here are #1 to #5, whose names
        // order as their ids do (by name in memory, by id in the store).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        store(&path);
        let chrome = Chrome {
            title: "t".into(),
            runtime: false,
            online: false,
            cluster: false,
            acting_as: None,
            signed: None,
        };
        let names = Names::default();
        let every_row = || -> Vec<Row> {
            open(&path, None)
                .unwrap()
                .list()
                .unwrap()
                .into_iter()
                .map(|s| stored_row(s, &names))
                .collect()
        };
        let mut queries = vec![String::new()];
        for filter in [
            "",
            "kind=cron",
            "kind=every",
            "kind=at",
            "state=paused",
            "state=failing",
            "state=active",
            "owner=%233",
            "owner=nobody",
            "verb=boom",
            "q=tea+1",
            "q=%233",
            "q=job-1",
            "namespace=default",
            "kind=cron&state=paused&owner=%232",
        ] {
            for sort in ["id", "owner", "verb", "kind", "state", "next", "key"] {
                for page in [1, 2, 3, 9] {
                    queries.push(format!("{filter}&sort={sort}&page={page}"));
                }
            }
        }
        let mut states = std::collections::BTreeSet::new();
        for query in &queries {
            let filter = parse_filter(query).unwrap();
            let memory = pages::list(every_row(), &filter, 0.0, &chrome);
            let page = store_page(&path, None, &filter, &names).unwrap();
            states.extend(page.rows.iter().map(|r| r.status));
            let listed = pages::Listed {
                shown: &page.rows,
                matched: page.matched,
                total: page.total,
                page: page.page,
            };
            let stored = pages::list_page(&listed, &filter, 0.0, &chrome);
            assert_eq!(stored, memory, "{query}");
        }
        assert!(
            states.len() >= 3,
            "the fixture has several states: {states:?}"
        );
    }
}
