"""A headless Chromium driven through chromedriver's WebDriver protocol
(W3C, plain HTTP and JSON: no Python package needed), for the tests that
look at reports as a reader's browser renders them.

Debian's ``chromium`` and ``chromium-driver`` packages provide both
programs (``make deps`` installs them). ``missing()`` says why a browser
test must skip; ``Browser`` opens one session for a test module.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def _chromium() -> str | None:
    return next((p for c in CHROMIUM if (p := shutil.which(c))), None)


def missing() -> str | None:
    """Why no browser test can run here (None when both programs are there)."""
    if _chromium() is None:
        return "no chromium on the PATH (Debian: apt-get install chromium; make deps)"
    if shutil.which("chromedriver") is None:
        return "no chromedriver on the PATH (Debian: apt-get install chromium-driver; make deps)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Browser:
    """One headless Chromium session at a window ``width`` x ``height``."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        self.port = _free_port()
        self.driver = subprocess.Popen(
            ["chromedriver", f"--port={self.port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                self._call("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    self.driver.kill()
                    raise
                time.sleep(0.1)
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": _chromium(),
                        "args": [
                            "--headless=new",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-dev-shm-usage",
                            f"--window-size={width},{height}",
                        ],
                    },
                }
            }
        }
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())["value"]

    def _s(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def open(self, page: Path) -> None:
        self._s("POST", "/url", {"url": page.resolve().as_uri()})

    def run(self, script: str) -> Any:
        """The value of ``script`` (a function body: ``return ...``) in the page."""
        return self._s("POST", "/execute/sync", {"script": script, "args": []})

    def screenshot(self, png: Path) -> None:
        png.write_bytes(base64.b64decode(self._s("GET", "/screenshot")))

    def close(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.driver.terminate()
            self.driver.wait(timeout=10)


#: What a page must satisfy once rendered: its width fits the window (no
#: horizontal scroll bar), every image loaded, and no element but a table's
#: scroll box is wider than the page.
LAYOUT = """
const doc = document.documentElement;
const imgs = Array.from(document.images);
const wide = Array.from(document.querySelectorAll('body *'))
  .filter(e => !e.closest('.wide'))
  .filter(e => e.getBoundingClientRect().right > doc.clientWidth + 1)
  .map(e => e.tagName + (e.className ? '.' + e.className : ''));
return {
  scrollWidth: doc.scrollWidth,
  clientWidth: doc.clientWidth,
  images: imgs.length,
  broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).length,
  overflowing: wide.slice(0, 5),
  title: document.title,
};
"""
