"""The scrub for secrets over documents: what a 200 MB folder of text costs the store.

Four thousand 50 KB documents with no secret in them (the common case) are scrubbed by
`Redactor.text` with a run key and two environment secrets, and once more by the case-blind
pattern the quick check replaced, in the same run, so the ratio holds on a busy machine.
Run with `make bench`.
"""

from __future__ import annotations

import re
import time

import pytest

from rlm_desktop.redact import Redactor
from tests.benchmarks.report import record_figure

pytestmark = pytest.mark.bench

DOCUMENTS = 4_000
DOCUMENT_CHARS = 50_000
OLD_HINT = re.compile(r"(?i)uthoriz|pi[-_]?key|earer")


def documents() -> list[str]:
    """Ordinary report text, a little different in each document."""
    out = []
    for number in range(DOCUMENTS):
        line = f"report {number}: the quarter's figures, nothing out of the ordinary.\n"
        out.append((line * (DOCUMENT_CHARS // len(line) + 1))[:DOCUMENT_CHARS])
    return out


def test_scrubbing_a_200_mb_folder() -> None:
    texts = documents()
    redactor = Redactor(["sk-run-key-0123456789", "ghp_environment_secret_01", "hunter2-password"])
    started = time.perf_counter()
    for text in texts:
        assert redactor.text(text) is text
    scrub_s = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts:
        assert OLD_HINT.search(text) is None
    old_check_s = time.perf_counter() - started
    record_figure(
        "store",
        f"scrubbing {DOCUMENTS:,} × 50 KB documents (200 MB) for three secrets and headers",
        f"{scrub_s:.2f} s",
        f"the case-blind pattern it replaced alone took {old_check_s:.2f} s "
        f"({old_check_s / scrub_s:.1f}× as long)",
    )
