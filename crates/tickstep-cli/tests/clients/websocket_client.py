"""A browser-like WebSocket client for `tickstep serve --ws` (docs/serve.md §9), using the
websockets package: plain text frames for one player and the gmcp.mudstandards.org subprotocol
for another, each logging in with a password, a reminder fired over each, and a page of another origin refused. Prints what it saw
as one JSON object for the Rust test to check. Every wait is bounded."""

import asyncio
import json
import sys

import websockets

PATIENCE = 15.0


async def recv_until(ws, test, seen):
    while True:
        frame = await asyncio.wait_for(ws.recv(), PATIENCE)
        seen.append(frame if isinstance(frame, str) else {"binary": frame.decode()})
        if test(frame):
            return frame


async def main(addr: str, password: str) -> None:
    url = f"ws://{addr}/ws"
    result = {}
    plain = []
    async with websockets.connect(url, origin=f"http://{addr}") as ws:
        result["plain_protocol"] = ws.subprotocol
        await recv_until(ws, lambda f: f.startswith("hello:"), plain)
        await ws.send("plain")
        await recv_until(ws, lambda f: f.startswith("password:"), plain)
        await ws.send(password)
        await recv_until(ws, lambda f: f.startswith("ok: welcome"), plain)
        await ws.send("remind 1 tea is ready")
        await recv_until(ws, lambda f: f.startswith("ok: schedule"), plain)
        await recv_until(ws, lambda f: f.startswith("[#"), plain)
        await ws.send("quit")
        await recv_until(ws, lambda f: f == "ok: bye", plain)
    result["plain"] = plain

    framed = []
    is_text = lambda prefix: lambda f: isinstance(f, str) and f.startswith(prefix)
    is_line = lambda prefix: lambda f: isinstance(f, bytes) and f.decode().startswith(prefix)
    async with websockets.connect(url, subprotocols=["gmcp.mudstandards.org"]) as ws:
        result["gmcp_protocol"] = ws.subprotocol
        await recv_until(ws, is_line("hello:"), framed)
        await ws.send(b"framed")
        await recv_until(ws, is_line("password:"), framed)
        await ws.send(password.encode())
        await recv_until(ws, is_text("Char.Name"), framed)
        await ws.send(b"every 3600 tell stretch as hourly")
        await recv_until(ws, is_line("ok: schedule"), framed)
        await ws.send("tickstep.Schedules.Get")
        listing = await recv_until(ws, is_text("tickstep.Schedules.List"), framed)
        result["listing"] = json.loads(listing.split(" ", 1)[1])
        await ws.send(b"remind 1 tea")
        await recv_until(ws, is_line("[#"), framed)
    result["framed"] = framed

    try:
        async with websockets.connect(url, origin="http://evil.example"):
            result["foreign_origin"] = "accepted"
    except websockets.exceptions.InvalidStatus as refused:
        result["foreign_origin"] = refused.response.status_code
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
