"""What a WebAssembly Python can hold: a context too large for it is refused before the run.

A guest is a wasm32 program: its memory is at most 4 GiB, and less when the run's memory limit
is lower. Receiving the context takes about twice its UTF-8 size in the guest for a moment (the
message, then the text made from it), and the guest's memory never shrinks; measured with
`make bench` (a 100 MB context grew a guest by ~220 MB). `CONTEXT_FACTOR` leaves room beyond
that for the model's own work.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlm_desktop.engine.config import ConfigError

WASM32_BYTES = 4 * 2**30
CONTEXT_FACTOR = 3
HEADROOM_BYTES = 256 * 2**20
"""The interpreter, the standard library and a cell's first work."""


def guest_ceiling(memory_limit_mb: int | None) -> int:
    """The most memory one guest may have, in bytes."""
    limit = memory_limit_mb * 2**20 if memory_limit_mb else WASM32_BYTES
    return min(limit, WASM32_BYTES)


def refuse_oversized_context(texts: Iterable[str], memory_limit_mb: int | None) -> None:
    """Raise `ConfigError` (setting `sandbox`) when the documents' text cannot fit a guest."""
    ceiling = guest_ceiling(memory_limit_mb)
    if ceiling < HEADROOM_BYTES:
        raise ConfigError(
            f"is too small for the WebAssembly sandbox ({_size(ceiling)}): a WebAssembly Python "
            f"needs at least {_size(HEADROOM_BYTES)}",
            "memory_limit_mb",
        )
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    if size * CONTEXT_FACTOR + HEADROOM_BYTES <= ceiling:
        return
    raise ConfigError(
        f"wasm: the documents' {_size(size)} of text are too large for the WebAssembly sandbox "
        f"(a guest holds {_size(ceiling)} and needs about {CONTEXT_FACTOR} times the text); "
        "use --sandbox kernel where the system has one, or fewer documents",
        "sandbox",
    )


def _size(count: int) -> str:
    return f"{count / 1e9:.1f} GB" if count >= 1e9 else f"{count / 1e6:.0f} MB"
