"""tiktoken encodings from the files bundled inside the litellm package, never downloaded.

litellm ships cl100k_base, o200k_base and p50k_base so that it never downloads a tokenizer; we read
the same files without importing litellm (which takes seconds) and never touch the network: an
encoding whose bundled file is missing or altered is not used. OpenAI models get their own
encoding; other models are counted with cl100k_base, as litellm itself does. The engine's budget
reservations and the document loader's counts both use this module.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_desktop.litellm_files import litellm_package_dir

if TYPE_CHECKING:
    from tiktoken import Encoding

_CHUNK_CHARS = 1 << 16
_FALLBACK = "cl100k_base"

# tiktoken caches each encoding under the SHA-1 of its download URL; the SHA-256 is of the content.
_BUNDLED = {
    "cl100k_base": (
        "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "p50k_base": (
        "p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
}
_BUNDLED["o200k_harmony"] = _BUNDLED["o200k_base"]
_URL = "https://openaipublic.blob.core.windows.net/encodings/"


def _bundled_dir() -> Path | None:
    package = litellm_package_dir()
    return package / "litellm_core_utils" / "tokenizers" if package is not None else None


def _verified(name: str, folder: Path) -> bool:
    file_name, sha256 = _BUNDLED[name]
    cached = folder / hashlib.sha1((_URL + file_name).encode()).hexdigest()
    try:
        return hashlib.sha256(cached.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


@lru_cache(maxsize=8)
def _load(name: str) -> Encoding | None:
    if name not in _BUNDLED:
        return None
    # Same setting litellm makes when imported, so both agree on where the encodings live.
    folder_text = os.environ.get("CUSTOM_TIKTOKEN_CACHE_DIR")
    bundled = _bundled_dir()
    folder = Path(folder_text) if folder_text else bundled
    if folder is None or not _verified(name, folder):
        return None
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception:  # an unknown tiktoken version: estimates are better than no count
        return None


@lru_cache(maxsize=64)
def tokenizer_for(model: str) -> tuple[Encoding | None, bool]:
    """The encoding to count `model`'s tokens with, and whether it is that model's own."""
    import tiktoken.model

    bare = model.rsplit("/", 1)[-1]
    try:
        name = tiktoken.model.encoding_name_for_model(bare)
    except KeyError:
        return _load(_FALLBACK), False
    encoding = _load(name)
    if encoding is None:
        return _load(_FALLBACK), False
    return encoding, True


def encoded_length(encoding: Encoding, text: str) -> int:
    """Exact token count, encoding in line-aligned chunks so memory stays small."""
    total, start, size = 0, 0, len(text)
    while start < size:
        end = min(start + _CHUNK_CHARS, size)
        if end < size:
            newline = text.rfind("\n", start, end)
            end = newline + 1 if newline > start else end
        total += len(encoding.encode_ordinary(text[start:end]))
        start = end
    return total
