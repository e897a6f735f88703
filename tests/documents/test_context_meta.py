"""`context_meta` names each document's type and its parts (#28): a spreadsheet's sheets and a
PDF's pages at their offsets, so model code can slice one sheet out; the first message lists them;
a follow-up in a new process gets the same parts back from the store."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import run_cli
from tests.documents.makers import make_pdf
from tests.documents.test_spreadsheets import _workbook
from tests.scripted_rlm import repl, rlm_requests, scripted
from tests.scripted_server import ScriptedServer
from tests.test_cli_continue import _run

FIRST = "What does the second sheet hold?"
SECOND = "And the second page?"
SECOND_SHEET = (
    "sheet = context_meta[0]['sheets'][1]\n"
    "FINAL(context_meta[0]['type'] + ' | ' + sheet['name'] + ' | '"
    " + context[0][sheet['start']:sheet['end']])"
)
SECOND_PAGE = (
    "page = context_meta[1]['pages'][1]\n"
    "FINAL(context_meta[1]['type'] + ' ' + page['name'] + ': '"
    " + context[1][page['start']:page['end']])"
)


def test_model_code_slices_a_sheet_and_a_page_by_their_offsets_even_in_a_follow_up(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    book = _workbook(tmp_path / "figures.xlsx")
    report = make_pdf(tmp_path / "report.pdf", [["Cover page"], ["Outlook: cautious."]])
    scripted_server.respond_with(
        scripted({FIRST: [repl(SECOND_SHEET)], SECOND: [repl(SECOND_PAGE)]})
    )

    first = run_cli(
        *_run(scripted_server, FIRST, "--doc", str(book), "--doc", str(report)),
        home=isolated_home,
    )

    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)
    assert (
        done["answer"]
        == "spreadsheet | Q3 detail | ## Sheet: Q3 detail (A1:B1)\nthe vault code\t4242.5"
    )
    opening = rlm_requests(scripted_server, FIRST)[0]["messages"][1]["content"]
    assert "[0] figures.xlsx (spreadsheet, 3 sheets: Summary, Q3 detail, Archive;" in opening
    assert "[1] report.pdf (pdf, 2 pages;" in opening
    assert "context[i][start:end] is that part" in opening

    book.unlink()
    report.unlink()  # the follow-up's parts come back from the store, not from the files
    second = run_cli(
        *_run(scripted_server, SECOND, "--continue", done["session_id"]), home=isolated_home
    )

    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["answer"] == "pdf 2: Outlook: cautious."
