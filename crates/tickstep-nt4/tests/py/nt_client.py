"""A WPILib NetworkTables client (pyntcore) driven by a tickstep test.

Prints one JSON line per event on stdout:
  {"event": "connected"} and {"topic": name, "value": v} for every value of /tickstep/ and of the
  server's $clients it sees (raw, msgpack and protobuf values as hex). Reads commands on stdin: `set <topic> true|false` publishes
  a boolean, `quit` ends. Ends by itself after 60 seconds, so a stuck test cannot leave it.
"""

import json
import sys
import threading
import time

import ntcore
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

port = int(sys.argv[1])
deadline = time.monotonic() + 60
out_lock = threading.Lock()


def emit(obj):
    with out_lock:
        print(json.dumps(obj), flush=True)


schema = {}


def decode_scheduler(data):
    """Decodes the scheduler with the schema the server published under /.schema/."""
    if "cls" not in schema:
        pool = descriptor_pool.DescriptorPool()
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(schema["bytes"]))
        desc = pool.FindMessageTypeByName("wpi.proto.ProtobufScheduler")
        schema["cls"] = message_factory.GetMessageClass(desc)
    msg = schema["cls"].FromString(data)
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def plain(value):
    v = value.value()
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, (list, tuple)):
        return list(v)
    return v


inst = ntcore.NetworkTableInstance.create()


def on_event(event):
    if event.is_(ntcore.EventFlags.kConnected):
        emit({"event": "connected"})
    elif event.is_(ntcore.EventFlags.kValueAll):
        data = event.data
        name = data.topic.getName()
        line = {"topic": name, "type": data.topic.getTypeString(), "value": plain(data.value)}
        if name.startswith("/.schema/"):
            schema["bytes"] = bytes(data.value.value())
        elif name == "/tickstep/scheduler" and "bytes" in schema:
            line["decoded"] = decode_scheduler(bytes(data.value.value()))
        emit(line)


value_listener = inst.addListener(["/tickstep/", "/.schema/", "$clients"], ntcore.EventFlags.kValueAll, on_event)
connection_listener = inst.addConnectionListener(True, on_event)
# Values are sent to subscribed clients only; `periodic` 20 ms is the robot's frame.
subscriber = ntcore.MultiSubscriber(inst, ["/tickstep/", "/.schema/", "$clients"], ntcore.PubSubOptions(periodic=0.02, sendAll=True))
inst.startClient4("tickstep-test")
inst.setServer("127.0.0.1", port)

publishers = {}
for line in sys.stdin:
    if time.monotonic() > deadline:
        break
    parts = line.split()
    if not parts:
        continue
    if parts[0] == "quit":
        break
    if parts[0] == "set" and len(parts) == 3:
        topic = parts[1]
        if topic not in publishers:
            publishers[topic] = inst.getBooleanTopic(topic).publish()
        publishers[topic].set(parts[2] == "true")
        inst.flush()
        emit({"event": "published", "topic": topic})

# End cleanly: listeners and the client's threads first, then the instance.
inst.removeListener(value_listener)
inst.removeListener(connection_listener)
subscriber.close()
inst.stopClient()
ntcore.NetworkTableInstance.destroy(inst)
