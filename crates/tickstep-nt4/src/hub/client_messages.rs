//! What a client sends: the text frames' control messages (publish, unpublish, setproperties,
//! subscribe, unsubscribe; docs/nt4.md §3.2–§3.3) and the binary frames' values (docs/nt4.md
//! §3.4), applied to the hub. The hub's state, its topics and its sweeps are the parent module.

use std::time::Duration;

use serde_json::{Map, Value as Json, json};

use super::{CLOSE_BAD_DATA, CLOSE_POLICY, Hub, Subscription, announce};
use crate::msgpack::{self, Msg, Reader};
use crate::value::Value;

impl Hub {
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
}
