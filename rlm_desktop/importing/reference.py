"""The official library's `RLMLogger` JSONL (`rlms`): a `metadata` line, then one `iteration`
line per turn of the root call, sub-calls (and recursive calls' own iterations) inside.

What the log does not hold is said in `left_out`: the documents, the root call's usage, when
each sub-call started (rebuilt from the execution times, in order, inside their cell).
"""

from __future__ import annotations

from rlm_desktop.importing.reading import Entry, Refusal
from rlm_desktop.importing.trajectory import Trajectory, Turn
from rlm_desktop.importing.walk import Walker

LEFT_OUT = (
    "documents: the log does not carry them (no coverage, verified sources or preview)",
    "the root call's token usage and cost: the log records only its sub-calls'",
    "when each sub-call started: rebuilt from execution times, in order within its cell",
    "times are the log's local clock, read as this machine's",
)
_QUESTION = "Answer the following: "


def iterations(entries: list[Entry]) -> list[Entry]:
    """The entries after the metadata line, each an `iteration` line."""
    for entry in entries[1:]:
        if entry.get("type") != "iteration":
            raise entry.fail(f"is not an iteration line (its type is {entry.get('type')!r})")
    return entries[1:]


def read(entries: list[Entry]) -> Trajectory:
    """The run an `RLMLogger` log records."""
    meta = entries[0]
    walker = Walker(meta.text("backend"), reference=True)
    model = walker.model_name(meta.text("root_model"))
    root = walker.new_call(Entry(meta.line, {}), "rlm", 1, model, "", None)
    turns = iterations(entries)
    walker.turns(root, turns)
    query = _question(root.opening)
    root.prompt = query
    trajectory = Trajectory(
        source="rlms", query=query, model=model, root=root, sub_model=model,
        settings=_settings(meta), started_at=_first_time(root.turns),
        left_out=list(LEFT_OUT),
    )  # fmt: skip
    ended(trajectory)
    return trajectory


def ended(trajectory: Trajectory) -> None:
    """How a run whose log says nothing of its end ended: answered, out of turns (the answer it
    was asked for after its last turn), or stopped without an answer (the log does not say why)."""
    root = trajectory.root
    if root.answer is not None and root.answer_source != "partial":
        trajectory.status, root.status = "completed", "ok"
    elif root.answer is not None:
        trajectory.status, root.status, trajectory.answer_kind = (
            "max_turns",
            "max_turns",
            "last_reply",
        )
    else:
        trajectory.status, root.status, trajectory.answer_kind = "error", "error", "none"
        trajectory.error = root.error = (
            "the log ends without an answer: the run failed or was stopped (the log does not say why)"
        )
    trajectory.answer = root.answer or ""
    root.response = root.answer or ""


def _question(opening: list[dict[str, str]]) -> str:
    """The question, as the reference puts it in its first user message."""
    for message in opening:
        if message["role"] == "user" and message["content"].startswith(_QUESTION):
            return message["content"][len(_QUESTION) :].split("\n\nYour context is", 1)[0]
    users = [message["content"] for message in opening if message["role"] == "user"]
    return users[0] if users else ""


def _settings(meta: Entry) -> dict[str, object]:
    backend = meta.child("backend_kwargs")
    depth, turns = meta.get("max_depth"), meta.get("max_iterations")
    for key, value in (("max_depth", depth), ("max_iterations", turns)):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            raise Refusal(meta.line, f"its {key!r} is not a whole number of at least 0")
    return {
        "api_base": backend.optional_text("base_url") if backend is not None else None,
        "budget": {"max_depth": depth, "max_turns": turns},
        "environment": meta.optional_text("environment_type"),
        "system_role": True,
    }


def _first_time(turns: list[Turn]) -> float | None:
    return next((turn.started_at for turn in turns if turn.started_at is not None), None)
