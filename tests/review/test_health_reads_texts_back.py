"""The health check of a saved session reads its documents' texts back one at a time: over a
big session it holds its index of them, not every text beside it, and still finds the answer's
quote of the last document and the coverage of each (Python's own allocations, tracemalloc)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.engine import ContextDocument
from rlm_desktop.review.health import session_health
from rlm_desktop.store import Store
from tests.engine.scripting import repl, scripted
from tests.review.health_runs import QUERY, recorded
from tests.scripted_server import ScriptedServer

DOCUMENTS = 300
DOCUMENT_CHARS = 50_000
LAST_QUOTE = "the closing line of the last report → seven herons"


def reports() -> list[ContextDocument]:
    """Reports of their own words, two bytes a character in memory (an arrow in each)."""
    return [
        ContextDocument(
            name=f"report-{n:03}.txt",
            text=(f"report {n} → " + " ".join(f"w{n}x{i}" for i in range(8_000)))[:DOCUMENT_CHARS]
            + ("\n" + LAST_QUOTE if n == DOCUMENTS - 1 else ""),
        )
        for n in range(DOCUMENTS)
    ]


async def test_the_check_of_a_big_session_holds_one_text_at_a_time(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    documents = reports()
    chars = [len(document.text) for document in documents]
    answer = f"FINAL('the last report', sources=[{LAST_QUOTE!r}])"
    store = Store(paths.database_path())
    session = await recorded(
        store, scripted_server, scripted({QUERY: [repl(answer)]}), documents=documents
    )
    del documents

    tracemalloc.start()
    try:
        report = session_health(store, session)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        store.close()

    assert report.status == "completed", report.findings
    (source,) = report.sources
    assert (source.match, source.document_index) == ("exact", DOCUMENTS - 1)
    assert [document.chars for document in report.coverage.documents] == chars
    held = 2 * sum(chars)  # what the texts take in memory, at two bytes a character
    assert peak < held * 0.6, f"the check held {peak / 1e6:.0f} MB over {held / 1e6:.0f} MB of text"
