"""A telnetlib3 client for `tickstep serve` (docs/serve.md §8): negotiates NAWS, TTYPE, CHARSET
and GMCP, logs in with a password (its echo turned off meanwhile), makes a named schedule and a reminder, asks for the GMCP packages, and prints
what it saw as one JSON object for the Rust test to check. Every wait is bounded."""

import asyncio
import json
import sys

import telnetlib3
from telnetlib3.telopt import ECHO

PATIENCE = 15.0


async def main(host: str, port: int, name: str, password: str) -> None:
    reader, writer = await asyncio.wait_for(
        telnetlib3.open_connection(
            host,
            port,
            term="xterm-256color",
            cols=100,
            rows=30,
            encoding="utf8",
            connect_maxwait=2.0,
        ),
        PATIENCE,
    )
    lines = []

    async def line_starting(prefix: str) -> str:
        while True:
            line = await asyncio.wait_for(reader.readline(), PATIENCE)
            if not line:
                raise SystemExit(f"closed before {prefix!r}; saw {lines!r}")
            line = line.rstrip("\r\n")
            lines.append(line)
            if line.startswith(prefix):
                return line

    async def gmcp(package: str):
        for _ in range(int(PATIENCE * 20)):
            if package in writer.ctx.gmcp_data:
                return writer.ctx.gmcp_data.pop(package)
            await asyncio.sleep(0.05)
        raise SystemExit(f"no GMCP {package}; have {list(writer.ctx.gmcp_data)!r}")

    async def echo_hidden(hidden: bool) -> bool:
        """Waits until the server's ECHO option is `hidden` (the server echoing, so this client
        does not); whether it got there in time."""
        for _ in range(int(PATIENCE * 20)):
            if writer.remote_option.enabled(ECHO) == hidden:
                return True
            await asyncio.sleep(0.05)
        return False

    await line_starting("hello:")
    echo_before = writer.remote_option.enabled(ECHO)
    writer.send_gmcp("tickstep.Schedules.Get")
    before_login = await gmcp("tickstep.Error")
    writer.write(name + "\r\n")
    await line_starting("password:")
    echo_off_for_password = await echo_hidden(True)
    # The name alone is not a login: GMCP still refuses, and no Char.Name came.
    writer.send_gmcp("tickstep.Schedules.Get")
    before_password = await gmcp("tickstep.Error")
    char_name_before_password = "Char.Name" in writer.ctx.gmcp_data
    writer.write(password + "\r\n")
    await line_starting("ok: welcome")
    echo_on_after_password = await echo_hidden(False)
    char_name = await gmcp("Char.Name")
    writer.write("every 3600 tell stretch as hourly\r\n")
    await line_starting("ok: schedule")
    writer.write("remind 1 tea is ready\r\n")
    await line_starting("ok: schedule")
    writer.send_gmcp("tickstep.Schedules.Get")
    listing = await gmcp("tickstep.Schedules.List")
    writer.send_gmcp("tickstep.Client.Get")
    client = await gmcp("tickstep.Client.Info")
    fired = await line_starting("[#")
    # A line longer than the 100 columns the client reported comes wrapped.
    writer.write("say " + "word " * 40 + "\r\n")
    await line_starting("ok: said")
    writer.write("quit\r\n")
    await line_starting("ok: bye")
    print(
        json.dumps(
            {
                "before_login": before_login,
                "before_password": before_password,
                "char_name_before_password": char_name_before_password,
                "echo_before": echo_before,
                "echo_off_for_password": echo_off_for_password,
                "echo_on_after_password": echo_on_after_password,
                "char_name": char_name,
                "listing": listing,
                "client": client,
                "fired": fired,
                "lines": lines,
            }
        )
    )
    writer.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]))
