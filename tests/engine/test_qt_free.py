"""The engine imports without Qt, and imports litellm only once a run starts."""

from __future__ import annotations

from pathlib import Path

from tests.qt_free import run_without_qt

SCRIPT = """
import asyncio
import sys

import rlm_desktop.engine as engine
from rlm_desktop import paths
from tests.scripted_server import ScriptedServer

def heavy():
    return sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in {"litellm", "openai"}})

assert heavy() == [], heavy()
server = ScriptedServer().start()
server.enqueue("```repl\\nFINAL(len(context))\\n```")
config = engine.RunConfig(
    query="How long?", model="openai/test-model", api_base=server.base_url, mode="rlm"
)
run = engine.Run(
    config,
    [engine.ContextDocument(name="a.txt", text="x" * 1234)],
    folders=paths.engine_folders(),
)
assert heavy() == [], heavy()
result = asyncio.run(run.execute())
print(result.status, result.answer, ",".join(heavy()))
server.stop()
"""


def test_engine_runs_with_qt_blocked_and_imports_litellm_lazily(isolated_home: Path) -> None:
    result = run_without_qt(SCRIPT, home=isolated_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["completed", "1234", "litellm,openai"]
