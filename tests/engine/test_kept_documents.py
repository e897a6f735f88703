"""A run's documents kept on disk (`KeptDocuments`): each read back exactly as it was loaded,
from any thread, and the file gone once closed."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlm_desktop.engine import ContextDocument
from rlm_desktop.engine.context import ContextSection
from rlm_desktop.engine.kept_documents import KeptDocuments, KeptTexts, chars_of, texts_of
from rlm_desktop.engine.prompts import describe_context

TEXTS = ["plain text\n", "ünïcödé → 日本語 🦩", "a lone surrogate \udc80 from a broken file", ""]


def documents() -> list[ContextDocument]:
    return [
        ContextDocument(
            name=f"d{n}.txt", text=text, path=f"/docs/d{n}.txt", tokens=n, type="text",
            sections=(ContextSection("page", "1", 0, len(text)),),
        )
        for n, text in enumerate(TEXTS)
    ]  # fmt: skip


def test_each_document_reads_back_as_it_was_loaded(tmp_path: Path) -> None:
    loaded = documents()
    kept = KeptDocuments(loaded, tmp_path)

    assert list(kept) == loaded
    assert list(texts_of(kept)) == TEXTS
    assert chars_of(kept) == [len(text) for text in TEXTS]
    assert kept.metas == [document.meta() for document in loaded]
    view = kept.texts[1:3]
    assert isinstance(view, KeptTexts)
    assert list(view) == TEXTS[1:3]
    assert view.total_chars == len(TEXTS[1]) + len(TEXTS[2])
    assert describe_context(kept.texts) == describe_context(TEXTS)
    if os.name == "posix":  # unlinked at once (Windows removes it when it is closed)
        assert list(tmp_path.iterdir()) == []
    kept.close()
    with pytest.raises(ValueError, match="closed file"):
        kept.texts[0]


def test_threads_reading_at_once_each_get_their_own_document(tmp_path: Path) -> None:
    many = [ContextDocument(name=f"{n}", text=f"{n} " * (1_000 + n)) for n in range(200)]
    kept = KeptDocuments(many, tmp_path)

    with ThreadPoolExecutor(4) as pool:
        read = list(pool.map(lambda n: kept.texts[n], [*range(200), *reversed(range(200))]))

    assert read == [d.text for d in many] + [d.text for d in reversed(many)]
    kept.close()


def test_a_folder_that_cannot_take_the_file_is_an_os_error(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")

    with pytest.raises(NotADirectoryError):
        KeptDocuments(documents(), not_a_folder)
