"""Mail benchmark: load time of a 1,000-message mbox (short bodies, a small CSV attached to every
tenth message), through the real loader and its bounded reader.

Each load runs in a fresh subprocess, three times (min, median and max reported); the time
includes starting the reader process, which the documents benchmark reports on its own. The
figure also says how long the `MAX_DOCUMENTS` bound (10,000 messages) would take at this rate.
Run with `make bench`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.benchmarks.report import record_figure
from tests.benchmarks.test_documents_bench import REPEATS, _measure
from tests.documents.mail_makers import make_eml, write_mbox

pytestmark = pytest.mark.bench

MESSAGES = 1_000

MEASURE = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from rlm_desktop.documents import LoadOptions, count_tokens, load_paths

    count_tokens("warm up the tokenizer", sys.argv[2])
    started = time.perf_counter()
    result = load_paths([Path(sys.argv[1])], LoadOptions(model=sys.argv[2]))
    seconds = time.perf_counter() - started
    print(json.dumps({
        "seconds": seconds, "documents": len(result.documents),
        "attached": sum(1 for d in result.documents if d.attached_to),
        "skipped": len(result.skipped), "errors": [str(e) for e in result.errors],
        "bytes": result.totals.bytes, "tokens": result.totals.tokens,
    }))
""")


def _mbox(path: Path) -> Path:
    messages = [
        make_eml(
            subject=f"Weekly figures {number}",
            body=f"Hello,\n\nthe figures for week {number} are in.\n\nRegards,\nAlice",
            attachments=[(f"week{number}.csv", f"week,total\n{number},{number * 7}\n".encode())]
            if number % 10 == 0
            else (),
        )
        for number in range(MESSAGES)
    ]
    return write_mbox(path, messages)


def test_mbox_of_a_thousand_messages(tmp_path: Path) -> None:
    box = _mbox(tmp_path / "box.mbox")
    runs = sorted(
        (_measure(box, tmp_path / "home", script=MEASURE) for _ in range(REPEATS)),
        key=lambda f: f["seconds"],
    )
    assert {run["documents"] for run in runs} == {MESSAGES + MESSAGES // 10}
    assert {run["attached"] for run in runs} == {MESSAGES // 10}
    low, middle, high = (runs[i]["seconds"] for i in (0, len(runs) // 2, -1))
    per_message_ms = middle / MESSAGES * 1000
    record_figure(
        "documents",
        f"mbox, {MESSAGES:,} messages ({MESSAGES // 10} with a CSV)",
        f"{middle:.2f} s",
        f"min/median/max of {REPEATS}: {low:.2f}/{middle:.2f}/{high:.2f} s; "
        f"{per_message_ms:.2f} ms a message ({runs[1]['bytes'] / 1e6:.1f} MB, "
        f"{runs[1]['tokens']:,} tokens); 10,000 messages ~{per_message_ms * 10:.0f} s",
    )
