"""A websockets player whose frames end their lines as a telnet client does (docs/serve.md §9.2,
§10.7-§10.12): with gmcp.mudstandards.org it sends `name\\r\\n` in a BINARY frame, mistypes its
password, types the right one in a frame ending in CR whose LF starts the next frame, and sends two
lines in one frame; with plain TEXT frames another player does the same with LF. Prints every line
frame it got after each thing it sent, as one JSON object for the Rust test to check. Every wait
is bounded."""

import asyncio
import json
import sys

import websockets

PATIENCE = 15.0
# After the last line it expects, how long the client listens for a line it should not get.
QUIET = 0.5


async def lines_after(ws, sent, count, binary):
    """Sends each frame of `sent`, then reads `count` line frames (GMCP frames aside), and one
    more if it comes within QUIET: a frame split into two lines shows up there."""
    for frame in sent:
        await ws.send(frame)
    got = []
    while len(got) < count:
        frame = await asyncio.wait_for(ws.recv(), PATIENCE)
        if binary and isinstance(frame, str):
            continue  # GMCP
        got.append(frame.decode() if isinstance(frame, bytes) else frame)
    try:
        while True:
            frame = await asyncio.wait_for(ws.recv(), QUIET)
            if not (binary and isinstance(frame, str)):
                got.append(frame.decode() if isinstance(frame, bytes) else frame)
    except asyncio.TimeoutError:
        pass
    return got


async def main(addr: str, name: str, wrong: str, right: str, plain_name: str, plain_password: str):
    url = f"ws://{addr}/ws"
    result = {}
    async with websockets.connect(url, subprotocols=["gmcp.mudstandards.org"]) as ws:
        result["hello"] = await lines_after(ws, [], 1, True)
        result["name"] = await lines_after(ws, [f"{name}\r\n".encode()], 1, True)
        result["wrong"] = await lines_after(ws, [f"{wrong}\r\n".encode()], 2, True)
        result["right"] = await lines_after(
            ws, [f"{right}\r".encode(), b"\nwho\r\nwho"], 3, True
        )
        await ws.send(b"quit\r\n")
    async with websockets.connect(url) as ws:
        result["plain_hello"] = await lines_after(ws, [], 1, False)
        result["plain_name"] = await lines_after(ws, [f"{plain_name}\n"], 1, False)
        result["plain_password"] = await lines_after(ws, [f"{plain_password}\n"], 1, False)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], *sys.argv[2:7]))
