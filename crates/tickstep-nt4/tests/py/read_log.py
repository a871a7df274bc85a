"""Reads .wpilog files with WPILib's own DataLogReader (robotpy-wpiutil) and prints, as one JSON
object, each file's header and its records: {"files": [{"valid", "version", "extra", "entries":
{id: [name, type]}, "records": [[name, timestamp, value], ...]}]}. Raw values print as hex."""

import json
import sys

from wpiutil.log import DataLogReader

GETTERS = {
    "boolean": "getBoolean",
    "int64": "getInteger",
    "double": "getDouble",
    "float": "getFloat",
    "string": "getString",
    "boolean[]": "getBooleanArray",
    "int64[]": "getIntegerArray",
    "double[]": "getDoubleArray",
    "float[]": "getFloatArray",
    "string[]": "getStringArray",
}


def read(path):
    reader = DataLogReader(path)
    out = {"path": path, "valid": reader.isValid(), "records": [], "entries": {}}
    if not reader.isValid():
        return out
    out["version"] = reader.getVersion()
    out["extra"] = reader.getExtraHeader()
    entries = {}
    for record in reader:
        if record.isStart():
            start = record.getStartData()
            entries[start.entry] = (start.name, start.type)
            out["entries"][str(start.entry)] = [start.name, start.type]
        elif record.isControl():
            continue
        else:
            name, type_str = entries[record.getEntry()]
            getter = GETTERS.get(type_str)
            value = getattr(record, getter)() if getter else bytes(record.getRaw()).hex()
            if isinstance(value, (list, tuple)):
                value = list(value)
            out["records"].append([name, record.getTimestamp(), value])
    return out


print(json.dumps({"files": [read(p) for p in sys.argv[1:]]}))
