"""A scripted model for RLM runs: what each chat request is, told apart in one place.

The engine sends three kinds of chat request, and a scripted model tells them apart by their
messages, as a real model would see them:

- a turn of an RLM call: a system prompt, then a first user message `Question: <prompt>` (the run's
  query for the root, the `rlm_query` prompt for a child); turn n follows n assistant replies;
- an `llm_query` sub-call (or an `rlm_query` past the depth limit): one user message, no system
  prompt;
- a direct answer (`direct` mode, or `auto` on a short input): a system prompt and one user message
  holding the documents, the question last.

A system prompt sent at the top of the first user turn (a profile with `system_role = false`) reads
as a system prompt.

`scripted` builds a responder for `ScriptedServer.respond_with` (or `ServerProcess`) from the
replies alone: the turns of each RLM call by its prompt, and the replies of sub-calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rlm_desktop.engine.message_roles import FOLDED_SYSTEM, TURN_SEPARATOR
from tests.scripted_server import Reply, ScriptedServer, last_user_text, system_text

QUESTION = "Question: "
CONTEXT_LINE = "\n\n`context` is "
EXHAUSTED = "the test script has no reply for this turn"

Kind = Literal["rlm", "sub", "direct"]
Turns = Sequence[str | Reply]
SubReply = Callable[[str], "str | Reply"]
Responder = Callable[[dict[str, Any]], "str | Reply"]


@dataclass(frozen=True)
class Asked:
    """One chat request, as the scripted model reads it."""

    kind: Kind
    prompt: str
    """The RLM call's question (its `Question:` line), or the text of a sub-call or direct call."""
    turn: int
    """The 0-based turn of an RLM call: the replies it already had (0 for the other kinds)."""


FOLDED_OPENS, FOLDED_CLOSES = FOLDED_SYSTEM.split("{system}")


def _first_user_text(request: dict[str, Any]) -> str:
    for message in request.get("messages", []):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def opening(request: dict[str, Any]) -> tuple[str, str]:
    """(system prompt, first user text) of a request, the system prompt read out of the first user
    turn where it was folded there."""
    system, first = system_text(request), _first_user_text(request)
    if system or not first.startswith(FOLDED_OPENS) or FOLDED_CLOSES not in first:
        return system, first
    folded, _, rest = first.removeprefix(FOLDED_OPENS).partition(FOLDED_CLOSES)
    return folded, rest.removeprefix(TURN_SEPARATOR)


def turn_of(request: dict[str, Any]) -> int:
    """The 0-based turn of an RLM call's request (the replies it already had)."""
    return sum(1 for message in request.get("messages", []) if message.get("role") == "assistant")


def asked(request: dict[str, Any]) -> Asked:
    """What `request` is: an RLM call's turn, a sub-call or a direct answer."""
    system, first = opening(request)
    if not system:
        return Asked("sub", last_user_text(request), 0)
    if not first.startswith(QUESTION):
        return Asked("direct", first, 0)
    question = first.removeprefix(QUESTION).split(CONTEXT_LINE, 1)[0]
    return Asked("rlm", question, turn_of(request))


def is_sub_call(request: dict[str, Any]) -> bool:
    """True for an `llm_query` request."""
    return asked(request).kind == "sub"


def question_of(request: dict[str, Any]) -> str:
    """The prompt of the RLM call that sent this request ("" for any other request)."""
    seen = asked(request)
    return seen.prompt if seen.kind == "rlm" else ""


def repl(code: str, prose: str = "Let me run some code.") -> str:
    """A model reply with one ```repl block."""
    return f"{prose}\n```repl\n{code}\n```"


def scripted(
    calls: Mapping[str, Turns] | None = None,
    sub: SubReply | str | Reply = "sub-answer",
    *,
    root: Turns = (),
) -> Responder:
    """A responder: each RLM call gets its turns in order, sub-calls get `sub` (or `sub(prompt)`).

    `calls` holds the turns of RLM calls by prompt (the root's prompt is the run's query);
    `root` holds those of any RLM call whose prompt `calls` does not name, for a script that does
    not repeat the query. A turn past the end of a call's script, or a direct call, gets an HTTP
    400 that says so, so a test that goes off its script fails visibly.
    """
    named = dict(calls or {})

    def respond(request: dict[str, Any]) -> str | Reply:
        seen = asked(request)
        if seen.kind == "sub":
            return sub if isinstance(sub, str | Reply) else sub(seen.prompt)
        if seen.kind == "direct":
            return Reply(status=400, content="the test script has no direct answer")
        turns = named.get(seen.prompt, root)
        return turns[seen.turn] if seen.turn < len(turns) else Reply(status=400, content=EXHAUSTED)

    return respond


def rlm_requests(server: ScriptedServer, question: str) -> list[dict[str, Any]]:
    """The requests of the RLM call asked `question`, in turn order."""
    found = [r for r in server.chat_requests() if question_of(r) == question]
    return sorted(found, key=turn_of)


def sub_requests(server: ScriptedServer) -> list[dict[str, Any]]:
    """The `llm_query` requests received so far, in arrival order."""
    return [r for r in server.chat_requests() if is_sub_call(r)]
