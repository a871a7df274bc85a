"""Headless Chromium through chromedriver, spoken to with the W3C WebDriver protocol over the
standard library: the browser machinery the serve browser tests share (dashboard_browser.py,
play_browser.py).

    with Browser() as browser:
        browser.go("http://127.0.0.1:4001/")
        title = browser.run("return document.title")

Every wait is bounded; a browser that does not answer ends the script with a message.
"""

import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1200,1000",
]
# WebDriver's code for the Enter key (W3C WebDriver, "Keyboard actions").
ENTER = "\ue007"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, probe, seconds=20):
    """probe() until it returns something true, at most `seconds`; that value."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = probe()
            if value:
                return value
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


class Browser:
    """One chromedriver and one browser session, with a profile of their own, both gone at exit."""

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="tickstep-chromium-")
        port = free_port()
        self.driver = subprocess.Popen(["chromedriver", f"--port={port}"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}"
        self.session = ""
        wait_for("chromedriver", lambda: self.call("GET", "/status")["ready"])
        answer = self.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": "/usr/bin/chromium",
                                   "args": FLAGS + [f"--user-data-dir={self.profile}"]}}}})
        self.session = f"/session/{answer['sessionId']}"
        return self

    def __exit__(self, *_):
        try:
            if self.session:
                self.call("DELETE", self.session)
        except OSError:
            pass
        self.driver.kill()
        self.driver.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as answer:
            return json.loads(answer.read())["value"]

    def s(self, path=""):
        """A path under this browser's session."""
        return self.session + path

    def go(self, url):
        self.call("POST", self.s("/url"), {"url": url})

    def url(self):
        return self.call("GET", self.s("/url"))

    def run(self, script):
        return self.call("POST", self.s("/execute/sync"), {"script": script, "args": []})

    def find(self, css):
        el = self.call("POST", self.s("/element"), {"using": "css selector", "value": css})
        return next(iter(el.values()))

    def type(self, css, text):
        self.call("POST", self.s(f"/element/{self.find(css)}/value"), {"text": text})

    def click(self, css):
        self.call("POST", self.s(f"/element/{self.find(css)}/click"), {})

    def cdp(self, command, params):
        """A Chrome DevTools Protocol command, through chromedriver."""
        return self.call("POST", self.s("/goog/cdp/execute"), {"cmd": command, "params": params})

    def watch_csp(self):
        """From the next page on, every Content-Security-Policy violation is kept in
        window.cspViolations (a listener installed before any page script runs; the page's
        CSP does not apply to it)."""
        self.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": (
            "window.cspViolations = [];"
            "document.addEventListener('securitypolicyviolation', function (e) {"
            " window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI); });")})

    def console(self):
        """The browser's console messages since the last call: [level, message] pairs."""
        entries = self.call("POST", self.s("/se/log"), {"type": "browser"})
        return [[e["level"], e["message"]] for e in entries]

    def viewport(self, width, height, mobile=False):
        """Sizes the page's viewport as a screen of `width` x `height` CSS pixels."""
        self.cdp("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def screenshot(self):
        """The page as PNG bytes, base64-encoded."""
        return self.call("GET", self.s("/screenshot"))

    def save_screenshot(self, path):
        """Writes the page as a PNG file at `path`."""
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.screenshot()))

    def judge(self, seen):
        """Adds to `seen` what the page and the browser said since the last call: the CSP
        violations watch_csp kept (under "csp") and the console's errors (under
        "console_errors")."""
        seen.setdefault("csp", []).extend(self.run("return window.cspViolations || []"))
        seen.setdefault("console_errors", []).extend(
            m for level, m in self.console() if level == "SEVERE")
