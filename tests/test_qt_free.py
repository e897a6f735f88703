"""The Qt-free packages outside the engine, documents and store import with Qt blocked.

`review` (the call tree the GUI adapts), `exports` (a session written out), `providers` (keys,
the model list, the provider map) and `formatting` serve the GUI, the CLI and the exports alike;
every module of theirs must import as if PySide6 were not installed, and none may load Qt, qasync
or litellm.
"""

from __future__ import annotations

from pathlib import Path

from tests.qt_free import run_without_qt

SCRIPT = """
import importlib
import pkgutil
import sys

import rlm_desktop.exports
import rlm_desktop.formatting
import rlm_desktop.providers
import rlm_desktop.review

for package in (rlm_desktop.exports, rlm_desktop.providers, rlm_desktop.review):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"PySide6", "qasync", "litellm"})
assert not heavy, heavy
print(" ".join(m for m in sys.modules if m.startswith("rlm_desktop.")))
"""


def test_review_providers_and_formatting_import_without_qt(isolated_home: Path) -> None:
    done = run_without_qt(SCRIPT, home=isolated_home)
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert {
        "rlm_desktop.exports.otlp_proto",
        "rlm_desktop.formatting",
        "rlm_desktop.providers.catalog",
        "rlm_desktop.providers.keys",
        "rlm_desktop.providers.registry",
        "rlm_desktop.review.call_nodes",
        "rlm_desktop.review.call_tree",
    } <= imported
