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


def _generate(folder: Path) -> None:
    """Run `make_samples.py` as a user would, writing into `folder`."""
    done = subprocess.run(
        [sys.executable, str(SAMPLES / "make_samples.py"), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_generator_reproduces_the_committed_log(tmp_path: Path) -> None:
    _generate(tmp_path)
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


@pytest.fixture(scope="module")
def office() -> dict[str, str]:
    """The `kestrel/` files as the loader reads them: document name → text."""
    result = load_paths([SAMPLES / "kestrel"])
    assert result.errors == []
    assert result.skipped == []
    return {d.name: d.text for d in result.documents}


def test_the_generator_reproduces_the_office_files(tmp_path: Path) -> None:
    _generate(tmp_path)
    committed = SAMPLES / "kestrel"
    assert (tmp_path / "kestrel" / "inbox.mbox").read_bytes() == (
        committed / "inbox.mbox"
    ).read_bytes()
    for name in ("q1-figures.xlsx", "heron-steering.pptx"):  # zip timestamps may differ
        [made] = load_paths([tmp_path / "kestrel" / name]).documents
        [kept] = load_paths([committed / name]).documents
        assert made.text == kept.text


def test_the_hub_figures_are_only_on_the_second_sheet(office: dict[str, str], answers: str) -> None:
    book = office["kestrel/q1-figures.xlsx"]
    summary, hubs = book.split("\n\n## Sheet: ")
    assert "Rotterdam" not in summary
    rows = [line.split("\t") for line in hubs.splitlines()[2:]]
    totals = {row[0]: int(row[4]) for row in rows}
    assert sum(totals.values()) == 1_840_000
    busiest = max(totals, key=totals.__getitem__)
    months = ", ".join(f"{int(n):,}" for n in next(r for r in rows if r[0] == busiest)[1:4])
    assert f"{busiest}, {totals[busiest]:,} parcels" in answers
    assert all(figure in answers for figure in months.split(", "))
    for name, text in office.items():
        if name != "kestrel/q1-figures.xlsx":
            assert f"{totals[busiest]:,}" not in text
            assert str(totals[busiest]) not in text


def test_the_pilot_decision_is_only_in_the_speaker_notes(
    office: dict[str, str], answers: str
) -> None:
    deck = office["kestrel/heron-steering.pptx"]
    decision = "the pilot moves from Lyon to Ghent, starting 2 June 2025"
    assert decision in " ".join(deck.split())
    notes_line = next(line for line in deck.splitlines() if "Ghent, starting" in line)
    assert "note" in notes_line.lower() or "note" in deck[: deck.index(notes_line)].lower()
    assert "Ghent, from 2 June 2025" in answers
    assert all("2 June" not in text for name, text in office.items() if name.endswith(".mbox"))


def test_the_disputed_invoice_is_only_in_the_attachment(
    office: dict[str, str], answers: str
) -> None:
    [attachment] = [name for name in office if name.endswith("march-invoices.csv")]
    assert attachment.startswith("kestrel/inbox.mbox/")
    disputed = [line for line in office[attachment].splitlines() if "disputed" in line]
    [row] = [line.split(",") for line in disputed]
    number, supplier, amount = row[0], row[1], float(row[2])
    assert f"invoice {number} from {supplier}, EUR {amount:,.2f}" in answers
    assert sum("Brightwell" in text for text in office.values()) == 1
