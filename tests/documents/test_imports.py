"""The documents package is Qt-free and does not pay for litellm's import.

Qt is blocked outright (as if not installed). litellm must stay findable, because its package
folder holds the tokenizer files, but it must never be imported.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_documents_load_with_qt_and_litellm_blocked(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("some text\n", encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>page</p>", encoding="utf-8")
    script = textwrap.dedent(f"""
        import sys
        from importlib.abc import MetaPathFinder

        class Block(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {{"PySide6", "qasync", "shiboken6"}}:
                    raise ImportError("blocked in this test: " + name)
                return None

        sys.meta_path.insert(0, Block())
        from rlm_desktop.documents import load_paths
        result = load_paths([{str(tmp_path)!r}])
        assert [d.text for d in result.documents] == ["some text\\n", "page"], result
        assert not result.tokens_estimated
        heavy = {{"pypdf", "docx", "PySide6", "litellm"}} & set(sys.modules)
        assert not heavy, heavy
        print("ok")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
