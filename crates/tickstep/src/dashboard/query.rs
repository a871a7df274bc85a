//! What a dashboard request asks, read from its path, query string or form: the list's filter and
//! order (docs/serve.md §13.2), a schedule id, and `%`-decoding; anything else, or a bad value, is
//! refused with a sentence naming it (docs/serve.md §13.4).

/// The longest query string accepted (docs/serve.md §13.4).
pub(crate) const MAX_QUERY: usize = 2_048;

use std::fmt::Write as _;

use crate::schedules::{ScheduleKind, ScheduleStatus};

/// The list's filter and order, from the query string (docs/serve.md §13.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Filter {
    pub(crate) owner: Option<String>,
    pub(crate) verb: Option<String>,
    /// Any kind the engine has (docs/schedules.md §9.1).
    pub(crate) kind: Option<ScheduleKind>,
    /// A schedule's state, in the words of docs/schedules.md §9.13.
    pub(crate) state: Option<ScheduleStatus>,
    pub(crate) search: Option<String>,
    /// A store alone's namespace (docs/schedules.md §15.5).
    pub(crate) namespace: Option<String>,
    pub(crate) sort: Sort,
    /// Which page of [`LIST_CAP`](super::pages::LIST_CAP) rows, from 1.
    pub(crate) page: usize,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            owner: None,
            verb: None,
            kind: None,
            state: None,
            search: None,
            namespace: None,
            sort: Sort::Id,
            page: 1,
        }
    }
}

impl Filter {
    /// The query string of this filter at `page`: what the list's paging links ask for.
    pub(crate) fn query(&self, page: usize) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        for (key, value) in [
            ("q", &self.search),
            ("owner", &self.owner),
            ("verb", &self.verb),
            ("namespace", &self.namespace),
        ] {
            if let Some(v) = value {
                pairs.push((key, percent_encode(v)));
            }
        }
        if let Some(kind) = self.kind {
            pairs.push(("kind", kind.as_str().to_owned()));
        }
        if let Some(state) = self.state {
            pairs.push(("state", state.as_str().to_owned()));
        }
        if self.sort != Sort::Id {
            pairs.push(("sort", self.sort.name().to_owned()));
        }
        if page > 1 {
            pairs.push(("page", page.to_string()));
        }
        let joined: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        if joined.is_empty() {
            String::new()
        } else {
            format!("?{}", joined.join("&"))
        }
    }
}

/// The list's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Sort {
    #[default]
    Id,
    Owner,
    Verb,
    Kind,
    State,
    Next,
    Key,
}

impl Sort {
    pub(crate) const NAMES: [&'static str; 7] =
        ["id", "owner", "verb", "kind", "state", "next", "key"];

    pub(crate) fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// A schedule id from a path: a positive whole number.
pub(crate) fn parse_id(id: &str) -> Option<u64> {
    id.parse::<u64>().ok().filter(|n| *n > 0)
}

/// The sentence for an id that is not one.
pub(crate) fn bad_id(id: &str) -> String {
    format!("{id:?} is not a schedule id: a positive whole number (docs/serve.md §13.4)\n")
}

/// `key=value&…` pairs, %-decoded.
pub(crate) fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match (percent_decode(key), percent_decode(value)) {
                (Some(k), Some(v)) => Ok((k, v)),
                _ => Err(format!(
                    "{key:?}: not UTF-8 or a bad %-escape (docs/serve.md §13.4)\n"
                )),
            }
        })
        .collect()
}

/// Refuses any query string on a page that takes none (docs/serve.md §13.4).
pub(crate) fn no_query(query: Option<&str>) -> Result<(), String> {
    match query {
        None | Some("") => Ok(()),
        Some(q) => Err(format!(
            "this page takes no query string, not {:?} (docs/serve.md §13.4)\n",
            q.chars().take(80).collect::<String>()
        )),
    }
}

/// Parses `owner`, `verb`, `kind`, `state`, `namespace`, `q`, `sort` and `page`; anything else,
/// or a bad value, is refused with a sentence naming it.
pub(crate) fn parse_filter(query: &str) -> Result<Filter, String> {
    if query.len() > MAX_QUERY {
        return Err(format!(
            "the query string is {} bytes; at most {MAX_QUERY} are accepted (docs/serve.md §13.4)\n",
            query.len()
        ));
    }
    let mut filter = Filter::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value)
            .ok_or_else(|| format!("the value of {key:?} is not UTF-8 or has a bad %-escape\n"))?;
        let wanted = (!value.is_empty()).then(|| value.clone());
        match key {
            "owner" => filter.owner = wanted,
            "verb" => filter.verb = wanted,
            "q" => filter.search = wanted,
            "namespace" => filter.namespace = wanted,
            "page" => {
                filter.page = match value.parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ if value.is_empty() => 1,
                    _ => return Err(bad_value("page", &value, "a whole number from 1")),
                }
            }
            "kind" => {
                filter.kind = match value.as_str() {
                    "" => None,
                    word => Some(ScheduleKind::parse(word).ok_or_else(|| {
                        bad_value(
                            "kind",
                            &value,
                            &one_of(ScheduleKind::ALL.map(ScheduleKind::as_str)),
                        )
                    })?),
                }
            }
            "state" => {
                filter.state = match value.as_str() {
                    "" => None,
                    word => Some(ScheduleStatus::parse(word).ok_or_else(|| {
                        bad_value(
                            "state",
                            &value,
                            &one_of(ScheduleStatus::ALL.map(ScheduleStatus::as_str)),
                        )
                    })?),
                }
            }
            "sort" => {
                filter.sort = match value.as_str() {
                    "" | "id" => Sort::Id,
                    "owner" => Sort::Owner,
                    "verb" => Sort::Verb,
                    "kind" => Sort::Kind,
                    "state" => Sort::State,
                    "next" => Sort::Next,
                    "key" => Sort::Key,
                    _ => {
                        return Err(bad_value(
                            "sort",
                            &value,
                            "id, owner, verb, kind, state, next or key",
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "unknown parameter {:?}: the list takes owner, verb, kind, state, namespace, q, sort \
                     and page \
                     (docs/serve.md §13.2)\n",
                    percent_decode(key).unwrap_or_else(|| key.to_owned())
                ));
            }
        }
    }
    Ok(filter)
}

/// `a, b or c`.
fn one_of<const N: usize>(words: [&str; N]) -> String {
    match words.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn bad_value(key: &str, value: &str, allowed: &str) -> String {
    format!("{key}={value:?} is not one of {allowed} (docs/serve.md §13.2)\n")
}

/// `text` for a query string: unreserved characters as they are, a space as `+`, every other
/// byte as `%XX` (so [`percent_decode`] gives it back).
pub(crate) fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; `None` for a bad
/// escape or bytes that are not UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(rest.get(..2)?).ok()?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                rest = &rest[2..];
            }
            _ => bytes.push(b),
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_reads_every_parameter_and_names_a_bad_one() {
        // docs/serve.md §13.2, §13.4
        let filter =
            parse_filter("owner=alice&verb=tell&kind=every&state=paused&q=tea+time&sort=next")
                .unwrap();
        assert_eq!(
            filter,
            Filter {
                owner: Some("alice".into()),
                verb: Some("tell".into()),
                kind: Some(ScheduleKind::Every),
                state: Some(ScheduleStatus::Paused),
                search: Some("tea time".into()),
                namespace: None,
                sort: Sort::Next,
                page: 1,
            }
        );
        // Every kind the engine has, and every state of docs/schedules.md §9.13.
        for kind in ScheduleKind::ALL {
            let query = format!("kind={}", kind.as_str());
            assert_eq!(parse_filter(&query).unwrap().kind, Some(kind), "{query}");
        }
        for state in ScheduleStatus::ALL {
            let query = format!("state={}", state.as_str());
            assert_eq!(parse_filter(&query).unwrap().state, Some(state), "{query}");
        }
        assert!(
            parse_filter("kind=daily")
                .unwrap_err()
                .contains("not one of at, every or cron")
        );
        assert_eq!(
            parse_filter("q=%3Cscript%3E").unwrap().search.as_deref(),
            Some("<script>")
        );
        assert_eq!(parse_filter("").unwrap(), Filter::default());
        for (query, named) in [
            ("sort=size", "\"size\""),
            ("kind=daily", "\"daily\""),
            ("state=dead", "\"dead\""),
            ("colour=red", "\"colour\""),
            ("q=%zz", "\"q\""),
            ("q=%ff", "\"q\""),
            ("page=0", "\"0\""),
            ("page=two", "\"two\""),
        ] {
            let why = parse_filter(query).unwrap_err();
            assert!(why.contains(named), "{query}: {why}");
        }
        let long = format!("q={}", "a".repeat(MAX_QUERY));
        assert!(parse_filter(&long).unwrap_err().contains("bytes"));
    }

    #[test]
    fn sort_names_follow_the_enum() {
        for (i, sort) in [
            Sort::Id,
            Sort::Owner,
            Sort::Verb,
            Sort::Kind,
            Sort::State,
            Sort::Next,
            Sort::Key,
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(sort.name(), Sort::NAMES[i]);
        }
    }

    #[test]
    fn a_filter_goes_back_into_the_query_it_came_from() {
        // docs/serve.md §13.2: the paging links keep the filter.
        let query =
            "q=%3Ca+b%3E&owner=%C3%A9&verb=tell&namespace=app&kind=cron&state=paused&sort=next";
        let filter = parse_filter(query).unwrap();
        assert_eq!(parse_filter(&filter.query(3)[1..]).unwrap().page, 3);
        let mut again = parse_filter(&filter.query(3)[1..]).unwrap();
        again.page = 1;
        assert_eq!(again, filter);
        assert_eq!(Filter::default().query(1), "");
        assert_eq!(Filter::default().query(2), "?page=2");
    }

    #[test]
    fn ids_are_positive_whole_numbers() {
        assert_eq!(parse_id("7"), Some(7));
        for bad in ["0", "-1", "x", "1.5", ""] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
        assert!(no_query(Some("a=1")).unwrap_err().contains("a=1"));
        assert!(no_query(None).is_ok());
    }
}
