"""Plays serve's page (docs/serve.md §9.5, the page at `/` on the --http side) in headless
Chromium through tests/clients/webdriver.py: logs in by typing a name and a password (a short
one first, refused and asked again), sets a
reminder and waits for it to fire, asks for its schedules, and looks at another player's hostile
line; prints what it saw as one JSON line for the Rust test to judge.

usage: play_browser.py HTTP_ADDR NAME PASSWORD
Every wait is bounded; nothing here decides pass or fail except a broken browser.
"""

import json
import sys

from webdriver import ENTER, Browser, wait_for

ADDR, NAME, PASSWORD = sys.argv[1:4]
SHORT = "abc12"

OUTPUT = "return [...document.querySelectorAll('#out span')].map(s => s.textContent.trimEnd())"

with Browser() as browser:
    def lines():
        return browser.run(OUTPUT)

    def line_where(test, what):
        return wait_for(what, lambda: next((l for l in lines() if test(l)), None))

    def line_starting(prefix, what):
        return line_where(lambda l: l.startswith(prefix), what)

    def enter(text):
        browser.type("#line", text + ENTER)

    seen = {}
    browser.go(f"http://{ADDR}/")
    seen["title"] = browser.run("return document.title")
    line_starting("hello:", "the server's greeting")
    enter(NAME)
    line_starting("password: ", "the password prompt")
    seen["input_type_at_password"] = browser.run("return document.getElementById('line').type")
    # Too short: refused and asked again, the field masked throughout (docs/serve.md §10.9).
    enter(SHORT)
    line_starting("error: a password has at least", "the refusal of a short password")
    wait_for("the password prompt asked again",
             lambda: sum(l.startswith("password: ") for l in lines()) == 2 or None)
    seen["input_type_at_password_again"] = browser.run(
        "return document.getElementById('line').type")
    enter(PASSWORD)
    seen["welcome"] = line_starting("ok: welcome", "the welcome")
    seen["input_type_after_login"] = browser.run("return document.getElementById('line').type")
    seen["who"] = wait_for("Char.Name", lambda: (lambda t: t if t != "not logged in" else None)(
        browser.run("return document.getElementById('who').textContent")))
    enter("every 3600 tell hourly tea")
    seen["every_reply"] = line_starting("ok: schedule #", "the every's reply")
    enter("remind 1 the kettle")
    seen["fired"] = line_where(lambda l: l.startswith("[#") and l.endswith("] the kettle"),
                               "the reminder's firing")
    # The page asks for the list after a create; the button asks again.
    browser.click("#refresh")
    seen["sidebar"] = wait_for("the schedules list", lambda: [
        li for li in browser.run(
            "return [...document.querySelectorAll('#schedules li')].map(l => l.textContent)")
        if "hourly tea" in li])
    # Another player's scheduled say, as this page shows it.
    seen["hostile"] = line_where(lambda l: " mallory says: " in l, "mallory's say")
    seen["images"] = browser.run("return document.images.length")
    seen["scripts"] = browser.run("return document.scripts.length")
    seen["pwned"] = browser.run("return window.pwned || 0")
    seen["password_shown"] = any(PASSWORD in l or SHORT in l for l in lines())
    seen["typed_password_lines"] = [l for l in lines() if l.startswith("> (password")]
    print(json.dumps(seen))
