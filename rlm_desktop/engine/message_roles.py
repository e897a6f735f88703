"""Message lists every common chat template accepts, derived from the conversation the engine built.

A local server renders the messages through the model's chat template, and many templates refuse
what the engine's conversation naturally holds: Gemma's, Mistral's and Llama 2's refuse two turns
of one role in a row ("Conversation roles must alternate user/assistant/user/assistant/...") or
any turn before the first user turn, and some have no system role (Gemma 1 and 2's templates
raise "System role not supported"; llama-cpp-python's built-in `gemma` format drops the system
message without a word). The engine's own lists have two user turns in a row where a turn's
observation is followed by a request of the app's (the last answer, a compaction's summary).

`sendable_messages` turns such a list into one where the roles alternate user/assistant after an
optional leading system message: consecutive turns of one role are merged (their texts joined by
a blank line, in order, nothing dropped), a system message after the start counts as a user turn,
and, when the profile says the model has no system role (`Profile.system_role`), the system
prompt opens the first user turn inside `<instructions>` tags. It is applied once, to what each
request sends (`Runtime`); the conversation the engine keeps, records (`CallOpened`, the message
count of `LLMRequestSent`) and hands the REPL as `history` stays as it built it, and the store
rebuilds what each request sent with this same function (`store.messages`).
"""

from __future__ import annotations

from collections.abc import Sequence

Message = dict[str, str]

TURN_SEPARATOR = "\n\n"
FOLDED_SYSTEM = "<instructions>\n{system}\n</instructions>"
"""How the system prompt reads at the top of the first user turn when the model has none."""
OPENING_TURN = "Continue."
"""The user turn put before a conversation that would otherwise open with the assistant's."""


def sendable_messages(messages: Sequence[Message], *, system_role: bool = True) -> list[Message]:
    """`messages` as every common chat template accepts them: an optional system message, then
    user and assistant turns alternating from a user turn (see the module's docstring).

    Idempotent: a list it returns comes back unchanged. The messages given are not modified.
    """
    system, turns = _leading_system(messages)
    merged = _merged(turns)
    if system is not None and not system_role:
        folded = FOLDED_SYSTEM.format(system=system["content"])
        if merged and merged[0]["role"] == "user":
            first = merged[0]
            merged[0] = {**first, "content": _joined([folded, first["content"]])}
        else:
            merged.insert(0, {"role": "user", "content": folded})
        system = None
    elif merged and merged[0]["role"] != "user":
        merged.insert(0, {"role": "user", "content": OPENING_TURN})
    return ([system] if system is not None else []) + merged


def _leading_system(messages: Sequence[Message]) -> tuple[Message | None, list[Message]]:
    """The system messages at the start as one (None when there is none), and the turns after
    them; a later system message is a user turn (templates take a system message only first)."""
    count = next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))
    leading = messages[:count]
    system = (
        {**leading[0], "content": _joined([m["content"] for m in leading])} if leading else None
    )
    turns = [
        {**message, "role": "user"} if message["role"] == "system" else dict(message)
        for message in messages[count:]
    ]
    return system, turns


def _merged(turns: list[Message]) -> list[Message]:
    """Consecutive turns of one role as one turn, in order."""
    merged: list[Message] = []
    for turn in turns:
        if merged and merged[-1]["role"] == turn["role"]:
            previous = merged[-1]
            merged[-1] = {**previous, "content": _joined([previous["content"], turn["content"]])}
        else:
            merged.append(turn)
    return merged


def _joined(texts: Sequence[str]) -> str:
    """The texts in order, a blank line between them (an empty text adds nothing)."""
    return TURN_SEPARATOR.join(text for text in texts if text)
