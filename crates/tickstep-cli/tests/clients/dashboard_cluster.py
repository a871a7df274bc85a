"""Drives headless Chromium through chromedriver (tests/clients/webdriver.py) over a PostgreSQL
dashboard's cluster page (docs/serve.md §13.12, §13.19) and prints what it saw as one JSON line for
the Rust test to judge: the nodes' timeline bars by class, the holdings chart's lines (their
points and drawn size) and dots, the colour the stylesheet gave the first line, the holdings table
and the takeovers table as text. A listener installed before any page script collects CSP
violations; the browser's console log is read.

usage: dashboard_cluster.py HTTP_ADDR SCREENSHOT_DIR NAME
Screenshots at 1366x768 and at a phone's 390x844 go to SCREENSHOT_DIR/NAME-SIZE.png. Every wait
is bounded; nothing here decides pass or fail except a broken browser.
"""

import json
import sys

from webdriver import Browser, wait_for

ADDR, SHOTS, NAME = sys.argv[1:4]

SEEN = """
const svg = document.querySelector('#cluster-holdings svg.holdings');
const lines = svg ? [...svg.querySelectorAll('polyline.line')] : [];
const rows = id => [...((document.getElementById(id) || {}).rows || [])].slice(1)
  .map(r => [...r.cells].map(c => c.textContent.trim()));
return {
  h1: document.querySelector('h1').textContent,
  spans: [...document.querySelectorAll('#cluster-hour rect.span')].map(r => r.getAttribute('class')),
  lines: lines.map(l => ({
    points: l.points.numberOfItems,
    width: l.getBBox().width,
    stroke: getComputedStyle(l).stroke,
    fill: getComputedStyle(l).fill,
  })),
  dots: svg ? svg.querySelectorAll('circle.dot').length : 0,
  chart_width: svg ? svg.getBoundingClientRect().width : 0,
  holdings_rows: rows('holdings-rows'),
  takeover_rows: rows('takeover-events'),
  empty: [...document.querySelectorAll('p.empty')].map(p => p.textContent),
};
"""

with Browser() as browser:
    call, S, run = browser.call, browser.s(), browser.run
    seen = {"csp": [], "console_errors": []}

    def judged():
        browser.judge(seen)

    def shot(size):
        browser.save_screenshot(f"{SHOTS}/{NAME}-{size}.png")

    def loaded():
        return run("return document.getElementById('takeovers') !== null")

    browser.watch_csp()
    browser.viewport(1366, 768)
    browser.go(f"http://{ADDR}/dashboard/cluster")
    wait_for("the cluster page", loaded, seconds=30)
    seen.update(run(SEEN))
    seen["wide"] = run("return document.documentElement.scrollWidth")
    run("document.getElementById('cluster-holdings').scrollIntoView()")
    shot("1366x768")
    judged()
    browser.viewport(390, 844, mobile=True)
    browser.go(f"http://{ADDR}/dashboard/cluster")
    wait_for("the cluster page at a phone's width", loaded, seconds=30)
    seen["phone_width"] = run("return document.documentElement.scrollWidth")
    shot("390x844")
    judged()
    print(json.dumps(seen))
