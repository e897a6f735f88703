"""What `rlm-desktop run` loads on its way to the first request, seen from a process of its own.

The command is run as a user runs it (a subprocess against the scripted server), with a probe
beside it that only watches: Python's audit hook and `atexit` read `sys.modules`, nothing of ours
is replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_python
from tests.engine.scripting import TEST_MODEL
from tests.scripted_server import ScriptedServer

PROBE = """
import atexit, json, runpy, sys

seen = {"litellm_when_store_opened": None}

def audit(event, args):
    if event == "sqlite3.connect" and str(args[0]).endswith("sessions.db"):
        if seen["litellm_when_store_opened"] is None:
            seen["litellm_when_store_opened"] = "litellm" in sys.modules

def report():
    seen["modules"] = sorted({name.partition(".")[0] for name in sys.modules})
    with open(probe_out, "w", encoding="utf-8") as out:
        json.dump(seen, out)

sys.addaudithook(audit)
atexit.register(report)
probe_out = sys.argv[1]
sys.argv = ["rlm-desktop", *sys.argv[2:]]
runpy.run_module("rlm_desktop", run_name="__main__", alter_sys=True)
"""

NEVER_ON_THE_WAY = {
    # the window and its plots
    "PySide6", "shiboken6", "qasync", "pyqtgraph",
    # the cluster
    "ray",
    # OCR
    "onnxruntime", "rapidocr_onnxruntime", "cv2", "PIL", "shapely", "pyclipper",
    # the parsers of formats a text folder does not hold
    "pypdf", "pypdfium2", "docx", "python_calamine", "pptx", "odfdo", "ebooklib", "striprtf",
    "extract_msg", "openpyxl",
}  # fmt: skip


@pytest.fixture
def text_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    for number in range(5):
        lines = (f"report {number} line {line}: nothing to note.\n" for line in range(200))
        (folder / f"report-{number}.txt").write_text("".join(lines), encoding="utf-8")
    return folder


def probed_run(
    server: ScriptedServer, folder: Path, home: Path, tmp_path: Path
) -> tuple[dict[str, object], dict[str, object]]:
    """`rlm-desktop run --json` over `folder`; its JSON and what the probe saw."""
    server.respond_with(lambda request: "```repl\nFINAL('report-3.txt')\n```")
    seen = tmp_path / "seen.json"
    done = run_python(
        "-c", PROBE, str(seen), "run", "--api-base", server.base_url, "--model", TEST_MODEL,
        "--query", "Which report?", "--doc", str(folder), "--mode", "rlm", "--json",
        home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), json.loads(seen.read_text(encoding="utf-8"))


def test_a_run_over_a_text_folder_never_imports_qt_ray_plots_ocr_or_other_parsers(
    scripted_server: ScriptedServer, text_folder: Path, isolated_home: Path, tmp_path: Path
) -> None:
    output, seen = probed_run(scripted_server, text_folder, isolated_home, tmp_path)

    assert (output["status"], output["answer"]) == ("completed", "report-3.txt")
    modules = set(seen["modules"])  # type: ignore[arg-type]
    assert "litellm" in modules  # the probe saw the run's own imports
    assert not modules & NEVER_ON_THE_WAY, sorted(modules & NEVER_ON_THE_WAY)


def test_litellm_is_already_loading_when_the_session_database_opens(
    scripted_server: ScriptedServer, text_folder: Path, isolated_home: Path, tmp_path: Path
) -> None:
    """litellm's import (seconds) runs beside the documents' loading and the store's opening,
    not after them."""
    output, seen = probed_run(scripted_server, text_folder, isolated_home, tmp_path)

    assert output["status"] == "completed"
    assert seen["litellm_when_store_opened"] is True
