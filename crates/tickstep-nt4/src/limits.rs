//! What one client may cost the server (docs/nt4.md §4).

use std::net::IpAddr;
use std::time::Duration;

/// Bounds on what clients may ask of the server. Every bound closes the offending client with a
/// reason naming it; other clients and the frame carry on (docs/nt4.md §4.1).
///
/// ```
/// use tickstep_nt4::Limits;
/// let mut limits = Limits::default();
/// limits.max_clients = 4;
/// assert_eq!(limits.max_frame_bytes, 1 << 20);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// Connected clients at once; one more is refused with HTTP 503.
    pub max_clients: usize,
    /// Largest WebSocket message a client may send.
    pub max_frame_bytes: usize,
    /// Subscriptions one client may hold.
    pub max_subscriptions_per_client: usize,
    /// Topic names (or prefixes) one subscription may list.
    pub max_subscription_topics: usize,
    /// Publishers one client may hold.
    pub max_publishers_per_client: usize,
    /// Topics the server holds in all (the robot's and the clients').
    pub max_topics: usize,
    /// WebSocket messages one client may send per second.
    pub max_messages_per_second: u32,
    /// Bytes that may wait for one client (queued `all` values and clock replies); past it the
    /// client is too slow and is dropped (docs/nt4.md §4.2).
    pub max_pending_bytes: usize,
    /// How long one send to a client may take before the client is dropped as not reading.
    pub send_timeout: Duration,
    /// How often the server sends each client a WebSocket ping (docs/nt4.md §4.4).
    pub ping_interval: Duration,
    /// How long a client may take to answer a ping with a pong before it is dropped as gone.
    pub ping_timeout: Duration,
    /// The sweep period when a subscription names none (NT4's default, 100 ms).
    pub default_period: Duration,
    /// The shortest sweep period a subscription may ask for.
    pub min_period: Duration,
    /// The longest sweep period.
    pub max_period: Duration,
    /// When not empty, only these addresses may connect; others get HTTP 403 (docs/nt4.md §4.3).
    /// NT4 has no authentication of its own, so this and the address the server binds are what
    /// keep a robot's server to its own network.
    pub allowed_peers: Vec<IpAddr>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_clients: 32,
            max_frame_bytes: 1 << 20,
            max_subscriptions_per_client: 256,
            max_subscription_topics: 256,
            max_publishers_per_client: 256,
            max_topics: 8192,
            max_messages_per_second: 2_000,
            max_pending_bytes: 4 << 20,
            send_timeout: Duration::from_secs(2),
            ping_interval: Duration::from_secs(1),
            ping_timeout: Duration::from_secs(3),
            default_period: Duration::from_millis(100),
            min_period: Duration::from_millis(5),
            max_period: Duration::from_secs(10),
            allowed_peers: Vec::new(),
        }
    }
}
