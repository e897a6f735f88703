"""Source checking benchmark: an answer's 50 sources looked up in a 10 MB corpus.

Run with `make bench` (or `pytest tests/benchmarks/test_sources_bench.py -m bench -s`). Each kind
of quote is timed on its own: word for word, with its spacing and case changed, with typos (the
approximate search), and made up (short ones aligned with the whole corpus, long ones only
around the pieces of them that occur in it).
"""

from __future__ import annotations

import random
import time

import pytest

from rlm_desktop.engine.sandbox.given_sources import GivenSource
from rlm_desktop.review.health.sources import check_sources
from tests.benchmarks.report import record_figure
from tests.review.attack_session import corpus

CORPUS_CHARS = 10_000_000
PER_KIND = 10


def typo(text: str) -> str:
    """`text` with its first letter after every 40th character changed (no figure touched)."""
    chars = list(text)
    for at in range(20, len(chars), 40):
        letter = next(i for i in range(at, len(chars)) if chars[i].isalpha())
        chars[letter] = "q" if chars[letter] != "q" else "z"
    return "".join(chars)


def quotes(text: str, rng: random.Random, length: int) -> list[str]:
    starts = [rng.randrange(0, len(text) - length) for _ in range(PER_KIND)]
    return [text[start : start + length] for start in starts]


@pytest.mark.bench
def test_checking_50_sources_against_10_mb() -> None:
    rng = random.Random(29)
    text = corpus(CORPUS_CHARS, seed=29)
    documents = [("corpus.txt", text)]
    kinds = {
        "word for word (120 chars)": quotes(text, rng, 120),
        "spacing and case changed (120 chars)": [
            "  ".join(q.upper().split()) for q in quotes(text, rng, 120)
        ],
        "typos, 120 chars": [typo(q) for q in quotes(text, rng, 120)],
        "typos, 1,000 chars": [typo(q) for q in quotes(text, rng, 1_000)],
        "made up, 120 chars": [
            " ".join(rng.choices(["invented", "claim", "never", "said"], k=20))[:120]
            for _ in range(PER_KIND)
        ],
        "made up, 1,000 chars": [
            " ".join(rng.choices(["invented", "claim", "never", "said"], k=160))[:1_000]
            for _ in range(PER_KIND)
        ],
    }
    expected = ["exact", "normalized", "fuzzy", "fuzzy", "not_found", "not_found"]
    total = 0.0
    for (kind, given), match in zip(kinds.items(), expected, strict=True):
        started = time.perf_counter()
        checked = check_sources(documents, [GivenSource(quote=q) for q in given], "")
        took = time.perf_counter() - started
        total += took
        assert [source.match for source in checked] == [match] * PER_KIND, kind
        record_figure("sources", f"{kind}, per quote, 10 MB", f"{took / PER_KIND * 1000:.0f} ms")
    record_figure(
        "sources", f"{PER_KIND * len(kinds)} sources of every kind, 10 MB", f"{total:.1f} s"
    )
