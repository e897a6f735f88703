"""The bundled samples: reproducible, loadable, and ANSWERS.md agrees with what the files say."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rlm_desktop.documents import load_paths
from rlm_desktop.paths import resource

SAMPLES = resource("samples")
LOG_LINE = re.compile(r"^(?P<stamp>\S+) (?P<level>[A-Z]+)\s+(?P<service>\S+)\s+(?P<message>.*)$")
REQUEST = re.compile(
    r"^req=(?P<id>[0-9a-f]{8}) (?P<method>[A-Z]+) (?P<route>\S+) (?P<status>\d{3}) "
)


@pytest.fixture(scope="module")
def answers() -> str:
    return " ".join((SAMPLES / "ANSWERS.md").read_text(encoding="utf-8").split())


@pytest.fixture(scope="module")
def log_lines() -> list[re.Match[str]]:
    lines = (SAMPLES / "server.log").read_text(encoding="utf-8").splitlines()
    matches = [LOG_LINE.match(line) for line in lines]
    assert all(matches)
    return [m for m in matches if m is not None]


def test_generator_reproduces_the_committed_log(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SAMPLES / "make_samples.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "server.log").read_bytes() == (SAMPLES / "server.log").read_bytes()


def test_log_error_counts_match_the_answers(log_lines: list[re.Match[str]], answers: str) -> None:
    errors = Counter(m["service"] for m in log_lines if m["level"] == "ERROR")
    (top, top_count), *rest = errors.most_common()
    assert f"{len(log_lines):,} lines" in answers
    assert f"{sum(errors.values())} ERROR lines. {top} logged the most: {top_count}" in answers
    assert ", ".join(f"{service} {n}" for service, n in rest) in answers


def test_the_one_507_matches_the_answer(log_lines: list[re.Match[str]], answers: str) -> None:
    requests = [(m, REQUEST.match(m["message"])) for m in log_lines]
    storage = [(m, r) for m, r in requests if r is not None and r["status"] == "507"]
    [(line, request)] = storage
    assert (
        f"req={request['id']}, `{request['method']} {request['route']}`, at {line['stamp']}"
        in answers
    )
    assert sum("507" in m["message"] for m in log_lines) > 5  # the distractors are really there


def test_incident_facts_match_the_answers(log_lines: list[re.Match[str]], answers: str) -> None:
    def times(text: str) -> list[str]:
        return [m["stamp"][11:19] for m in log_lines if text in m["message"]]

    [killed] = times("killed by the OOM killer")
    assert f"{killed} UTC: worker search-3" in answers
    assert f"{len(times('PoolTimeout'))} payment requests failed with 503" in answers
    assert f"{len(times('POST /v1/login 502'))} logins failed with 502" in answers
    assert f"({len(times('over SLO'))} warnings, 18:05 to 18:19)" in answers
    [rollback] = [m["message"] for m in log_lines if "rolled back" in m["message"]]
    old, new = re.findall(r"v\d+\.\d+\.\d+", rollback)
    assert f"{old}, rolled back to {new} at {times('rolled back')[0]}" in answers
    assert times("reconciliation job started") == ["02:12:40"]
    assert times("reconciliation job finished") == ["02:41:45"]


def test_memos_load_and_hold_the_answered_facts(answers: str) -> None:
    result = load_paths([SAMPLES / "memos"])
    assert result.errors == []
    assert result.skipped == []
    assert len(result.documents) == 7
    assert {d.type for d in result.documents} == {"markdown"}
    memos = {d.path.name: " ".join(d.text.split()) for d in result.documents}
    assert "revised **down to €950,000**" in memos["2025-03-05-heron-budget-revision.md"]
    assert "**31 August 2025**" in memos["2025-03-18-utrecht-closure-timeline.md"]
    assert "**Tomasz Wróbel**" in memos["2025-02-03-staffing-changes.md"]
    utrecht = memos["2025-03-18-utrecht-closure-timeline.md"]
    total, offered = (
        int(n) for n in re.findall(r"Of Utrecht's (\d+) employees, \*\*(\d+)\*\*", utrecht)[0]
    )
    assert f"**Answer:** {total - offered} ({total} employees, {offered} offered" in answers
    assert "€950,000, going live in September 2025" in answers
    assert "Utrecht, on 31 August 2025" in answers


def test_the_log_loads_as_one_text_document() -> None:
    result = load_paths([SAMPLES / "server.log"])
    [log] = result.documents
    assert log.type == "text"
    assert log.text.count("\n") == 3716
    assert not log.tokens_estimated
