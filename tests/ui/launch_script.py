"""Scripted model behaviour for end-to-end UI runs against the scripted server.

The root fans out LLM sub-calls, starts one recursive child (which has its own REPL at depth 2
and makes one LLM call of its own), then answers. `tests.scripted_rlm` tells the requests apart.
"""

from __future__ import annotations

from tests.scripted_rlm import Responder, scripted
from tests.scripted_server import Reply

ANSWER = "The launch moved to 14 March."
CHILD_PROMPT = "Dig into the launch date"
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


def make_responder(fanout: int = 3, sub_delay_s: float = 0.0) -> Responder:
    """A responder for `ScriptedServer.respond_with`."""

    def sub(prompt: str) -> str | Reply:
        if prompt.startswith("When is the launch"):
            return "14 March"
        return Reply(content=f"summary of {len(prompt)} characters", delay_s=sub_delay_s)

    return scripted(
        {CHILD_PROMPT: [CHILD_TURN]},
        sub,
        root=[ROOT_TURN_1.replace("FANOUT", str(fanout)), ROOT_TURN_2],
    )
