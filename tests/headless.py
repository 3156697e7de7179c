"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``): open a page from
the file system, run JavaScript in it, read values back.  No network, no websocket library: the protocol's
messages are JSON separated by NUL bytes on file descriptors 3 (to Chromium) and 4 (from it)."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time

import pytest

REQUIRE_BROWSER = os.environ.get("DERIVE_REQUIRE_BROWSER", "") not in ("", "0")


def chromium() -> str | None:
    for name in (os.environ.get("DERIVE_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def require_chromium() -> str:
    """The browser, or skip (fail when ``DERIVE_REQUIRE_BROWSER`` is set, as in CI)."""
    path = chromium()
    if path is None:
        if REQUIRE_BROWSER:
            pytest.fail("no chromium found and DERIVE_REQUIRE_BROWSER is set")
        pytest.skip("chromium is not installed (set DERIVE_REQUIRE_BROWSER=1 to fail)")
    return path


class Browser:
    """One headless Chromium with one page; ``js(expr)`` returns the expression's value (JSON)."""

    def __init__(self, binary: str, timeout: float = 60) -> None:
        to_chrome_r, self._write = os.pipe()
        self._read, from_chrome_w = os.pipe()
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="derive-chromium-")

        def on_fds_3_and_4() -> None:
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             f"--user-data-dir={self._profile}", "--allow-file-access-from-files", "about:blank"],
            preexec_fn=on_fds_3_and_4, close_fds=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._id = 0
        self._session: str | None = None

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._id += 1
        message: dict = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError(f"chromium did not answer {method} in {self.timeout} s")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk

    def open(self, url: str, ready: str = "document.body && document.body.hasAttribute('data-live-ready')") -> None:
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            failed = "Boolean(document.body && document.body.getAttribute('data-derive-error'))"
            if self.js(f"Boolean({ready}) || {failed}"):
                return
            time.sleep(0.05)
        raise TimeoutError(f"{url} did not get ready")

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('exception', result)}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(10)
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)
