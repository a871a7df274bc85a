"""Drives headless Chromium through chromedriver (tests/clients/webdriver.py) over a
`tickstep dashboard` of a store with many schedules (docs/serve.md §13.2): pages through the list
by its links and filters it by kind and by state through its form, as a person would, and prints
what it saw as one JSON line for the Rust test to judge.

usage: dashboard_paging.py HTTP_ADDR
Every wait is bounded; nothing here decides pass or fail except a broken browser.
"""

import json
import sys

from webdriver import Browser, wait_for

ADDR = sys.argv[1]
IDS = "return [...document.querySelectorAll('#schedules a')].map(a => Number(a.textContent.slice(1)))"

with Browser() as browser:
    call, S, run, find = browser.call, browser.s(), browser.run, browser.find
    seen = {"csp": [], "console_errors": []}

    def judged():
        browser.judge(seen)

    def page():
        return {"url": call("GET", S + "/url"), "ids": run(IDS),
                "count": run("return document.getElementById('count').textContent"),
                "page": run("return document.getElementById('page').textContent")}

    def choose(select, value):
        call("POST", S + f"/element/{find(f'select[name={select}] option[value={value}]')}/click", {})

    browser.watch_csp()
    browser.viewport(1366, 768)
    browser.go(f"http://{ADDR}/dashboard")
    seen["first"] = page()
    judged()
    call("POST", S + f"/element/{find('a[rel=next]')}/click", {})
    wait_for("page 2", lambda: "page=2" in call("GET", S + "/url"))
    seen["second"] = page()
    call("POST", S + f"/element/{find('a[rel=prev]')}/click", {})
    wait_for("page 1 again", lambda: "page=" not in call("GET", S + "/url"))
    seen["back"] = page()
    # Filter by kind through the form, then by state too.
    choose("kind", "cron")
    call("POST", S + f"/element/{find('form.filters button')}/click", {})
    wait_for("the cron page", lambda: "kind=cron" in call("GET", S + "/url"))
    seen["cron"] = page()
    seen["cron_cadences"] = run(
        "return [...new Set([...document.querySelectorAll('#schedules tr')].slice(1).map(r => r.cells[3].textContent))]")
    choose("state", "paused")
    call("POST", S + f"/element/{find('form.filters button')}/click", {})
    wait_for("the paused cron page", lambda: "state=paused" in call("GET", S + "/url"))
    seen["paused_cron"] = page()
    seen["pause_titles"] = run(
        "return [...document.querySelectorAll('#schedules .badge.paused')].map(b => b.title)")
    judged()
    print(json.dumps(seen))
