//! The server's shared state: topics, their retained values and the connected clients
//! (docs/nt4.md §3). One `Mutex` guards it; the frame's `set` and each client's sweep take it
//! briefly, and nothing awaits while holding it. What a client sends is applied in
//! `hub/client_messages.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value as Json, json};
use tokio::sync::Notify;

use crate::limits::Limits;
use crate::meta;
use crate::msgpack;
use crate::value::Value;

mod client_messages;

/// One topic: its name, type, properties and retained value.
struct Topic {
    name: String,
    type_str: String,
    properties: Map<String, Json>,
    value: Option<Value>,
    timestamp: u64,
    /// Bumped on every change, so a sweep sends only what changed since its last one.
    seq: u64,
    /// Publishers on clients; the server's own publication counts as one more (`by_server`).
    publishers: u32,
    by_server: bool,
}

/// One subscription (docs/nt4.md §3.3).
struct Subscription {
    topics: Vec<String>,
    prefix: bool,
    topics_only: bool,
    all: bool,
    periodic: Duration,
}

impl Subscription {
    fn matches(&self, name: &str) -> bool {
        self.topics.iter().any(|t| {
            if !meta::visible(name, t) {
                false
            } else if self.prefix {
                name.starts_with(t.as_str())
            } else {
                name == t
            }
        })
    }
}

/// Why a client is being closed: the WebSocket close code and a reason naming the rule.
#[derive(Clone, Debug)]
pub(crate) struct CloseReason {
    pub(crate) code: u16,
    pub(crate) reason: String,
}

impl CloseReason {
    fn new(code: u16, reason: impl Into<String>) -> Self {
        let mut reason = reason.into();
        // A close frame's reason is at most 123 bytes.
        while reason.len() > 120 {
            reason.pop();
        }
        Self { code, reason }
    }
}

/// How a client ends: it left (nothing to send), or the server closes it with a reason.
#[derive(Clone, Debug)]
pub(crate) enum Closing {
    Left,
    Reason(CloseReason),
}

/// A connected client.
struct Client {
    name: String,
    /// The peer's address, as `$clients` shows it.
    conn: String,
    subs: HashMap<i64, Subscription>,
    pubs: HashMap<i64, u32>,
    /// Topics announced to this client.
    announced: HashSet<u32>,
    /// The `seq` of each topic's value last sent to this client.
    sent: HashMap<u32, u64>,
    /// Control messages waiting for the next sweep.
    text_out: Vec<Json>,
    /// Binary messages waiting for the next sweep: clock replies and `all` values.
    bin_out: Vec<u8>,
    has_all: bool,
    period: Duration,
    notify: Arc<Notify>,
    closing: Option<Closing>,
    /// Its publishers or subscriptions changed since `$clientpub$`/`$clientsub$` were built:
    /// they are rebuilt at its next sweep, so a client's burst of requests costs one rebuild
    /// per sweep period, not one per request (docs/nt4.md §2.5).
    meta_stale: bool,
}

impl Client {
    fn pending_bytes(&self) -> usize {
        self.bin_out.len() + self.text_out.len() * 64
    }
}

/// What one sweep of a client hands its writer.
pub(crate) struct Sweep {
    pub(crate) text: Option<String>,
    pub(crate) binary: Option<Vec<u8>>,
    /// `Some` when the client is to be closed (with a reason, or silently when it left).
    pub(crate) close: Option<Closing>,
    pub(crate) period: Duration,
}

/// The whole state.
pub(crate) struct Hub {
    pub(crate) limits: Limits,
    topics: Vec<Option<Topic>>,
    by_name: HashMap<String, u32>,
    free_ids: Vec<u32>,
    clients: HashMap<u64, Client>,
    next_client: u64,
    next_seq: u64,
    /// Clients with an `all` subscription: the only ones `set` looks at.
    all_clients: usize,
    started: std::time::Instant,
}

/// Accepted subprotocols, most preferred first (docs/nt4.md §1.2).
pub(crate) const PROTOCOL_41: &str = "v4.1.networktables.first.wpi.edu";
pub(crate) const PROTOCOL_40: &str = "networktables.first.wpi.edu";
pub(crate) const PROTOCOL_RTT: &str = "rtt.networktables.first.wpi.edu";

const CLOSE_POLICY: u16 = 1008;
const CLOSE_BAD_DATA: u16 = 1007;
const CLOSE_TOO_BIG: u16 = 1009;

impl Hub {
    pub(crate) fn new(limits: Limits) -> Self {
        let mut hub = Self {
            limits,
            topics: Vec::new(),
            by_name: HashMap::new(),
            free_ids: Vec::new(),
            clients: HashMap::new(),
            next_client: 1,
            next_seq: 1,
            all_clients: 0,
            started: std::time::Instant::now(),
        };
        hub.publish_clients();
        hub.publish_server_pubs();
        // The robot subscribes to nothing: it reads retained values (docs/nt4.md §5.5).
        hub.set(
            meta::SERVER_SUB,
            meta::subscriptions(std::iter::empty()),
            None,
        );
        hub
    }

    /// `$clients` from the connected clients (docs/nt4.md §2.5).
    fn publish_clients(&mut self) {
        let mut list: Vec<(&str, &str)> = self
            .clients
            .values()
            .map(|c| (c.name.as_str(), c.conn.as_str()))
            .collect();
        list.sort_unstable();
        let value = meta::clients(list.into_iter());
        self.set(meta::CLIENTS, value, None);
    }

    /// `$serverpub` from the topics the server publishes, their topic ids as publisher uids.
    fn publish_server_pubs(&mut self) {
        let list: Vec<(i64, &str)> = self
            .topics
            .iter()
            .enumerate()
            .filter_map(|(id, t)| t.as_ref().map(|t| (id, t)))
            .filter(|(_, t)| t.by_server && !t.name.starts_with('$'))
            .map(|(id, t)| (i64::try_from(id).unwrap_or(i64::MAX), t.name.as_str()))
            .collect();
        let value = meta::publishers(list.into_iter());
        self.set(meta::SERVER_PUB, value, None);
    }

    /// `$clientpub$<client>` from a client's publishers.
    fn publish_client_pubs(&mut self, cid: u64) {
        let Some(c) = self.clients.get(&cid) else {
            return;
        };
        let mut list: Vec<(i64, &str)> = c
            .pubs
            .iter()
            .filter_map(|(&uid, &id)| Some((uid, self.topics[id as usize].as_ref()?.name.as_str())))
            .collect();
        list.sort_unstable();
        let (name, value) = (
            meta::client_pub(&c.name),
            meta::publishers(list.into_iter()),
        );
        self.set(&name, value, None);
    }

    /// `$clientsub$<client>` from a client's subscriptions.
    fn publish_client_subs(&mut self, cid: u64) {
        let Some(c) = self.clients.get(&cid) else {
            return;
        };
        let mut uids: Vec<&i64> = c.subs.keys().collect();
        uids.sort_unstable();
        let value = meta::subscriptions(uids.into_iter().map(|uid| {
            let s = &c.subs[uid];
            meta::SubView {
                uid: *uid,
                topics: &s.topics,
                prefix: s.prefix,
                topics_only: s.topics_only,
                all: s.all,
                periodic_s: s.periodic.as_secs_f64(),
            }
        }));
        let name = meta::client_sub(&c.name);
        self.set(&name, value, None);
    }

    /// The server's time base: microseconds since it started (docs/nt4.md §3.5).
    pub(crate) fn now_us(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    pub(crate) fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// Registers a client; a name in use gets `@1`, `@2`, … appended (docs/nt4.md §1.3).
    pub(crate) fn add_client(
        &mut self,
        requested: &str,
        conn: String,
        notify: Arc<Notify>,
    ) -> (u64, String) {
        let taken: HashSet<&str> = self.clients.values().map(|c| c.name.as_str()).collect();
        let mut name = requested.to_owned();
        let mut n = 1;
        while taken.contains(name.as_str()) {
            name = format!("{requested}@{n}");
            n += 1;
        }
        let id = self.next_client;
        self.next_client += 1;
        self.clients.insert(
            id,
            Client {
                name: name.clone(),
                conn,
                subs: HashMap::new(),
                pubs: HashMap::new(),
                announced: HashSet::new(),
                sent: HashMap::new(),
                text_out: Vec::new(),
                bin_out: Vec::new(),
                has_all: false,
                period: self.limits.default_period,
                notify,
                closing: None,
                meta_stale: false,
            },
        );
        self.publish_clients();
        self.publish_client_pubs(id);
        self.publish_client_subs(id);
        (id, name)
    }

    /// Removes a client; its publications end as if it had unpublished them.
    pub(crate) fn remove_client(&mut self, id: u64) {
        if let Some(client) = self.clients.remove(&id) {
            if client.has_all {
                self.all_clients -= 1;
            }
            for topic in client.pubs.into_values() {
                self.release(topic);
            }
            for meta_topic in [
                meta::client_pub(&client.name),
                meta::client_sub(&client.name),
            ] {
                if let Some(&id) = self.by_name.get(&meta_topic) {
                    self.delete(id);
                }
            }
            self.publish_clients();
        }
    }

    /// Marks a client to be closed with `reason` at its next sweep, and wakes its writer.
    pub(crate) fn close_client(&mut self, id: u64, reason: Closing) {
        if let Some(c) = self.clients.get_mut(&id) {
            if c.closing.is_none() {
                c.closing = Some(reason);
            }
            c.notify.notify_one();
        }
    }

    fn close_for(&mut self, id: u64, code: u16, reason: impl Into<String>) {
        self.close_client(id, Closing::Reason(CloseReason::new(code, reason)));
    }

    /// Publishes a value from the server side (the robot). Returns whether it changed: an equal
    /// value is not sent again (docs/nt4.md §2.3).
    pub(crate) fn set(&mut self, name: &str, value: Value, properties: Option<&Json>) -> bool {
        let now = self.now_us();
        let id = if let Some(&id) = self.by_name.get(name) {
            id
        } else {
            let Some(id) = self.create(name, value.type_str(), properties) else {
                return false;
            };
            id
        };
        let topic = self.topics[id as usize].as_mut().expect("indexed topic");
        if !topic.by_server {
            topic.by_server = true;
            if !name.starts_with('$') {
                self.publish_server_pubs();
            }
        }
        let topic = self.topics[id as usize].as_ref().expect("indexed topic");
        if topic.type_str != value.type_str() || topic.value.as_ref() == Some(&value) {
            return false;
        }
        self.store(id, |v| *v = Some(value), now);
        true
    }

    /// The id of the server's topic `name`, created (with `properties`) on first use: the frame
    /// names its topics once and then sets them by id, without hashing names (docs/nt4.md
    /// §8.3). `None` when the topic exists with another type or the table is full. A topic the
    /// server publishes is never deleted, so its id stays valid (docs/nt4.md §2.4).
    pub(crate) fn intern(
        &mut self,
        name: &str,
        type_str: &str,
        properties: Option<&Json>,
    ) -> Option<u32> {
        let id = match self.by_name.get(name) {
            Some(&id) => id,
            None => self.create(name, type_str, properties)?,
        };
        let topic = self.topics[id as usize].as_mut()?;
        if !topic.by_server {
            topic.by_server = true;
            if !name.starts_with('$') {
                self.publish_server_pubs();
            }
        }
        let topic = self.topics[id as usize].as_ref()?;
        (topic.type_str == type_str).then_some(id)
    }

    /// Sets an interned topic to a copy of `value`, reusing the retained value's buffers; `now`
    /// is the server's time, read once per frame. Returns whether the value changed.
    pub(crate) fn set_interned(&mut self, id: u32, value: &Value, now: u64) -> bool {
        let Some(topic) = self.topics[id as usize].as_ref() else {
            return false;
        };
        if topic.value.as_ref() == Some(value) {
            return false;
        }
        self.store(
            id,
            |retained| match retained {
                Some(r) => r.assign_from(value),
                None => *retained = Some(value.clone()),
            },
            now,
        );
        true
    }

    /// The retained value of a topic.
    pub(crate) fn get(&self, name: &str) -> Option<Value> {
        let id = *self.by_name.get(name)?;
        self.topics[id as usize].as_ref()?.value.clone()
    }

    fn store(&mut self, id: u32, put: impl FnOnce(&mut Option<Value>), timestamp: u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let topic = self.topics[id as usize].as_mut().expect("indexed topic");
        put(&mut topic.value);
        topic.timestamp = timestamp;
        topic.seq = seq;
        if self.all_clients == 0 {
            return;
        }
        // Clients that asked for every change get it queued now; the rest see the latest value
        // at their next sweep.
        let topic = self.topics[id as usize].as_ref().expect("indexed topic");
        let limit = self.limits.max_pending_bytes;
        let mut overflowed = Vec::new();
        for (&cid, client) in &mut self.clients {
            // A client being closed queues nothing more (docs/nt4.md §4.2).
            if !client.has_all || client.closing.is_some() || !client.announced.contains(&id) {
                continue;
            }
            let wants_all = client
                .subs
                .values()
                .any(|s| s.all && !s.topics_only && s.matches(&topic.name));
            if !wants_all {
                continue;
            }
            encode_value(&mut client.bin_out, id, topic);
            client.sent.insert(id, seq);
            if client.pending_bytes() > limit {
                overflowed.push(cid);
            }
        }
        for cid in overflowed {
            self.close_for(
                cid,
                CLOSE_POLICY,
                format!("too slow: more than {limit} bytes waiting (docs/nt4.md §4.2)"),
            );
        }
    }

    /// Creates a topic and announces it to the clients whose subscriptions match.
    fn create(&mut self, name: &str, type_str: &str, properties: Option<&Json>) -> Option<u32> {
        if self.by_name.len() >= self.limits.max_topics {
            return None;
        }
        let id = self.free_ids.pop().unwrap_or_else(|| {
            self.topics.push(None);
            (self.topics.len() - 1) as u32
        });
        let properties = match properties {
            Some(Json::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        self.topics[id as usize] = Some(Topic {
            name: name.to_owned(),
            type_str: type_str.to_owned(),
            properties,
            value: None,
            timestamp: 0,
            seq: 0,
            publishers: 0,
            by_server: false,
        });
        self.by_name.insert(name.to_owned(), id);
        let topic = self.topics[id as usize].as_ref().expect("just made");
        for client in self.clients.values_mut() {
            if client.subs.values().any(|s| s.matches(name)) {
                client.announced.insert(id);
                client.text_out.push(announce(id, topic, None));
                client.notify.notify_one();
            }
        }
        Some(id)
    }

    /// One publisher fewer; a topic with none left (and not the server's) is deleted.
    fn release(&mut self, id: u32) {
        let Some(topic) = self.topics[id as usize].as_mut() else {
            return;
        };
        topic.publishers = topic.publishers.saturating_sub(1);
        let persistent = topic.properties.get("persistent") == Some(&Json::Bool(true))
            || topic.properties.get("retained") == Some(&Json::Bool(true));
        if topic.publishers > 0 || topic.by_server || persistent {
            return;
        }
        self.delete(id);
    }

    /// Deletes a topic and its retained value, and unannounces it to the clients that knew it.
    fn delete(&mut self, id: u32) {
        let Some(topic) = self.topics[id as usize].take() else {
            return;
        };
        self.by_name.remove(&topic.name);
        self.free_ids.push(id);
        for client in self.clients.values_mut() {
            if client.announced.remove(&id) {
                client.sent.remove(&id);
                client.text_out.push(
                    json!({"method": "unannounce", "params": {"name": topic.name, "id": id}}),
                );
                client.notify.notify_one();
            }
        }
    }

    /// Collects what a client's writer should send now.
    pub(crate) fn sweep(&mut self, cid: u64) -> Sweep {
        if self.clients.get(&cid).is_some_and(|c| c.meta_stale) {
            self.publish_client_pubs(cid);
            self.publish_client_subs(cid);
            if let Some(c) = self.clients.get_mut(&cid) {
                c.meta_stale = false;
            }
        }
        let Some(client) = self.clients.get_mut(&cid) else {
            return Sweep {
                text: None,
                binary: None,
                close: Some(Closing::Left),
                period: Duration::ZERO,
            };
        };
        if let Some(reason) = client.closing.clone() {
            return Sweep {
                text: None,
                binary: None,
                close: Some(reason),
                period: Duration::ZERO,
            };
        }
        let text = (!client.text_out.is_empty())
            .then(|| Json::Array(std::mem::take(&mut client.text_out)).to_string());
        let mut bin = std::mem::take(&mut client.bin_out);
        for &id in &client.announced {
            let Some(topic) = self.topics[id as usize].as_ref() else {
                continue;
            };
            if topic.value.is_none() || client.sent.get(&id) == Some(&topic.seq) {
                continue;
            }
            let wanted = client
                .subs
                .values()
                .any(|s| !s.topics_only && s.matches(&topic.name));
            if wanted {
                encode_value(&mut bin, id, topic);
                client.sent.insert(id, topic.seq);
            }
        }
        Sweep {
            text,
            binary: (!bin.is_empty()).then_some(bin),
            close: None,
            period: client.period,
        }
    }

    /// Checks a client's message rate; returns false (and closes it) past the limit.
    pub(crate) fn too_many_messages(&mut self, cid: u64, count: u32) -> bool {
        let max = self.limits.max_messages_per_second;
        if count > max {
            self.close_for(
                cid,
                CLOSE_POLICY,
                format!("more than {max} messages a second (docs/nt4.md §4.1)"),
            );
            return true;
        }
        false
    }

    /// Closes a client that did not answer a ping in time (docs/nt4.md §4.4).
    pub(crate) fn close_unanswered(&mut self, cid: u64) {
        let timeout = self.limits.ping_timeout;
        self.close_for(
            cid,
            CLOSE_POLICY,
            format!("no pong within {timeout:?} of a ping (docs/nt4.md §4.4)"),
        );
    }

    pub(crate) fn close_too_big(&mut self, cid: u64) {
        let max = self.limits.max_frame_bytes;
        self.close_for(
            cid,
            CLOSE_TOO_BIG,
            format!("a frame larger than {max} bytes (docs/nt4.md §4.1)"),
        );
    }
}

fn announce(id: u32, topic: &Topic, pubuid: Option<i64>) -> Json {
    let mut params = json!({
        "name": topic.name,
        "id": id,
        "type": topic.type_str,
        "properties": topic.properties,
    });
    if let Some(p) = pubuid {
        params["pubuid"] = Json::from(p);
    }
    json!({"method": "announce", "params": params})
}

fn encode_value(out: &mut Vec<u8>, id: u32, topic: &Topic) {
    let value = topic.value.as_ref().expect("a value to send");
    msgpack::write_array_len(out, 4);
    msgpack::write_uint(out, u64::from(id));
    msgpack::write_uint(out, topic.timestamp);
    msgpack::write_uint(out, u64::from(Value::type_id_of(&topic.type_str)));
    value.write_msgpack(out);
}
