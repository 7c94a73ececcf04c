"""A small client of the Chrome DevTools Protocol over a pipe, from the
standard library alone, for tests that need a real browser.

Chromium started with --remote-debugging-pipe reads commands on its fd 3
and writes replies and events on its fd 4, each a JSON message ended by a
NUL byte. Browser starts it headless in a throw-away profile; page()
opens a tab (a target, attached with flatten: true, so that its commands
carry a sessionId). Every wait has a deadline: a hung browser raises
CDPTimeout instead of hanging the test. close() (or the with block's end)
ends the browser, killing it if it does not go.

    with cdp.Browser() as b:
        p = b.page(width=1300, height=900)
        p.navigate("file:///tmp/x.svg")
        print(p.evaluate("document.title"))
        p.click(100, 200)
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"


class CDPError(Exception):
    """The browser answered a command with an error, or died."""


class CDPTimeout(CDPError):
    """No answer within the deadline."""


class Browser:
    def __init__(self, binary=CHROMIUM, *, timeout=20.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="cdp-profile-")
        self.log = open(os.path.join(self.profile, "stderr.log"), "w+b")
        self._next_id = 0
        self._buf = b""
        self.events = []        # (sessionId or None, method, params)
        # Ours: commands go into cmd_w, replies come out of reply_r. The
        # browser's ends go to its fds 3 and 4, by way of numbers at or
        # above 10 (so that neither dup2 overwrites the other).
        cmd_r, self.cmd_w = os.pipe()
        reply_r, reply_w = os.pipe()
        self.reply_r = reply_r
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
                  for fd in (cmd_r, reply_w)]
        os.close(cmd_r)
        os.close(reply_w)

        def child_fds():
            os.dup2(theirs[0], 3)   # inheritable: the exec keeps them
            os.dup2(theirs[1], 4)

        args = [binary, "--headless=new", "--no-sandbox",
                "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync",
                "--mute-audio", "--window-size=1400,1000", "about:blank"]
        try:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=self.log,
                stderr=self.log, close_fds=False, preexec_fn=child_fds)
        finally:
            for fd in theirs:
                os.close(fd)

    # ------------------------------------------------------------ the pipe

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPTimeout("no message from the browser in time" +
                                 self._stderr_tail())
            ready, _, _ = select.select([self.reply_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.reply_r, 1 << 16)
            if not chunk:
                raise CDPError("the browser closed its pipe" +
                               self._stderr_tail())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _stderr_tail(self):
        try:
            self.log.seek(0)
            text = self.log.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""
        return "; its stderr ends:\n" + text[-2000:] if text else ""

    def send(self, method, params=None, session=None, timeout=None):
        """Run a command; its result, or CDPError with the error."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method,
               "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        deadline = time.monotonic() + (timeout or self.timeout)
        while data:
            _, ready, _ = select.select([], [self.cmd_w], [],
                                        max(0, deadline - time.monotonic()))
            if not ready:
                raise CDPTimeout(f"{method}: the browser reads no commands")
            data = data[os.write(self.cmd_w, data):]
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"],
                                    reply.get("params", {})))

    def wait_event(self, method, session=None, timeout=None):
        """The params of the first event method (of session) not yet
        taken, waiting for it if need be."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, (s, m, params) in enumerate(self.events):
                if m == method and (session is None or s == session):
                    del self.events[i]
                    return params
            reply = self._read_message(deadline)
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"],
                                    reply.get("params", {})))

    # ------------------------------------------------------------ pages

    def page(self, width=1300, height=900):
        target = self.send("Target.createTarget",
                           {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        p = Page(self, session, target)
        p.send("Page.enable")
        p.send("Runtime.enable")
        p.send("Emulation.setDeviceMetricsOverride",
               {"width": width, "height": height, "deviceScaleFactor": 1,
                "mobile": False})
        return p

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=5)
            except CDPError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for fd in (self.cmd_w, self.reply_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    """A tab: its commands carry its sessionId."""

    def __init__(self, browser, session, target):
        self.browser, self.session, self.target = browser, session, target

    def send(self, method, params=None, timeout=None):
        return self.browser.send(method, params, self.session, timeout)

    def navigate(self, url, timeout=None):
        """Load url and wait for its load event."""
        self.browser.events = [e for e in self.browser.events
                               if e[0] != self.session]
        r = self.send("Page.navigate", {"url": url}, timeout)
        if r.get("errorText"):
            raise CDPError(f"{url}: {r['errorText']}")
        self.browser.wait_event("Page.loadEventFired", self.session, timeout)

    def evaluate(self, expression):
        """The value of a JavaScript expression (JSON-able), or CDPError
        with the exception it threw."""
        r = self.send("Runtime.evaluate", {"expression": expression,
                                           "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CDPError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def exceptions(self):
        """The uncaught exceptions the page's scripts threw so far."""
        return [p for s, m, p in self.browser.events
                if s == self.session and m == "Runtime.exceptionThrown"]

    def mouse(self, kind, x, y, **kw):
        self.send("Input.dispatchMouseEvent",
                  {"type": kind, "x": x, "y": y, **kw})

    def click(self, x, y):
        """A real left click at (x, y): move, press, release."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def insert_text(self, text):
        """Type text into the focused element."""
        self.send("Input.insertText", {"text": text})
