"""A telnetlib3 player who mistypes a password (docs/serve.md §10.7-§10.12): logs in to an
account with a wrong password, then the right one at the prompt asked again, recording every
line and whether the server had the client's echo off at each password prompt. Prints what it
saw as one JSON object for the Rust test to check. Every wait is bounded."""

import asyncio
import json
import sys

import telnetlib3
from telnetlib3.telopt import ECHO

PATIENCE = 15.0


async def main(host: str, port: int, name: str, wrong: str, right: str) -> None:
    reader, writer = await asyncio.wait_for(
        telnetlib3.open_connection(host, port, encoding="utf8", connect_maxwait=2.0),
        PATIENCE,
    )
    lines = []
    echo_at_password = []

    async def echo_hidden(hidden: bool) -> bool:
        """Waits until the server's ECHO option is `hidden`; whether it got there in time."""
        for _ in range(int(PATIENCE * 20)):
            if writer.remote_option.enabled(ECHO) == hidden:
                return True
            await asyncio.sleep(0.05)
        return False

    async def next_line() -> str:
        line = await asyncio.wait_for(reader.readline(), PATIENCE)
        if not line:
            raise SystemExit(f"closed; saw {lines!r}")
        line = line.rstrip("\r\n")
        lines.append(line)
        return line

    async def until(prefix: str) -> str:
        while True:
            line = await next_line()
            if line.startswith(prefix):
                return line

    await until("hello:")
    writer.write(name + "\r\n")
    await until("password:")
    echo_at_password.append(await echo_hidden(True))
    writer.write(wrong + "\r\n")
    # The two lines right after the wrong password: the refusal, then the prompt asked again.
    after_wrong = [await next_line(), await next_line()]
    echo_at_password.append(await echo_hidden(True))
    writer.write(right + "\r\n")
    welcome = await until("ok: ")
    echo_after = await echo_hidden(False)
    writer.write("quit\r\n")
    await until("ok: bye")
    print(
        json.dumps(
            {
                "after_wrong": after_wrong,
                "welcome": welcome,
                "echo_off_at_each_password_prompt": echo_at_password,
                "echo_on_after": echo_after,
                "lines": lines,
            }
        )
    )
    writer.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]))
