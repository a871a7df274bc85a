//! The server's meta topics (docs/nt4.md §2.5): who is connected, and what each client and the
//! server publish and subscribe to, as `msgpack` values in the shapes the NT4 spec gives.

use crate::msgpack;
use crate::value::Value;

/// Connected clients: an array of `{id, conn}` maps.
pub(crate) const CLIENTS: &str = "$clients";
/// The server's publishers: an array of `{uid, topic}` maps.
pub(crate) const SERVER_PUB: &str = "$serverpub";
/// The server's subscriptions: an array of `{uid, topics, options}` maps (always empty: the
/// robot reads topics directly, docs/nt4.md §5.5).
pub(crate) const SERVER_SUB: &str = "$serversub";
/// The type string of every meta topic.
pub(crate) const TYPE: &str = "msgpack";

/// `$clientpub$<client>`.
pub(crate) fn client_pub(client: &str) -> String {
    format!("$clientpub${client}")
}

/// `$clientsub$<client>`.
pub(crate) fn client_sub(client: &str) -> String {
    format!("$clientsub${client}")
}

/// Whether a subscription to `pattern` may see topic `name`: a topic whose name starts with `$`
/// is hidden from subscriptions that do not themselves start with `$`, so a dashboard
/// subscribed to everything (`""`) is not sent the server's bookkeeping.
pub(crate) fn visible(name: &str, pattern: &str) -> bool {
    !name.starts_with('$') || pattern.starts_with('$')
}

fn value(bytes: Vec<u8>) -> Value {
    Value::Raw(bytes, TYPE.to_owned())
}

/// `$clients`: `(name, connection)` pairs.
pub(crate) fn clients<'a>(list: impl ExactSizeIterator<Item = (&'a str, &'a str)>) -> Value {
    let mut out = Vec::new();
    msgpack::write_array_len(&mut out, list.len());
    for (id, conn) in list {
        msgpack::write_map_len(&mut out, 2);
        msgpack::write_str(&mut out, "id");
        msgpack::write_str(&mut out, id);
        msgpack::write_str(&mut out, "conn");
        msgpack::write_str(&mut out, conn);
    }
    value(out)
}

/// `$clientpub$<client>` and `$serverpub`: `(uid, topic)` pairs.
pub(crate) fn publishers<'a>(list: impl ExactSizeIterator<Item = (i64, &'a str)>) -> Value {
    let mut out = Vec::new();
    msgpack::write_array_len(&mut out, list.len());
    for (uid, topic) in list {
        msgpack::write_map_len(&mut out, 2);
        msgpack::write_str(&mut out, "uid");
        msgpack::write_int(&mut out, uid);
        msgpack::write_str(&mut out, "topic");
        msgpack::write_str(&mut out, topic);
    }
    value(out)
}

/// One subscription as `$clientsub$<client>` shows it.
pub(crate) struct SubView<'a> {
    pub(crate) uid: i64,
    pub(crate) topics: &'a [String],
    pub(crate) prefix: bool,
    pub(crate) topics_only: bool,
    pub(crate) all: bool,
    pub(crate) periodic_s: f64,
}

/// `$clientsub$<client>` and `$serversub`: `{uid, topics, options}` maps.
pub(crate) fn subscriptions<'a>(list: impl ExactSizeIterator<Item = SubView<'a>>) -> Value {
    let mut out = Vec::new();
    msgpack::write_array_len(&mut out, list.len());
    for s in list {
        msgpack::write_map_len(&mut out, 3);
        msgpack::write_str(&mut out, "uid");
        msgpack::write_int(&mut out, s.uid);
        msgpack::write_str(&mut out, "topics");
        msgpack::write_array_len(&mut out, s.topics.len());
        for t in s.topics {
            msgpack::write_str(&mut out, t);
        }
        msgpack::write_str(&mut out, "options");
        msgpack::write_map_len(&mut out, 4);
        msgpack::write_str(&mut out, "periodic");
        msgpack::write_f64(&mut out, s.periodic_s);
        for (key, on) in [
            ("prefix", s.prefix),
            ("topicsonly", s.topics_only),
            ("all", s.all),
        ] {
            msgpack::write_str(&mut out, key);
            msgpack::write_bool(&mut out, on);
        }
    }
    value(out)
}
