"""A scripted long RLM run: the model works through many turns, each printing a page of output.

The turn a request belongs to cannot be read from its messages once the history is compacted
(fewer assistant messages than turns), so the script counts the root's turn requests instead; a
summary request (its last user turn ends with the compaction's request, sent after the last
observation) gets a summary that names the results.
"""

from __future__ import annotations

import threading
from typing import Any

from rlm_desktop.engine.compaction import SUMMARY_REQUEST
from tests.scripted_rlm import asked, repl
from tests.scripted_server import Reply, last_user_text

PAGE = 1_500
"""Characters each turn prints, about 375 tokens at the scripted server's count."""
FINAL_CODE = (
    "found = [m['content'] for m in history if 'step_0 = 0' in m.get('content', '')]\n"
    "print('searchable', len(found) > 0, len(history))\n"
    "FINAL(f'steps: {step_count()}')"
)


def turn_code(n: int) -> str:
    """Turn `n`'s cell: a result kept in a variable and a page of output."""
    return f"step_{n} = {n}\nprint('{n % 10}' * {PAGE})"


class LongRun:
    """A responder for `ScriptedServer.respond_with`: `turns` turns, the last one answering."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.summaries = 0
        self.turn_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> str | Reply:
        seen = asked(request)
        if seen.kind != "rlm":
            return Reply(status=400, content="the long run makes no sub-calls")
        with self._lock:
            if last_user_text(request).endswith(SUMMARY_REQUEST):
                self.summaries += 1
                done = sum(1 for _ in self.turn_requests)
                return f"Summary: steps 0 to {done - 1} are done; step_N holds N. Next: go on."
            turn = len(self.turn_requests)
            self.turn_requests.append(request)
        if turn == 0:
            helper = (
                "def step_count():\n    return len([k for k in globals() if k.startswith('step_')])"
            )
            return repl(helper + "\n" + turn_code(0))
        if turn < self.turns - 1:
            return repl(turn_code(turn))
        return repl(FINAL_CODE)
