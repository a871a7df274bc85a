//! Scratch databases for the `PostgreSQL` rows: one per measurement, created on the server the
//! bench was pointed at and dropped afterwards.

use postgres::{Client, NoTls};

/// A scratch database on the server, dropped with the value.
pub(super) struct Scratch {
    admin_url: String,
    name: String,
    pub(super) url: String,
}

impl Scratch {
    pub(super) fn new(admin_url: &str, label: &str) -> Result<Self, postgres::Error> {
        let name = format!("tickstep_bench_{}_{label}", std::process::id());
        let mut admin = Client::connect(admin_url, NoTls)?;
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))?;
        admin.batch_execute(&format!("CREATE DATABASE {name}"))?;
        Ok(Scratch {
            admin_url: admin_url.to_string(),
            url: with_database(admin_url, &name),
            name,
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Ok(mut admin) = Client::connect(&self.admin_url, NoTls) {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// `url` with its database name replaced by `name` (query parameters kept).
fn with_database(url: &str, name: &str) -> String {
    let (main, query) = url
        .split_once('?')
        .map_or((url, None), |(m, q)| (m, Some(q)));
    let after_scheme = main.find("://").map_or(0, |i| i + 3);
    let host_end = main[after_scheme..]
        .find('/')
        .map_or(main.len(), |i| after_scheme + i);
    match query {
        Some(q) => format!("{}/{name}?{q}", &main[..host_end]),
        None => format!("{}/{name}", &main[..host_end]),
    }
}
