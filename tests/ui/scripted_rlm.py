"""Scripted model behaviour for end-to-end UI runs against the scripted server.

The root fans out LLM sub-calls, starts one recursive child (which has its own REPL at depth 2
and makes one LLM call of its own), then answers. Requests are told apart by their text, as a
real model would see them.
"""

from __future__ import annotations

from typing import Any

from tests.scripted_server import Reply, last_user_text, system_text

ANSWER = "The launch moved to 14 March."
ROOT_TURN_1 = """I will split the memos and ask about each.
```repl
parts = context if isinstance(context, list) else [context]
summaries = llm_query_batched([f"Summarise: {p[:300]}" for p in parts[:FANOUT]])
print("summaries:", len(summaries))
print(summaries[0])
detail = rlm_query("Dig into the launch date", context=parts[0])
print("child:", detail)
```"""
ROOT_TURN_2 = f"""The child confirmed it.
```repl
FINAL("{ANSWER}")
```"""
CHILD_TURN = """```repl
found = llm_query("When is the launch? " + context[:200])
FINAL("child found: " + found)
```"""


def _is_rlm(request: dict[str, Any]) -> bool:
    return "REPL" in system_text(request)


def _first_user(request: dict[str, Any]) -> str:
    for message in request.get("messages", []):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def make_responder(fanout: int = 3, sub_delay_s: float = 0.0) -> Any:
    """A responder for `ScriptedServer.respond_with`."""

    def respond(request: dict[str, Any]) -> str | Reply:
        if not _is_rlm(request):
            text = last_user_text(request)
            if text.startswith("When is the launch"):
                return "14 March"
            return Reply(content=f"summary of {len(text)} characters", delay_s=sub_delay_s)
        turns = sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")
        if "Dig into the launch date" in _first_user(request):
            return CHILD_TURN
        if turns == 0:
            return ROOT_TURN_1.replace("FANOUT", str(fanout))
        return ROOT_TURN_2

    return respond
