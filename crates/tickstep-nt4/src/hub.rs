//! The server's shared state: topics, their retained values and the connected clients
//! (docs/nt4.md §3). One `Mutex` guards it; the frame's `set` and each client's sweep take it
//! briefly, and nothing awaits while holding it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value as Json, json};
use tokio::sync::Notify;

use crate::limits::Limits;
use crate::meta;
use crate::msgpack::{self, Msg, Reader};
use crate::value::Value;

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

    /// Handles one text frame from a client (docs/nt4.md §3.2). Malformed JSON closes the
    /// client; a well-formed message with an unknown method is ignored, as the protocol says.
    pub(crate) fn handle_text(&mut self, cid: u64, text: &str) {
        let parsed: Json = match serde_json::from_str(text) {
            Ok(j) => j,
            Err(e) => {
                return self.close_for(
                    cid,
                    CLOSE_BAD_DATA,
                    format!("bad JSON: {e} (docs/nt4.md §3.2)"),
                );
            }
        };
        let Json::Array(messages) = parsed else {
            return self.close_for(
                cid,
                CLOSE_BAD_DATA,
                "a text frame must be a JSON array (docs/nt4.md §3.2)",
            );
        };
        for m in messages {
            let (Some(method), Some(Json::Object(params))) =
                (m.get("method").and_then(Json::as_str), m.get("params"))
            else {
                continue;
            };
            match method {
                "publish" => self.client_publish(cid, params),
                "unpublish" => self.client_unpublish(cid, params),
                "setproperties" => self.client_set_properties(cid, params),
                "subscribe" => self.client_subscribe(cid, params),
                "unsubscribe" => self.client_unsubscribe(cid, params),
                _ => {}
            }
            if self.clients.get(&cid).is_none_or(|c| c.closing.is_some()) {
                return;
            }
        }
    }

    fn client_publish(&mut self, cid: u64, params: &Map<String, Json>) {
        let (Some(name), Some(pubuid), Some(type_str)) = (
            params.get("name").and_then(Json::as_str),
            params.get("pubuid").and_then(Json::as_i64),
            params.get("type").and_then(Json::as_str),
        ) else {
            return;
        };
        let max = self.limits.max_publishers_per_client;
        let Some(client) = self.clients.get(&cid) else {
            return;
        };
        if client.pubs.len() >= max && !client.pubs.contains_key(&pubuid) {
            return self.close_for(
                cid,
                CLOSE_POLICY,
                format!("more than {max} publishers (docs/nt4.md §4.1)"),
            );
        }
        // The robot's telemetry cannot be spoofed: under /tickstep/ clients publish only inputs,
        // and schemas are the server's (docs/nt4.md §2.2).
        let robots = (name.starts_with("/tickstep/") && !name.starts_with(crate::topics::INPUT))
            || name.starts_with("/.schema/");
        if robots {
            return self.close_for(
                cid,
                CLOSE_POLICY,
                format!(
                    "topic {name:?} is the robot's; clients publish under {} (docs/nt4.md §2.2)",
                    crate::topics::INPUT
                ),
            );
        }
        if name.starts_with('$') {
            return self.close_for(
                cid,
                CLOSE_POLICY,
                format!(
                    "topic {name:?}: names starting with $ are the server's (docs/nt4.md §2.2)"
                ),
            );
        }
        let existing = self.by_name.get(name).copied();
        let Some(id) = existing.or_else(|| self.create(name, type_str, params.get("properties")))
        else {
            let max = self.limits.max_topics;
            return self.close_for(
                cid,
                CLOSE_POLICY,
                format!("more than {max} topics (docs/nt4.md §4.1)"),
            );
        };
        let topic = self.topics[id as usize].as_mut().expect("indexed topic");
        topic.publishers += 1;
        let client = self.clients.get_mut(&cid).expect("checked");
        if let Some(old) = client.pubs.insert(pubuid, id) {
            self.release(old);
        }
        let topic = self.topics[id as usize].as_ref().expect("indexed topic");
        let client = self.clients.get_mut(&cid).expect("checked");
        client.announced.insert(id);
        client.text_out.push(announce(id, topic, Some(pubuid)));
        client.notify.notify_one();
        client.meta_stale = true;
    }

    fn client_unpublish(&mut self, cid: u64, params: &Map<String, Json>) {
        let Some(pubuid) = params.get("pubuid").and_then(Json::as_i64) else {
            return;
        };
        let Some(id) = self
            .clients
            .get_mut(&cid)
            .and_then(|c| c.pubs.remove(&pubuid))
        else {
            return;
        };
        self.release(id);
        if let Some(c) = self.clients.get_mut(&cid) {
            c.meta_stale = true;
        }
    }

    fn client_set_properties(&mut self, cid: u64, params: &Map<String, Json>) {
        let (Some(name), Some(Json::Object(update))) = (
            params.get("name").and_then(Json::as_str),
            params.get("update"),
        ) else {
            return;
        };
        let Some(&id) = self.by_name.get(name) else {
            return;
        };
        let topic = self.topics[id as usize].as_mut().expect("indexed topic");
        for (k, v) in update {
            if v.is_null() {
                topic.properties.remove(k);
            } else {
                topic.properties.insert(k.clone(), v.clone());
            }
        }
        for (&other, client) in &mut self.clients {
            if client.announced.contains(&id) {
                let mut params = json!({"name": name, "update": update});
                if other == cid {
                    params["ack"] = Json::Bool(true);
                }
                client
                    .text_out
                    .push(json!({"method": "properties", "params": params}));
                client.notify.notify_one();
            }
        }
    }

    fn client_subscribe(&mut self, cid: u64, params: &Map<String, Json>) {
        let Some(subuid) = params.get("subuid").and_then(Json::as_i64) else {
            return;
        };
        // 4.0 drafts called the list `prefixes` (with prefix matching implied).
        let (list, implied_prefix) = match (params.get("topics"), params.get("prefixes")) {
            (Some(Json::Array(t)), _) => (t, false),
            (None, Some(Json::Array(p))) => (p, true),
            _ => return,
        };
        let max_topics = self.limits.max_subscription_topics;
        if list.len() > max_topics {
            return self.close_for(
                cid,
                CLOSE_POLICY,
                format!("a subscription lists more than {max_topics} topics (docs/nt4.md §4.1)"),
            );
        }
        let topics: Vec<String> = list
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        let options = params.get("options");
        let flag = |k: &str| options.and_then(|o| o.get(k)).and_then(Json::as_bool);
        let periodic = options
            .and_then(|o| o.get("periodic"))
            .and_then(Json::as_f64)
            .filter(|p| p.is_finite() && *p >= 0.0)
            .map_or(self.limits.default_period, Duration::from_secs_f64)
            .clamp(self.limits.min_period, self.limits.max_period);
        let sub = Subscription {
            topics,
            prefix: flag("prefix").unwrap_or(implied_prefix),
            topics_only: flag("topicsonly").unwrap_or(false),
            all: flag("all").unwrap_or(false),
            periodic,
        };
        let max = self.limits.max_subscriptions_per_client;
        let Some(client) = self.clients.get_mut(&cid) else {
            return;
        };
        if client.subs.len() >= max && !client.subs.contains_key(&subuid) {
            return self.close_for(
                cid,
                CLOSE_POLICY,
                format!("more than {max} subscriptions (docs/nt4.md §4.1)"),
            );
        }
        client.subs.insert(subuid, sub);
        self.refresh_client(cid);
        let client = self.clients.get_mut(&cid).expect("checked");
        for (id, topic) in self.topics.iter().enumerate() {
            let Some(topic) = topic else { continue };
            let id = id as u32;
            let sub = &client.subs[&subuid];
            if sub.matches(&topic.name) && client.announced.insert(id) {
                client.text_out.push(announce(id, topic, None));
            }
            // A new value subscription gets the current value at once (docs/nt4.md §3.3).
            if sub.matches(&topic.name) && !sub.topics_only {
                client.sent.remove(&id);
            }
        }
        client.notify.notify_one();
        client.meta_stale = true;
    }

    fn client_unsubscribe(&mut self, cid: u64, params: &Map<String, Json>) {
        let Some(subuid) = params.get("subuid").and_then(Json::as_i64) else {
            return;
        };
        if let Some(c) = self.clients.get_mut(&cid) {
            c.subs.remove(&subuid);
        }
        self.refresh_client(cid);
        if let Some(c) = self.clients.get_mut(&cid) {
            c.meta_stale = true;
        }
    }

    /// Recomputes a client's sweep period and `all` flag from its subscriptions.
    fn refresh_client(&mut self, cid: u64) {
        let default = self.limits.default_period;
        let Some(c) = self.clients.get_mut(&cid) else {
            return;
        };
        let had_all = c.has_all;
        c.has_all = c.subs.values().any(|s| s.all && !s.topics_only);
        c.period = c
            .subs
            .values()
            .filter(|s| !s.topics_only)
            .map(|s| s.periodic)
            .min()
            .unwrap_or(default);
        match (had_all, c.has_all) {
            (false, true) => self.all_clients += 1,
            (true, false) => self.all_clients -= 1,
            _ => {}
        }
    }

    /// Handles one binary frame: one or more `[id, timestamp, type, value]` arrays
    /// (docs/nt4.md §3.4); a frame that is not `MessagePack` closes the client.
    pub(crate) fn handle_binary(&mut self, cid: u64, frame: &[u8]) {
        let mut reader = Reader::new(frame);
        while !reader.is_empty() {
            let msg = match reader.value() {
                Ok(m) => m,
                Err(e) => {
                    return self.close_for(
                        cid,
                        CLOSE_BAD_DATA,
                        format!("bad MessagePack: {} (docs/nt4.md §3.4)", e.0),
                    );
                }
            };
            let Msg::Array(mut parts) = msg else {
                return self.close_for(
                    cid,
                    CLOSE_BAD_DATA,
                    "a binary message must be a 4-element array (docs/nt4.md §3.4)",
                );
            };
            if parts.len() != 4 {
                return self.close_for(
                    cid,
                    CLOSE_BAD_DATA,
                    "a binary message must be a 4-element array (docs/nt4.md §3.4)",
                );
            }
            let value = parts.pop().expect("4 parts");
            let id = match parts[0] {
                Msg::Int(i) => i,
                Msg::UInt(u) => i64::try_from(u).unwrap_or(i64::MAX),
                _ => continue,
            };
            let timestamp = match parts[1] {
                Msg::UInt(u) => u,
                _ => 0,
            };
            if id == -1 {
                // Clock sync: echo the client's time with ours (docs/nt4.md §3.5).
                let now = self.now_us();
                let Some(c) = self.clients.get_mut(&cid) else {
                    return;
                };
                msgpack::write_array_len(&mut c.bin_out, 4);
                msgpack::write_int(&mut c.bin_out, -1);
                msgpack::write_uint(&mut c.bin_out, now);
                let data_type = match &value {
                    Msg::F64(_) | Msg::F32(_) => 1,
                    _ => 2,
                };
                msgpack::write_uint(&mut c.bin_out, data_type);
                match value {
                    Msg::F64(f) => msgpack::write_f64(&mut c.bin_out, f),
                    Msg::F32(f) => msgpack::write_f32(&mut c.bin_out, f),
                    Msg::Int(i) => msgpack::write_int(&mut c.bin_out, i),
                    Msg::UInt(u) => msgpack::write_uint(&mut c.bin_out, u),
                    _ => msgpack::write_int(&mut c.bin_out, 0),
                }
                c.notify.notify_one();
                continue;
            }
            let Some(&topic_id) = self.clients.get(&cid).and_then(|c| c.pubs.get(&id)) else {
                continue; // unknown publisher: ignored, as the protocol says
            };
            let topic = self.topics[topic_id as usize]
                .as_ref()
                .expect("published topic");
            let Some(v) = Value::from_msgpack(&topic.type_str, value) else {
                continue; // a value of the wrong type is ignored (docs/nt4.md §3.4)
            };
            // The retained value is the one with the largest timestamp (0 is a weak set).
            if timestamp >= topic.timestamp || topic.value.is_none() {
                self.store(topic_id, |slot| *slot = Some(v), timestamp.max(1));
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
