"""Drives headless Chromium through chromedriver (tests/clients/webdriver.py) over a dashboard's
overview page (docs/serve.md §13.18) and prints what it saw as one JSON line for the Rust test to
judge: each chart's bars and its empty-state text as SVG elements, the hour's sentence and
table, and, where the page is live, the frame chart's pixels after updates. A listener
installed before any page script collects CSP violations; the browser's console log is read.

usage: dashboard_overview.py HTTP_ADDR SCREENSHOT_DIR NAME
Screenshots at 1366x768 and at a phone's 390x844 go to SCREENSHOT_DIR/NAME-SIZE.png. Every wait
is bounded; nothing here decides pass or fail except a broken browser.
"""

import json
import sys

from webdriver import Browser, wait_for

ADDR, SHOTS, NAME = sys.argv[1:4]

# Each chart as the script drew it: its bars, its empty-state text, its scale's labels.
CHARTS = """
return Object.fromEntries([...document.querySelectorAll('figure.minute-chart')].map(f => [
  f.id.replace('chart-', ''),
  {
    bars: f.querySelectorAll('rect.bar:not(.inner)').length,
    tallest: Math.max(0, ...[...f.querySelectorAll('rect.bar')].map(r => Number(r.getAttribute('height')))),
    empty: (f.querySelector('text.empty') || {}).textContent || null,
    ticks: [...f.querySelectorAll('text.tick')].map(t => t.textContent),
    tip: (f.querySelector('rect.bar title') || {}).textContent || null,
  },
]));
"""
# Pixels of the frame chart drawn in the bars' green (#1a7f37) or red (#b42318).
DRAWN = """
const c = document.getElementById('frames');
if (!c) return null;
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
let n = 0;
for (let i = 0; i < d.length; i += 4) {
  if (d[i + 3] > 0 && ((d[i] < 60 && d[i + 1] > 100) || (d[i] > 150 && d[i + 1] < 60))) n++;
}
return n;
"""

with Browser() as browser:
    call, S, run = browser.call, browser.s(), browser.run
    seen = {"csp": [], "console_errors": []}

    def judged():
        browser.judge(seen)

    def shot(size):
        browser.save_screenshot(f"{SHOTS}/{NAME}-{size}.png")

    def drawn():
        return run("return document.getElementById('chart-firings').dataset.drawn !== undefined")

    browser.watch_csp()
    browser.viewport(1366, 768)
    browser.go(f"http://{ADDR}/dashboard/overview")
    seen["h1"] = run("return document.querySelector('h1').textContent")
    seen["nav"] = run("return [...document.querySelectorAll('header nav a')].map(a => a.textContent)")
    wait_for("the hour's charts", drawn, seconds=30)
    live = run("return document.getElementById('frames') !== null")
    if live:
        # Two live updates: the frame chart has bars, the hour has the firings of the last one.
        wait_for("two live updates", lambda: int(run(
            "return document.getElementById('frames').dataset.updates")) >= 2, seconds=30)
        wait_for("a firing charted", lambda: run(CHARTS)["firings"]["bars"] > 0, seconds=30)
        seen["frame_pixels"] = run(DRAWN)
    seen["charts"] = run(CHARTS)
    seen["summary"] = run("return document.getElementById('hour-summary').textContent")
    seen["table_rows"] = run("return document.getElementById('minutes-table').rows.length - 1")
    seen["busy_rows"] = run(
        "return [...document.getElementById('minutes-table').rows].slice(1)"
        ".filter(r => Number(r.cells[1].textContent) > 0).length")
    seen["wide"] = run("return document.documentElement.scrollWidth")
    shot("1366x768")
    judged()
    browser.viewport(390, 844, mobile=True)
    browser.go(f"http://{ADDR}/dashboard/overview")
    wait_for("the hour's charts at a phone's width", drawn, seconds=30)
    seen["phone_width"] = run("return document.documentElement.scrollWidth")
    shot("390x844")
    judged()
    print(json.dumps(seen))
