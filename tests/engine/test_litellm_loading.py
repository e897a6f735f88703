"""litellm's one import: made once however many threads ask, and without the collector's passes
over its ~250,000 new objects (they cost about a fifth of the import's CPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli import ROOT, isolated_env, run_python

SCRIPT = """
import gc, threading
from rlm_desktop.engine import litellm_loader

passes = []
gc.callbacks.append(lambda phase, info: passes.append(info["generation"]) if phase == "start" else None)
loaded = []
threads = [threading.Thread(target=lambda: loaded.append(litellm_loader.load_litellm())) for _ in range(3)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(passes), len({id(module) for module in loaded}), len(loaded), gc.isenabled(), gc.get_freeze_count() > 0)
"""


def test_litellm_is_imported_once_without_the_collector_and_the_collector_is_back_after(
    isolated_home: Path,
) -> None:
    done = run_python("-c", SCRIPT, home=isolated_home)

    assert done.returncode == 0, done.stderr
    passes, modules, loads, enabled, frozen = done.stdout.split()
    assert (passes, modules, loads, enabled, frozen) == ("0", "1", "3", "True", "True")


DOTENV_PROBE = """
import os
from rlm_desktop.engine import litellm_loader

litellm_loader.load_litellm()
print(os.environ.get("OPENAI_API_KEY", "-"), os.environ.get("LITELLM_LOG", "-"))
"""


def test_a_dotenv_file_where_the_app_starts_does_not_reach_its_environment(
    isolated_home: Path, tmp_path: Path
) -> None:
    """litellm's import had read `.env` from the working directory: a key or a setting from
    whatever folder the app was started in."""
    folder = tmp_path / "somewhere"
    folder.mkdir()
    (folder / ".env").write_text(
        "OPENAI_API_KEY=sk-from-a-dotenv\nLITELLM_LOG=DEBUG\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-c", DOTENV_PROBE],
        cwd=folder,
        env=isolated_env(isolated_home, {"PYTHONPATH": str(ROOT)}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["-", "-"]
