"""A small Chrome DevTools Protocol client for the report tests, over ``--remote-debugging-pipe``.

The pipe (file descriptors 3 and 4 of the browser, NUL-separated JSON messages) needs no
port and no websocket package. The client opens a page at a time, records every console error,
uncaught exception, log error and network request, and takes screenshots of elements.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


def chromium_path() -> str | None:
    return CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        exe = chromium_path()
        if exe is None:
            raise RuntimeError("chromium is not installed (make install installs it)")
        self.profile_dir = tempfile.mkdtemp(prefix="perfmodel-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child must see the pipes as fds 3 (it reads) and 4 (it writes).
        self.proc = self._spawn(exe, to_browser_r, from_browser_w, width, height)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        self.target: str | None = None
        self.width, self.height = width, height

    def _spawn(self, exe: str, read_fd: int, write_fd: int, width: int, height: int):
        def child_fds() -> None:
            r, w = os.dup(read_fd), os.dup(write_fd)  # free 3 and 4 before dup2 onto them
            os.dup2(r, 3)
            os.dup2(w, 4)

        return subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self.profile_dir}", f"--window-size={width},{height}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),  # kept open after child_fds has put the pipes there
            preexec_fn=child_fds,
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile_dir, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: bool = True,
        timeout: float = 60.0,
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply and reply.get("sessionId", self.session) == self.session:
                self.events.append(reply)  # the open page's (a closed one's may still come)

    def open(self, path: Path) -> None:
        """Open a page on ``path`` and start recording what it does, in place of the page
        opened before (one browser serves several pages: each start costs seconds of CPU)."""
        if self.target is not None:
            self.send("Target.closeTarget", {"targetId": self.target}, session=False)
        self.events = []
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.target = target["targetId"]
        attached = self.send(
            "Target.attachToTarget",
            {"targetId": target["targetId"], "flatten": True},
            session=False,
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()})

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise TimeoutError(f"never true: {expression}")
            time.sleep(0.2)

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, failed loads and requests for anything other
        than the page itself (an inline report must fetch nothing)."""
        out: list[str] = []
        for e in self.events:
            method, p = e["method"], e.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif method == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails']}")
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif method == "Network.loadingFailed":
                out.append(f"failed request: {p.get('errorText')}")
            elif method == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not (url.startswith("file://") and p.get("type") == "Document"):
                    if not url.startswith(("data:", "blob:", "about:")):
                        out.append(f"request: {url}")
        return out

    def screenshot(self, selector: str, out: Path) -> Path:
        """A PNG of the element ``selector`` (scrolled into view, whole element)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " const r = e.getBoundingClientRect();"
            " return {x: r.left + window.scrollX, y: r.top + window.scrollY,"
            " width: r.width, height: r.height}; })()"
        )
        shot = self.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {**box, "scale": 1},
            },
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(shot["data"]))
        return out
