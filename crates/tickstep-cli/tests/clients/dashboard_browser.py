"""Drives headless Chromium through chromedriver (the W3C WebDriver protocol, spoken with the
standard library, tests/clients/webdriver.py) over serve's dashboard (docs/serve.md §13), and prints what it saw as one JSON
line for the Rust test to judge.

usage: dashboard_browser.py HTTP_ADDR SCREENSHOT_DIR ACTION_TOKEN SCHEDULE_ID FIRING_ID
Screenshots of the list and of schedule FIRING_ID's page, at 1366x768 and at a phone's 390x844,
go to SCREENSHOT_DIR. Every wait is bounded; nothing here decides pass or fail except a broken
browser.
"""

import json
import sys

from webdriver import Browser, wait_for

ADDR, SHOTS, TOKEN, TARGET, FIRING = sys.argv[1:6]

# What the stylesheet sets, as the browser computed it: proof it applied under the CSP.
LOOK = """
const style = (css, property) => {
  const el = document.querySelector(css);
  return el ? getComputedStyle(el)[property] : null;
};
return {
  badge_background: style('.badge.active', 'backgroundColor'),
  header_background: style('header.top', 'backgroundColor'),
  body_font: style('body', 'fontFamily'),
  cell_border: style('#schedules td', 'borderBottomStyle'),
  sign_in_color: style('#sign-in', 'color'),
};
"""
# Pixels of the frame chart drawn in the bars' green (#1a7f37) or red (#b42318).
DRAWN = """
const c = document.getElementById('frames');
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
let n = 0;
for (let i = 0; i < d.length; i += 4) {
  if (d[i + 3] > 0 && ((d[i] < 60 && d[i + 1] > 100) || (d[i] > 150 && d[i + 1] < 60))) n++;
}
return n;
"""

with Browser() as browser:
    call, S = browser.call, browser.s()
    seen = {"csp": [], "console_errors": []}

    def go(path):
        browser.go(f"http://{ADDR}{path}")

    def judged():
        """What the page and the browser said about the CSP so far, and whether the page holds
        the action token anywhere (it never should, docs/serve.md §13.8)."""
        browser.judge(seen)
        if run(f"return document.documentElement.outerHTML.includes({json.dumps(TOKEN)})"):
            seen["token_in"] = seen.get("token_in", []) + [call("GET", S + "/url")]

    def shot(name):
        browser.save_screenshot(f"{SHOTS}/{name}.png")

    def live_updates(at_least):
        return int(wait_for(f"{at_least} live updates", lambda: (
            lambda n: n if n >= at_least else 0)(int(run("return document.getElementById('frames').dataset.updates")))))

    run, find = browser.run, browser.find
    browser.watch_csp()
    browser.viewport(1366, 768)

    go("/dashboard")
    seen["title"] = run("return document.title")
    seen["all_rows"] = run("return [...document.querySelectorAll('#schedules a')].map(a => a.textContent)")
    # The hostile arguments, as the browser shows them (text), and whether anything ran.
    seen["args_cells"] = run(
        "return [...document.querySelectorAll('#schedules tr')].slice(1).map(r => r.cells[5].textContent)")
    seen["images"] = run("return document.images.length")
    seen["pwned"] = run("return window.pwned || 0")

    # The live chart: wait until the script has drawn two updates.
    seen["live_updates"] = live_updates(2)
    seen["look"] = run(LOOK)
    seen["chart_pixels"] = run(DRAWN)
    seen["budget_text"] = run("return document.getElementById('budget').textContent")
    seen["online_text"] = run("return document.getElementById('online').textContent")
    # The hot tasks, filled by the same script: rows under the header, origins as text.
    seen["hot_rows"] = run("return [...document.querySelectorAll('#hot-tasks tr')].slice(1)"
                           ".map(r => r.cells[0].textContent)")
    judged()
    shot("list-1366x768")
    # Keyboard access: Tab walks the links, the filter's fields and the rows' links in reading
    # order, and each shows the focus outline.
    TAB = "\ue004"
    focus = []
    for _ in range(14):
        call("POST", S + "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": TAB}, {"type": "keyUp", "value": TAB}]}]})
        focus.append(run("const e = document.activeElement; return [e.tagName.toLowerCase() + "
                         "(e.name ? '[' + e.name + ']' : '') + ' ' + (e.tagName === 'A' || "
                         "e.tagName === 'BUTTON' ? e.textContent.trim() : ''), "
                         "getComputedStyle(e).outlineStyle]"))
    seen["tab_order"] = focus
    go(f"/dashboard/schedules/{FIRING}")
    seen["firings_rows"] = run("return document.querySelectorAll('#firings tr').length - 1")
    seen["detail_look"] = run(LOOK)
    judged()
    shot("detail-1366x768")
    go("/dashboard")

    # Filter through the form, as a user would: type in the search box, press the button.
    box = find("input[name=q]")
    call("POST", S + f"/element/{box}/value", {"text": "tea"})
    call("POST", S + f"/element/{find('button')}/click", {})
    wait_for("the filtered page", lambda: "q=tea" in call("GET", S + "/url"))
    seen["filtered_url"] = call("GET", S + "/url")
    seen["filtered_rows"] = run("return [...document.querySelectorAll('#schedules a')].map(a => a.textContent)")

    # Open the first row's detail view by clicking its link.
    call("POST", S + f"/element/{find('#schedules a')}/click", {})
    wait_for("the detail page", lambda: "/dashboard/schedules/" in call("GET", S + "/url"))
    seen["detail_h1"] = run("return document.querySelector('h1').textContent")
    seen["detail_owner"] = run("return document.getElementById('owner').textContent")
    seen["detail_fields"] = run("return [...document.querySelectorAll('#info th')].map(t => t.textContent)")
    seen["pwned_after"] = run("return window.pwned || 0")

    # Pause, then stop, schedule TARGET through its page's forms, as a user would.
    def field(name):
        return run("return [...document.querySelectorAll('#info tr')]"
                   f".filter(r => r.cells[0].textContent === '{name}')"
                   ".map(r => r.cells[1].textContent)[0]")

    # Sign in once, through the header's link and the form (docs/serve.md §13.8): the token is
    # typed here and never again.
    go(f"/dashboard/schedules/{TARGET}")
    seen["signed_out_actions"] = run("return document.querySelectorAll('dialog').length")
    call("POST", S + f"/element/{find('#sign-in')}/click", {})
    wait_for("the sign-in page", lambda: call("GET", S + "/url").endswith("/dashboard/login"))
    judged()
    shot("login-1366x768")
    call("POST", S + f"/element/{find('input[name=name]')}/value", {"text": "ada"})
    call("POST", S + f"/element/{find('input[name=token]')}/value", {"text": TOKEN})
    call("POST", S + f"/element/{find('#sign-in-button')}/click", {})
    wait_for("the list, signed in", lambda: call("GET", S + "/url").endswith("/dashboard"))
    seen["signed_in_as"] = run("return document.getElementById('signed-in').textContent")
    seen["cookie_visible_to_script"] = run("return document.cookie")
    judged()

    # Each action asks first: its link opens a dialog holding the form (docs/serve.md §13.8).
    go(f"/dashboard/schedules/{TARGET}")
    seen["token_fields"] = run("return document.querySelectorAll('input[name=token]').length")
    call("POST", S + f"/element/{find('#open-pause')}/click", {})
    wait_for("the pause dialog", lambda: run("return document.getElementById('confirm-pause').open"))
    seen["pause_dialog_url"] = call("GET", S + "/url")
    pause_form = f"#confirm-pause form[action='/dashboard/schedules/{TARGET}/pause']"
    call("POST", S + f"/element/{find(pause_form + ' input[name=note]')}/value", {"text": "from the browser"})
    call("POST", S + f"/element/{find('#pause')}/click", {})
    wait_for("the paused page", lambda: field("paused") == "true")
    seen["after_pause_url"] = call("GET", S + "/url")
    seen["after_pause_note"] = field("pause_note")
    seen["pause_badge"] = run("return document.querySelector('p.summary .badge').textContent")
    # Resume from the same page, still without the token.
    call("POST", S + f"/element/{find('#open-resume')}/click", {})
    wait_for("the resume dialog", lambda: run("return document.getElementById('confirm-resume').open"))
    call("POST", S + f"/element/{find('#resume')}/click", {})
    wait_for("the resumed page", lambda: field("paused") == "false")
    seen["resume_badge"] = run("return document.querySelector('p.summary .badge').textContent")

    # Bulk: pause every active `every` schedule through the list's offer and its confirm page,
    # then resume the paused ones the same way (docs/serve.md §13.16).
    def badges():
        return run("return [...document.querySelectorAll('#schedules tr')].slice(1)"
                   ".map(r => [r.cells[0].textContent, r.querySelector('.badge').textContent])")

    def bulk(query, action):
        go(f"/dashboard?{query}")
        call("POST", S + f"/element/{find('#bulk-' + action)}/click", {})
        wait_for(f"the bulk {action} confirm page", lambda: f"/dashboard/bulk/{action}" in call("GET", S + "/url"))
        what = run("return document.getElementById('bulk-what').textContent")
        judged()
        shot(f"bulk-{action}-1366x768")
        call("POST", S + f"/element/{find('#bulk-confirm')}/click", {})
        wait_for(f"the bulk {action} outcome", lambda: run("return !!document.getElementById('bulk-result')"))
        result = run("return document.getElementById('bulk-result').textContent")
        judged()
        shot(f"bulk-{action}-done-1366x768")
        go("/dashboard")
        return what, result, badges()

    seen["bulk_pause"] = bulk("kind=every", "pause")
    seen["bulk_resume"] = bulk("state=paused", "resume")
    go("/dashboard/audit")
    seen["audit_rows"] = run("return [...document.querySelectorAll('#audit tr')].slice(1)"
                             ".map(r => [r.cells[1].textContent, r.cells[3].textContent, r.cells[4].textContent])")
    judged()
    go(f"/dashboard/schedules/{TARGET}")
    # Cancel closes the dialog and does nothing.
    call("POST", S + f"/element/{find('#open-stop')}/click", {})
    wait_for("the stop dialog", lambda: run("return document.getElementById('confirm-stop').open"))
    call("POST", S + f"/element/{find('#confirm-stop button[formmethod=dialog]')}/click", {})
    wait_for("the closed dialog", lambda: not run("return document.getElementById('confirm-stop').open"))
    seen["after_cancel_url"] = call("GET", S + "/url")
    call("POST", S + f"/element/{find('#open-stop')}/click", {})
    wait_for("the stop dialog again", lambda: run("return document.getElementById('confirm-stop').open"))
    call("POST", S + f"/element/{find('#stop')}/click", {})
    wait_for("the list after the stop", lambda: call("GET", S + "/url").endswith("/dashboard"))
    seen["after_stop_rows"] = run("return [...document.querySelectorAll('#schedules a')].map(a => a.textContent)")
    # The commands page, through the list's link.
    call("POST", S + f"/element/{find('nav a[href$=commands]')}/click", {})
    wait_for("the commands page", lambda: call("GET", S + "/url").endswith("/dashboard/commands"))
    seen["commands_h1"] = run("return document.querySelector('h1').textContent")
    seen["commands_count"] = run("return document.getElementById('count').textContent")
    judged()

    # A phone's width: the same pages, no sideways scrolling of the page itself.
    browser.viewport(390, 844, mobile=True)
    go("/dashboard")
    live_updates(2)
    seen["phone_width"] = run("return document.documentElement.scrollWidth")
    judged()
    shot("list-390x844")
    go(f"/dashboard/schedules/{FIRING}")
    seen["phone_detail_width"] = run("return document.documentElement.scrollWidth")
    judged()
    shot("detail-390x844")
    print(json.dumps(seen))
