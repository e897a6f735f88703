"""The health check of a session model code aimed at it: megabytes of prompts, sent again and
again, slices of the documents and text found nowhere. The check reads each distinct text once,
takes a prompt kept as a span of the documents as it is, and stops scanning text that quotes
nothing at its bound, saying how much it left: a bounded time, in the CLI as in the window.

The tight figure is the benchmark's (`tests/benchmarks/test_health_bench.py`); this test holds
the check to an order of magnitude, as the host-check tests hold theirs.
"""

from __future__ import annotations

import argparse
import json
import time

import pytest

from rlm_desktop import paths
from rlm_desktop.commands.sessions import add_sessions_parser, run_sessions_command
from rlm_desktop.review.health import coverage, session_health
from rlm_desktop.store import Store
from tests.review.attack_session import Shape, corpus, record

CORPUS_CHARS = 8_000_000
SHAPE = Shape(
    slices=40, slice_chars=200_000, repeats=60, repeat_chars=1_000_000, distinct=30,
    distinct_chars=1_000_000,
)  # fmt: skip
"""The corpus read whole as slices; 60 MB of one text and 30 MB of texts of their own."""
BOUND_S = 60.0


def _sessions(*argv: str) -> int:
    """`rlm-desktop sessions ARGV`, through its real argument parser."""
    parser = argparse.ArgumentParser(prog="rlm-desktop")
    add_sessions_parser(parser.add_subparsers(dest="command"))
    return run_sessions_command(parser.parse_args(["sessions", *argv]))


def test_the_health_of_a_session_model_code_aimed_at_it_is_bounded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = corpus(CORPUS_CHARS)
    store = Store(paths.database_path())
    record(store, "attack", text, SHAPE)

    started = time.monotonic()
    report = session_health(store, "attack")
    elapsed = time.monotonic() - started
    store.close()

    assert elapsed < BOUND_S, f"the check took {elapsed:.1f} s"
    (document,) = report.coverage.documents
    assert document.covered == document.chars == len(text)  # the slices, taken as spans
    junk = (1 + SHAPE.distinct) * SHAPE.distinct_chars  # the repeated text is scanned once
    unscanned, scanned = report.coverage.unscanned, junk - coverage.PROBE_LIMIT
    assert 0.999 * scanned < unscanned < scanned  # the end of each
    # text scanned whole (shorter than the probed slices) is neither probed nor left
    assert report.coverage.to_json()["unscanned_chars"] == unscanned

    for command in (("health", "attack", "--json"), ("show", "attack", "--json")):
        capsys.readouterr()
        started = time.monotonic()
        code = _sessions(*command)
        elapsed = time.monotonic() - started
        shown = json.loads(capsys.readouterr().out)
        assert code == 0
        assert elapsed < BOUND_S, f"sessions {command[0]} took {elapsed:.1f} s"
        assert shown["coverage"]["unscanned_chars"] == unscanned
    capsys.readouterr()
    assert _sessions("health", "attack") == 0
    assert f"{unscanned:,} characters of what the models were given were not scanned" in (
        capsys.readouterr().out
    )
