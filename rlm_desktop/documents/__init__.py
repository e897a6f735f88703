"""Documents: load files and folders into text with metadata, ready for the engine. Qt-free.

    result = load_paths([Path("report.pdf"), Path("repo/")], LoadOptions(model="openai/gpt-5-mini"))
    result.documents   # Document(name, path, type, size, sha256, chars, tokens, ..., text)
    result.skipped     # Skipped(path, reason): files left out of folders, and why
    result.errors      # LoadError(path, message): named paths that could not be loaded

Heavy parsers (pypdf, python-docx, charset-normalizer, tiktoken) are imported only when needed;
litellm and Qt are never imported. PDF, office, e-book, mail and image files are parsed in a
worker process with a time and a memory bound (`reader`); links that lead out of a loaded folder are not followed (`walk`).

The names below are loaded when first used, so that the reader process, which imports one
parser module of this package, does not load the loader chain (asyncio among it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlm_desktop.lazy import lazy_exports

if TYPE_CHECKING:
    from rlm_desktop.documents.formats import DOCUMENT_TYPES
    from rlm_desktop.documents.loader import load_paths
    from rlm_desktop.documents.model import (
        Document,
        LoadError,
        LoadOptions,
        LoadResult,
        Skipped,
        human_size,
    )
    from rlm_desktop.documents.token_counts import count_tokens

_HOMES = {
    "DOCUMENT_TYPES": "formats",
    "Document": "model",
    "LoadError": "model",
    "LoadOptions": "model",
    "LoadResult": "model",
    "Skipped": "model",
    "count_tokens": "token_counts",
    "human_size": "model",
    "load_paths": "loader",
}

__all__ = [
    "DOCUMENT_TYPES",
    "Document",
    "LoadError",
    "LoadOptions",
    "LoadResult",
    "Skipped",
    "count_tokens",
    "human_size",
    "load_paths",
]


__getattr__ = lazy_exports(__name__, _HOMES)
