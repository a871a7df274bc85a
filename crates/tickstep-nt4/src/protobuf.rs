//! The scheduler as the reference's protobuf message (`wpi.proto.ProtobufScheduler`,
//! docs/nt4.md §5.2), and the schema that describes it, published under `/.schema/`.
//!
//! Hand-encoded: two messages of a handful of fields do not need a protobuf crate and its
//! build step. Field numbers follow the reference's `.proto`.

use tickstep_commands::CommandInfo;

/// The message's type name on NT4 and in the log.
pub(crate) const SCHEDULER_TYPE: &str = "proto:wpi.proto.ProtobufScheduler";
/// The schema topic: `/.schema/proto:<file>`.
pub(crate) const SCHEMA_TOPIC: &str = "/.schema/proto:tickstep_scheduler.proto";
/// The schema's own type.
pub(crate) const SCHEMA_TYPE: &str = "proto:FileDescriptorProto";

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    tag(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, 0);
    varint(out, v);
}

fn double_field(out: &mut Vec<u8>, field: u32, v: f64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a length-delimited submessage built by `f` in place: a one-byte length is
/// reserved and widened afterwards only for a body of 128 bytes or more, so encoding a frame's
/// message allocates nothing but `out`'s growth.
fn message_field(out: &mut Vec<u8>, field: u32, f: impl FnOnce(&mut Vec<u8>)) {
    tag(out, field, 2);
    let at = out.len();
    out.push(0);
    f(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(5);
        varint(&mut prefix, len as u64);
        out.splice(at..=at, prefix);
    }
}

#[cfg(test)]
fn command(out: &mut Vec<u8>, c: &CommandInfo, running: bool) {
    fixed_fields(out, c);
    if running {
        double_field(out, 6, c.last_run_time.as_secs_f64() * 1e3);
        double_field(out, 7, c.total_run_time.as_secs_f64() * 1e3);
    }
}

/// The fields of a command fixed for its instance's life (id, parent, name, priority,
/// requirements): everything but the run times.
fn fixed_fields(out: &mut Vec<u8>, c: &CommandInfo) {
    // Proto3 leaves zero scalars out; ids start at 1 and are truncated to the message's uint32.
    varint_field(out, 1, c.id.get() & 0xffff_ffff);
    if let Some(p) = c.parent {
        varint_field(out, 2, p.get() & 0xffff_ffff);
    }
    if !c.name.is_empty() {
        bytes_field(out, 3, c.name.as_bytes());
    }
    if c.priority != 0 {
        // int32: negative values are ten-byte varints (sign-extended).
        varint_field(out, 4, i64::from(c.priority) as u64);
    }
    for r in &c.requirements {
        message_field(out, 5, |m| bytes_field(m, 1, r.as_bytes()));
    }
}

/// One command's fixed fields, encoded once per instance.
struct Cached {
    id: tickstep_commands::CommandId,
    fixed: Vec<u8>,
}

/// Encodes the scheduler message (queued: field 1, running: field 2, the last run time:
/// field 3), keeping each command's fixed fields encoded from the frame before: a frame in
/// which the same commands ran re-encodes only their run times and copies the rest
/// (docs/nt4.md §8.3). Its output is byte for byte that of encoding every field.
#[derive(Default)]
pub(crate) struct SchedulerEncoder {
    queued: Vec<Cached>,
    running: Vec<Cached>,
}

impl SchedulerEncoder {
    pub(crate) fn encode(
        &mut self,
        out: &mut Vec<u8>,
        queued: &[CommandInfo],
        running: &[CommandInfo],
        last_ms: f64,
    ) {
        refresh(&mut self.queued, queued);
        refresh(&mut self.running, running);
        for c in &self.queued {
            tag(out, 1, 2);
            varint(out, c.fixed.len() as u64);
            out.extend_from_slice(&c.fixed);
        }
        // Each running command: its fixed fields and two doubles (a tag byte and 8 bytes each).
        for (cached, c) in self.running.iter().zip(running) {
            tag(out, 2, 2);
            varint(out, (cached.fixed.len() + 18) as u64);
            out.extend_from_slice(&cached.fixed);
            double_field(out, 6, c.last_run_time.as_secs_f64() * 1e3);
            double_field(out, 7, c.total_run_time.as_secs_f64() * 1e3);
        }
        if last_ms != 0.0 {
            double_field(out, 3, last_ms);
        }
    }
}

/// Makes `cache` hold the fixed fields of `list`, re-encoding only where the instance changed.
fn refresh(cache: &mut Vec<Cached>, list: &[CommandInfo]) {
    cache.truncate(list.len());
    for (i, c) in list.iter().enumerate() {
        match cache.get_mut(i) {
            Some(cached) if cached.id == c.id => {}
            Some(cached) => {
                cached.id = c.id;
                cached.fixed.clear();
                fixed_fields(&mut cached.fixed, c);
            }
            None => {
                let mut fixed = Vec::new();
                fixed_fields(&mut fixed, c);
                cache.push(Cached { id: c.id, fixed });
            }
        }
    }
}

/// Encodes the scheduler field by field: the reference the cached encoder is tested against.
#[cfg(test)]
pub(crate) fn scheduler(
    out: &mut Vec<u8>,
    queued: &[CommandInfo],
    running: &[CommandInfo],
    last_ms: f64,
) {
    for c in queued {
        message_field(out, 1, |m| command(m, c, false));
    }
    for c in running {
        message_field(out, 2, |m| command(m, c, true));
    }
    if last_ms != 0.0 {
        double_field(out, 3, last_ms);
    }
}

/// A field of a `DescriptorProto`: name, number, label (1 optional, 3 repeated), type
/// (5 int32, 9 string, 11 message, 13 uint32, 1 double), type name for messages, and whether it
/// is a proto3 `optional` (then index into the message's synthetic oneofs).
struct Field {
    name: &'static str,
    number: u64,
    repeated: bool,
    kind: u64,
    type_name: Option<&'static str>,
    optional_oneof: Option<u64>,
}

const fn f(name: &'static str, number: u64, kind: u64) -> Field {
    Field {
        name,
        number,
        repeated: false,
        kind,
        type_name: None,
        optional_oneof: None,
    }
}

fn message(out: &mut Vec<u8>, name: &str, fields: &[Field]) {
    let mut msg = Vec::new();
    bytes_field(&mut msg, 1, name.as_bytes());
    let mut oneofs = Vec::new();
    for fd in fields {
        let mut b = Vec::new();
        bytes_field(&mut b, 1, fd.name.as_bytes());
        varint_field(&mut b, 3, fd.number);
        varint_field(&mut b, 4, if fd.repeated { 3 } else { 1 });
        varint_field(&mut b, 5, fd.kind);
        if let Some(t) = fd.type_name {
            bytes_field(&mut b, 6, t.as_bytes());
        }
        if let Some(index) = fd.optional_oneof {
            varint_field(&mut b, 9, index);
            varint_field(&mut b, 17, 1); // proto3_optional
            oneofs.push(format!("_{}", fd.name));
        }
        bytes_field(&mut msg, 2, &b);
    }
    for o in oneofs {
        let mut b = Vec::new();
        bytes_field(&mut b, 1, o.as_bytes());
        bytes_field(&mut msg, 8, &b);
    }
    bytes_field(out, 4, &msg);
}

/// The serialized `FileDescriptorProto` of the three messages (docs/nt4.md §5.2).
pub(crate) fn schema() -> Vec<u8> {
    let mut out = Vec::new();
    bytes_field(&mut out, 1, b"tickstep_scheduler.proto");
    bytes_field(&mut out, 2, b"wpi.proto");
    message(&mut out, "ProtobufMechanism", &[f("name", 1, 9)]);
    message(
        &mut out,
        "ProtobufCommand",
        &[
            f("id", 1, 13),
            Field {
                optional_oneof: Some(0),
                ..f("parent_id", 2, 13)
            },
            f("name", 3, 9),
            f("priority", 4, 5),
            Field {
                repeated: true,
                type_name: Some(".wpi.proto.ProtobufMechanism"),
                ..f("requirements", 5, 11)
            },
            Field {
                optional_oneof: Some(1),
                ..f("last_time_ms", 6, 1)
            },
            Field {
                optional_oneof: Some(2),
                ..f("total_time_ms", 7, 1)
            },
        ],
    );
    message(
        &mut out,
        "ProtobufScheduler",
        &[
            Field {
                repeated: true,
                type_name: Some(".wpi.proto.ProtobufCommand"),
                ..f("queued_commands", 1, 11)
            },
            Field {
                repeated: true,
                type_name: Some(".wpi.proto.ProtobufCommand"),
                ..f("running_commands", 2, 11)
            },
            f("last_time_ms", 3, 1),
        ],
    );
    bytes_field(&mut out, 12, b"proto3");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_encoder_matches_encoding_every_field() {
        use std::time::Duration;
        use tickstep_commands::{Command, CommandScheduler, Mechanism};
        use tickstep_kernel::clock::ManualClock;
        let clock = ManualClock::new();
        let robot = CommandScheduler::new(clock.clone());
        let arm = Mechanism::new(&robot, "arm");
        let long_name = "a command whose name is long enough to need a two-byte length ".repeat(3);
        let park = |co: tickstep_commands::Coroutine| async move {
            co.park().await;
        };
        let a = arm.run(park).with_priority(-2).named("a");
        let b = Command::no_requirements().executing(park).named(long_name);
        let mut encoder = SchedulerEncoder::default();
        let mut frames = 0;
        for step in [&a, &b, &a] {
            robot.schedule(step);
            for _ in 0..2 {
                robot.run().unwrap();
                clock.advance(Duration::from_millis(20));
                let t = robot.telemetry();
                let last = t.last_run_time.as_secs_f64() * 1e3;
                let (mut cached, mut reference) = (Vec::new(), Vec::new());
                encoder.encode(&mut cached, &t.queued, &t.running, last);
                scheduler(&mut reference, &t.queued, &t.running, last);
                assert_eq!(cached, reference);
                frames += 1;
            }
        }
        assert_eq!(frames, 6);
    }

    #[test]
    fn a_long_submessage_gets_a_wider_length() {
        let mut out = Vec::new();
        message_field(&mut out, 3, |m| m.extend_from_slice(&[7; 200]));
        // tag (3 << 3 | 2), then 200 as a two-byte varint, then the body.
        assert_eq!(&out[..3], &[0x1a, 0xc8, 0x01]);
        assert_eq!(out.len(), 203);
        let mut short = Vec::new();
        message_field(&mut short, 3, |m| m.push(9));
        assert_eq!(short, [0x1a, 1, 9]);
    }
}
