"""Token counts with the tiktoken encodings bundled inside the litellm package.

litellm ships cl100k_base, o200k_base and p50k_base so that it never downloads a tokenizer; we read
the same files without importing litellm (which takes seconds) and never touch the network: an
encoding whose bundled file is missing or altered is not used. OpenAI models get their own encoding
and exact counts. Other models are counted with cl100k_base, as litellm itself does, and the count
is marked as an estimate. Huge inputs are estimated from evenly spaced samples.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tiktoken import Encoding

EXACT_CHARS = 1_000_000
"""`count_tokens` tokenises texts up to this length exactly, and samples longer ones."""

CHARS_PER_TOKEN = 4.0
"""The rule-of-thumb ratio used when no tokenizer is available at all."""

_SAMPLES = 16
_SAMPLE_CHARS = 4096
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
    try:
        spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


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


def sample(encoding: Encoding, text: str) -> tuple[int, int]:
    """Tokens and characters in evenly spaced windows of a long text (to estimate its ratio).

    Windows grow with the text, from 512 to 4,096 characters each, and are trimmed to whitespace
    so that no word is cut in two (a cut word costs extra tokens and would bias the estimate).
    """
    width = min(_SAMPLE_CHARS, max(512, len(text) // (_SAMPLES * 64)))
    step = max(1, (len(text) - width) // (_SAMPLES - 1))
    tokens = chars = 0
    for start in range(0, max(1, len(text) - width + 1), step)[:_SAMPLES]:
        window = text[start : start + width]
        first, last = window.find(" "), window.rfind(" ")
        if 0 <= first < last:
            window = window[first + 1 : last]
        tokens += len(encoding.encode_ordinary(window))
        chars += len(window)
    return tokens, max(chars, 1)


class TokenTally:
    """Counts tokens over a whole load: exactly within a character budget, then estimated.

    Past the budget, a long document is estimated from samples of itself and a short one from the
    tokens-per-character ratio measured so far for its document type, so a folder of thousands of
    files costs little more than reading them.
    """

    def __init__(self, model: str, exact_chars: int) -> None:
        self._model = model
        self._budget = exact_chars
        self._seen: dict[str, tuple[int, int]] = {}

    def _learn(self, kind: str, tokens: int, chars: int) -> None:
        known = self._seen.get(kind, (0, 0))
        self._seen[kind] = (known[0] + tokens, known[1] + chars)

    def count(self, text: str, kind: str) -> tuple[int, bool]:
        """Tokens in one document's text and whether that number is an estimate."""
        if not text:
            return 0, False
        encoding, own = tokenizer_for(self._model)
        size = len(text)
        if encoding is None:
            return math.ceil(size / CHARS_PER_TOKEN), True
        enough = _SAMPLES * _SAMPLE_CHARS
        known_tokens, known_chars = self._seen.get(kind, (0, 0))
        if size <= self._budget or (size <= enough and known_chars < enough):
            self._budget = max(0, self._budget - size)
            tokens = encoded_length(encoding, text)
            self._learn(kind, tokens, size)
            return tokens, not own
        if size > enough:
            sampled_tokens, sampled_chars = sample(encoding, text)
            self._learn(kind, sampled_tokens, sampled_chars)
            return round(size * sampled_tokens / sampled_chars), True
        return max(1, round(size * known_tokens / known_chars)), True


def count_tokens(text: str, model: str) -> tuple[int, bool]:
    """Tokens in `text` for `model`, and whether that number is an estimate.

    Exact up to `EXACT_CHARS` characters with the model's own encoding; sampled beyond.
    """
    return TokenTally(model, EXACT_CHARS).count(text, "text")
