"""The health check runs where Qt is not installed, and without loading litellm."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.store import Store
from tests.qt_free import run_without_qt
from tests.review.health_runs import NOTE, recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

SCRIPT = """
import sys

from rlm_desktop.paths import database_path
from rlm_desktop.review.health import session_health
from rlm_desktop.store import Store

store = Store(database_path())
report = session_health(store, {session_id!r})
store.close()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {{"litellm", "PySide6", "qasync"}})
assert not heavy, heavy
print(" ".join(sorted(f"{{f.kind}}:{{f.rule}}" for f in report.findings)))
"""


async def test_a_health_check_needs_neither_qt_nor_litellm(
    isolated_home: Path, scripted_server: ScriptedServer
) -> None:
    store = Store(paths.database_path())
    responder = scripted(root=[repl("print(total)"), repl("print(total)"), repl("FINAL('9')")])
    session_id = await recorded(store, scripted_server, responder, documents=[NOTE])
    store.close()
    done = run_without_qt(SCRIPT.format(session_id=session_id), home=isolated_home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "short_input:direct_would_do",
        "weak_coder:error_share",
        "weak_coder:repeated_error",
    ]
