"""Open a page in Debian's headless Chromium, JavaScript on, with every request it would make
sent to a recording proxy on 127.0.0.1 (so a test sees any attempt to reach the network)."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
QUIET = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
    "--metrics-recording-only",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--virtual-time-budget=3000",
]


BROWSER_OWN = re.compile(
    r"^(?:GET|POST|CONNECT) (?:https?://)?[\w.-]*\b(?:google\.com|googleapis\.com|gvt1\.com)[:/]"
)
"""Requests Chromium makes for itself whatever the page (update checks, time, sign-in)."""


def page_requests(seen: list[str]) -> list[str]:
    """The requests of `seen` that are not Chromium's own background traffic."""
    return [request for request in seen if not BROWSER_OWN.match(request)]


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request with 404 and remembers what was asked."""

    seen: list[str]

    def _record(self) -> None:
        self.server.seen.append(f"{self.command} {self.path}")  # type: ignore[attr-defined]
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_CONNECT = do_HEAD = _record

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Keep the test's output clean."""


@contextmanager
def recording_proxy() -> Iterator[tuple[str, list[str]]]:
    """`(address, requests seen)` of a proxy that fails and records every request."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def dump_dom(page: Path, proxy: str, profile: Path) -> str:
    """The page's DOM after it loaded and ran, as Chromium serialises it."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            *QUIET,
            f"--user-data-dir={profile}",
            f"--proxy-server=http://{proxy}",
            "--proxy-bypass-list=<-loopback>",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
