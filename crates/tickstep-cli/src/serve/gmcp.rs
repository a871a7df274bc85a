//! The GMCP packages the server speaks (docs/serve.md §8.6): `Core.Hello` from the client,
//! `Char.Name` at login, and `tickstep.Schedules` so a client script can list a player's
//! schedules.
//!
//! Messages are `Package.Message` and a JSON value, inside one telnet sub-negotiation of option
//! 201. Unknown packages are ignored, as GMCP asks.

use serde_json::json;
use tickstep::schedules::ObjId;

use super::line_protocol::Request;
use super::server::Server;
use super::telnet::Telnet;

/// One GMCP message: the package and message name, and its JSON text.
pub(crate) type Message = (&'static str, String);

/// `Char.Name {"name": …, "id": …, "wizard": …}`, sent once the player is logged in.
pub(crate) fn char_name(name: &str, who: ObjId, wizard: bool) -> Message {
    let data = json!({ "name": name, "id": who.0, "wizard": wizard });
    ("Char.Name", data.to_string())
}

/// Answers one message from the client: `tickstep.Schedules.Get` gets
/// `tickstep.Schedules.List` (before login, `tickstep.Error`), and `tickstep.Client.Get` gets
/// `tickstep.Client.Info`, what the connection recorded of its client.
pub(crate) fn answer(
    t: &Telnet,
    server: &std::rc::Rc<Server>,
    who: Option<ObjId>,
    from: std::net::IpAddr,
    package: &str,
) -> Option<Message> {
    match package {
        "tickstep.Client.Get" => Some(("tickstep.Client.Info", client_info(t).to_string())),
        "tickstep.Schedules.Get" => Some(if let Some(who) = who {
            // `schedules` never waits: it answers at once, inside the codec's turn.
            let lines = server
                .execute_now(who, from, Request::Schedules)
                .map(|(lines, _)| lines)
                .unwrap_or_default();
            ("tickstep.Schedules.List", listing(&lines).to_string())
        } else {
            let data = json!({ "error": "log in first: your name, then its password" });
            ("tickstep.Error", data.to_string())
        }),
        // Core.Hello is recorded by the codec; Core.Supports and the rest need no answer.
        _ => None,
    }
}

/// What the connection recorded of its client (docs/serve.md §8.4).
fn client_info(t: &Telnet) -> serde_json::Value {
    let peer = t.peer();
    json!({
        "telnet": t.is_telnet(),
        "width": peer.width,
        "height": peer.height,
        "terminal_types": peer.terminal_types,
        "mtts": peer.mtts(),
        "utf8": peer.utf8,
        "client": peer.client,
    })
}

/// The `schedules` reply as JSON: `{"total": N, "schedules": [{"id": 7, "text": "…"}, …]}`
/// (at most 50, as the command lists; docs/serve.md §4.4).
fn listing(lines: &[String]) -> serde_json::Value {
    let total: u64 = lines
        .first()
        .and_then(|l| l.strip_prefix("ok: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let schedules: Vec<_> = lines
        .iter()
        .skip(1)
        .filter_map(|l| {
            let text = l.trim().strip_prefix('#')?;
            let id: u64 = text.split(' ').next()?.parse().ok()?;
            Some(json!({ "id": id, "text": l.trim() }))
        })
        .collect();
    json!({ "total": total, "schedules": schedules })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_becomes_json() {
        let lines = [
            "ok: 2 live schedules".to_owned(),
            "  #7 as hourly every 60 s tell hi".to_owned(),
            "  #9 in 5 s tell tea".to_owned(),
        ];
        assert_eq!(
            listing(&lines),
            json!({"total": 2, "schedules": [
                {"id": 7, "text": "#7 as hourly every 60 s tell hi"},
                {"id": 9, "text": "#9 in 5 s tell tea"},
            ]})
        );
    }
}
