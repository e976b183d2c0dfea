"""A real headless Chromium driven over the DevTools protocol (stdlib only).

`Browser()` starts /usr/bin/chromium (or `chromium` on PATH) with
`--remote-debugging-pipe`: commands go in on fd 3, answers and events come
out on fd 4, NUL-separated JSON. `browser.open(url, width=, height=)` gives a
`Page` that can evaluate JavaScript, take full-page screenshots and tell
which network requests and console problems the page produced.

The tests use it for the HTML report and the embed badge: what a person's
browser draws, measured (text bounding boxes) rather than guessed.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tests.system import need_tool

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-first-run",
         "--disable-quic", "--hide-scrollbars", "--mute-audio", "--font-render-hinting=none",
         "--remote-debugging-pipe")


def chromium_path() -> str:
    """Chromium's path; without it the calling test is skipped naming the
    package (tests/system.py)."""
    return need_tool("chromium")


class Browser:
    """One Chromium process; close() (or the context manager) ends it."""

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="tg-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_fds() -> None:             # the child's fd 3 reads, fd 4 writes
            os.dup2(to_child_r, 200)
            os.dup2(from_child_w, 201)
            os.dup2(200, 3)
            os.dup2(201, 4)

        self.process = subprocess.Popen(
            [chromium_path(), *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            close_fds=False, preexec_fn=wire_fds)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._lock = threading.Lock()
        self._answers: dict[int, queue.Queue] = {}
        self.events: queue.Queue = queue.Queue()
        self._stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # -------------------------------------------------------------- wire
    def _drain_stderr(self) -> None:
        for line in iter(self.process.stderr.readline, b""):
            self._stderr.append(line.decode("utf-8", "replace"))

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 20)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message and message["id"] in self._answers:
                    self._answers[message["id"]].put(message)
                else:
                    self.events.put(message)

    def call(self, method: str, params: dict | None = None, *, session: str | None = None,
             timeout: float | None = None) -> dict:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            self._answers[ident] = queue.Queue()
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        try:
            answer = self._answers[ident].get(timeout=timeout or self.timeout)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} "
                               f"(stderr: {''.join(self._stderr)[-800:]})") from None
        finally:
            self._answers.pop(ident, None)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    # -------------------------------------------------------------- pages
    def open(self, url: str, *, width: int, height: int = 900, mobile: bool = False,
             scale: float = 1.0) -> "Page":
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": scale,
                   "mobile": mobile}, session=session)
        page.navigate(url)
        return page

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, target: str, session: str) -> None:
        self.browser, self.target, self.session = browser, target, session
        self.requests: list[str] = []
        self.responses: list[tuple[str, int]] = []
        self.problems: list[str] = []

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.browser.call(method, params, session=self.session)

    def _note(self, event: dict) -> str | None:
        """Record a request or a console problem; return the event name."""
        if event.get("sessionId") != self.session:
            return None
        method, params = event.get("method", ""), event.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Network.responseReceived":
            self.responses.append((params["response"]["url"], params["response"]["status"]))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.problems.append(details.get("exception", {}).get("description")
                                 or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            self.problems.append(" ".join(str(a.get("value", a.get("description", "")))
                                          for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            self.problems.append(params["entry"].get("text", ""))
        return method

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", {"url": url})
        self.wait_for_load(url)

    def click(self, selector: str) -> None:
        """Click the element (a link, a form's button) and wait for the page it loads."""
        found = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                              " if (!e) return false; e.click(); return true; })()")
        if not found:
            raise LookupError(f"no element {selector!r} on {self.evaluate('location.href')}")
        self.wait_for_load(selector)

    def wait_for_load(self, what: str) -> None:
        deadline = time.monotonic() + self.browser.timeout
        while time.monotonic() < deadline:
            try:
                event = self.browser.events.get(timeout=0.2)
            except queue.Empty:
                continue
            if self._note(event) == "Page.loadEventFired":
                break
        else:
            raise TimeoutError(f"{what} did not finish loading")
        self.evaluate("document.fonts ? document.fonts.ready.then(() => true) : true",
                      await_promise=True)
        self.settle()

    def settle(self, seconds: float = 0.1) -> None:
        """Collect the events that arrived (requests, console problems)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self._note(self.browser.events.get(timeout=0.05))
            except queue.Empty:
                pass

    def evaluate(self, expression: str, *, await_promise: bool = False):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        params: dict = {"format": "png"}
        if full_page:
            width, height = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params |= {"captureBeyondViewport": True,
                       "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}
        data = self.call("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.browser.call("Target.closeTarget", {"targetId": self.target})


# Every visible text box on the page (text nodes measured with a Range; SVG
# <text> with getBoundingClientRect), with pairs that overlap. Boxes smaller
# than a pixel and text inside <title> (tooltips) are ignored.
TEXT_BOXES_JS = r"""
(() => {
  const boxes = [];
  const visible = el => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || +s.opacity === 0) return false;
      if (e.tagName.toLowerCase() === 'title') return false;
    }
    return true;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim() || !visible(n.parentElement)) continue;
    const parent = n.parentElement;
    let rects;
    if (parent.closest('svg')) {
      const t = parent.closest('text');
      if (!t || t.dataset.measured) continue;
      t.dataset.measured = '1';
      rects = [t.getBoundingClientRect()];
    } else {
      const r = document.createRange(); r.selectNodeContents(n);
      rects = Array.from(r.getClientRects());
    }
    for (const b of rects) {
      if (b.width < 1 || b.height < 1) continue;
      boxes.push({text: n.textContent.trim().slice(0, 40), x: b.left + scrollX,
                  y: b.top + scrollY, w: b.width, h: b.height,
                  owner: (parent.closest('svg') || parent).id || parent.className.baseVal || parent.className || parent.tagName});
    }
  }
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (w > 1 && h > 1) overlaps.push([a, b]);
    }
  }
  document.querySelectorAll('[data-measured]').forEach(e => delete e.dataset.measured);
  return {count: boxes.length, overlaps: overlaps.slice(0, 20)};
})()
"""
