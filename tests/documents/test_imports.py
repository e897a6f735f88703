"""The documents package is Qt-free and does not pay for litellm's import.

Qt is blocked outright (as if not installed). litellm must stay findable, because its package
folder holds the tokenizer files, but it must never be imported.
"""

from __future__ import annotations

from pathlib import Path

from tests.qt_free import run_without_qt


def test_documents_load_with_qt_and_litellm_blocked(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / "a.txt").write_text("some text\n", encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>page</p>", encoding="utf-8")
    script = f"""
        import sys
        from rlm_desktop.documents import load_paths
        result = load_paths([{str(tmp_path)!r}])
        assert [d.text for d in result.documents] == ["some text\\n", "page"], result
        assert not result.totals.estimated
        heavy = {{"pypdf", "docx", "pptx", "odfdo", "ebooklib", "striprtf", "PySide6", "litellm"}}
        heavy &= set(sys.modules)
        assert not heavy, heavy
        print("ok")
    """
    done = run_without_qt(script, home=isolated_home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
