"""Which format a trajectory file is in, from its first line (or its one JSON document)."""

from __future__ import annotations

from rlm_desktop.importing import dspy
from rlm_desktop.importing.reading import RawFile, Refusal

FORMATS = ("rlm-desktop", "rlms", "dspy")
WHAT_IS_READ = "our JSONL export, an RLMLogger log (rlms) or a DSPy RLM trajectory"


def detect(raw: RawFile) -> str:
    """`rlm-desktop`, `rlms` or `dspy`; a `Refusal` for a file in none of them."""
    first = raw.entries[0]
    if raw.whole_document:
        data = first.data
        if isinstance(data, list) or (isinstance(data, dict) and isinstance(
                data.get("trajectory"), list)):  # fmt: skip
            return "dspy"
        raise Refusal(None, f"is JSON but not a trajectory: it can hold {WHAT_IS_READ}")
    kind = first.get("type")
    if kind == "metadata":
        return "rlm-desktop" if first.has("session_id") else "rlms"
    if dspy.is_step(first):
        return "dspy"
    if kind == "iteration":
        raise first.fail("is an iteration, but a log starts with its metadata line (cut at "
                         "its start?)")  # fmt: skip
    raise first.fail(f"is not the start of a trajectory: a file can hold {WHAT_IS_READ}")
