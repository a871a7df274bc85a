//! Principals' names on a store's dashboard (docs/serve.md §13.13): a store keeps owners as ids;
//! a host that keeps names beside it (serve's players) lends them through [`PrincipalNames`], read
//! once a request, so the list, the detail and the filters show and accept names as a running
//! server's dashboard does. Without one, or when the names cannot be read, an owner is `#N`.

use std::collections::HashMap;

use crate::schedules::ObjId;

/// Where a store's dashboard ([`store_router`](super::store_router)) finds principals' names:
/// set as [`DashboardOptions::names`](super::DashboardOptions::names).
///
/// ```
/// use tickstep::dashboard::PrincipalNames;
/// use tickstep::schedules::ObjId;
///
/// #[derive(Debug)]
/// struct Fixed;
/// impl PrincipalNames for Fixed {
///     fn names(&self) -> Result<Vec<(ObjId, String)>, String> {
///         Ok(vec![(ObjId(101), "alice".into())])
///     }
/// }
/// assert_eq!(Fixed.names().unwrap()[0].1, "alice");
/// ```
pub trait PrincipalNames: Send + Sync + std::fmt::Debug {
    /// Every named principal, read now (on a blocking thread, once a page); why not, when they
    /// cannot be read — the page then shows `#N`.
    ///
    /// # Errors
    ///
    /// A sentence saying why the names cannot be read.
    fn names(&self) -> Result<Vec<(ObjId, String)>, String>;
}

/// The names one request reads.
#[derive(Default)]
pub(crate) struct Names {
    by_id: HashMap<ObjId, String>,
}

impl Names {
    /// The names `source` gives now; none without one or when they cannot be read.
    pub(crate) fn read(source: Option<&dyn PrincipalNames>) -> Names {
        let by_id = source
            .and_then(|s| s.names().ok())
            .unwrap_or_default()
            .into_iter()
            .collect();
        Names { by_id }
    }

    /// `who`'s name, or `#N`.
    pub(crate) fn name_of(&self, who: ObjId) -> String {
        self.by_id
            .get(&who)
            .cloned()
            .unwrap_or_else(|| who.to_string())
    }

    /// The principal a list's `owner=` names: by name, or as `#N` written as an id is shown
    /// (`#07` is nobody).
    pub(crate) fn named(&self, name: &str) -> Option<ObjId> {
        if let Some((id, _)) = self.by_id.iter().find(|(_, n)| *n == name) {
            return Some(*id);
        }
        let id = ObjId(name.strip_prefix('#')?.parse().ok()?);
        (id.to_string() == name).then_some(id)
    }

    /// The principals whose name holds `text`.
    pub(crate) fn containing(&self, text: &str) -> Vec<ObjId> {
        let mut ids: Vec<ObjId> = self
            .by_id
            .iter()
            .filter(|(_, n)| n.contains(text))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable_by_key(|id| id.0);
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Two;
    impl PrincipalNames for Two {
        fn names(&self) -> Result<Vec<(ObjId, String)>, String> {
            Ok(vec![
                (ObjId(101), "alice".into()),
                (ObjId(102), "malik".into()),
            ])
        }
    }

    #[derive(Debug)]
    struct Broken;
    impl PrincipalNames for Broken {
        fn names(&self) -> Result<Vec<(ObjId, String)>, String> {
            Err("locked".into())
        }
    }

    #[test]
    fn names_show_and_are_found_and_ids_stay_ids() {
        // docs/serve.md §13.13
        let names = Names::read(Some(&Two));
        assert_eq!(names.name_of(ObjId(101)), "alice");
        assert_eq!(names.name_of(ObjId(7)), "#7");
        assert_eq!(names.named("malik"), Some(ObjId(102)));
        assert_eq!(names.named("#7"), Some(ObjId(7)));
        assert_eq!(names.named("#07"), None);
        assert_eq!(names.named("bob"), None);
        assert_eq!(names.containing("li"), vec![ObjId(101), ObjId(102)]);
        let none = Names::read(Some(&Broken));
        assert_eq!(none.name_of(ObjId(101)), "#101", "unreadable names: ids");
        assert_eq!(Names::read(None).named("alice"), None);
    }
}
