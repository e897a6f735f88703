"""The messages each chat request of a saved session sent, rebuilt from what the store keeps.

An RLM call's conversation opens with its system prompt and first user message (`CallOpened`,
kept in `calls.system_sha256` and `calls.opening`); each turn's request sends the conversation so
far, and then the model's reply and the observation it was shown are added; a compaction (asked
before a turn) folds the older turns into the model's summary and a note, as `engine.compaction`
does; a call out of turns is asked once more for its answer (`answer_now`). Which of a turn's
requests is which is told by the number of messages each sent (`llm_requests.messages`), and a
rebuilt list whose length differs from that number is left out rather than guessed. What the
provider received is then derived from each list as the engine derived it (`engine.message_roles`:
turns of one role merged, and the system prompt in the first user turn for a run whose profile
said the model has no system role, its settings' `system_role`).

An LLM call sends its prompt as one user message, after the system prompt it recorded (a direct
answer has one). An RLM call saved before its opening was recorded gets no rebuilt lists: the
exports then fall back to the last user message alone.

The lists read as the tables do, since every other message comes from a text column: a string
UTF-8 cannot hold in the opening (a file name that is not UTF-8, in the first user message) has
each lone surrogate spelled as its escape (`caf\\udce9.txt`, `store.writer.stored_text`), so
every export that writes them writes UTF-8 and shows the name the same way; the event log keeps
the exact string.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from rlm_desktop.engine.compaction import COMPACTED_NOTE, HEAD, SUMMARY_REQUEST
from rlm_desktop.engine.message_roles import sendable_messages
from rlm_desktop.engine.rlm_call import answer_now
from rlm_desktop.store.prompts import with_prompt
from rlm_desktop.store.writer import stored_text

Row = dict[str, Any]
Message = dict[str, str]


@dataclass
class SentMessages:
    """What a call's requests sent: `requests` maps a request id to its messages (only those
    that could be rebuilt); `turns` maps an RLM call's turn to its turn request's id, and
    `answer_now` names the request that asked a call out of turns for its answer."""

    requests: dict[str, list[Message]] = field(default_factory=dict)
    turns: dict[int, str] = field(default_factory=dict)
    answer_now: str | None = None

    def of_turn(self, turn: int) -> list[Message] | None:
        """The messages turn `turn`'s request sent, when they could be rebuilt."""
        request = self.turns.get(turn)
        return self.requests.get(request) if request is not None else None


def opening_of(call: Row) -> list[Message] | None:
    """The messages a call's conversation opened with (system prompt first, when it had one),
    or None when they were not recorded (saved before they were, or the prompt's text is gone).

    `calls.opening` is JSON, which brings a lone surrogate back as it was; it is spelled here as
    the text columns the rest of the conversation comes from spell it. A long prompt taken out
    of it is put back (`prompts.with_prompt`: `call["prompt"]` is the whole prompt)."""
    if call.get("opening") is None:
        return None
    if call.get("system_sha256") is not None and call.get("system_prompt") is None:
        return None
    messages: list[Message] = []
    if call.get("system_prompt") is not None:
        messages.append({"role": "system", "content": str(call["system_prompt"])})
    opening = with_prompt(json.loads(call["opening"]), str(call.get("prompt") or ""))
    return messages + [
        {"role": stored_text(str(m["role"])), "content": stored_text(str(m["content"]))}
        for m in opening
    ]


def request_messages(
    call: Row,
    turns: list[Row],
    compactions: list[Row],
    requests: list[Row],
    max_turns: int | None,
    system_role: bool = True,
) -> SentMessages:
    """The messages of the requests of `call` that can be rebuilt.

    `turns`, `compactions` and `requests` are the call's rows in order; `max_turns` is the run's
    turn limit (what the last request of a call out of turns was told), `system_role` whether its
    requests sent a system message.
    """
    opening = opening_of(call)
    if call["kind"] == "llm":
        sent_once = [*(opening or []), {"role": "user", "content": str(call["prompt"] or "")}]
        sent = SentMessages({request["id"]: list(sent_once) for request in requests})
    elif opening is None:
        return SentMessages()
    else:
        sent = _Conversation(opening, turns, compactions, max_turns).rebuild(requests)
    counts = {request["id"]: request.get("messages") for request in requests}
    sent.requests = {
        key: sendable_messages(messages, system_role=system_role)
        for key, messages in sent.requests.items()
        if len(messages) == counts[key]
    }
    sent.turns = {turn: key for turn, key in sent.turns.items() if key in sent.requests}
    if sent.answer_now not in sent.requests:
        sent.answer_now = None
    return sent


class _Conversation:
    """One RLM call's conversation replayed turn by turn, as `RLMCall` built it."""

    def __init__(
        self,
        opening: list[Message],
        turns: list[Row],
        compactions: list[Row],
        max_turns: int | None,
    ) -> None:
        self.history = list(opening)
        self.turns = {turn["idx"]: turn for turn in turns}
        self.summaries = {row["turn"]: str(row["summary"] or "") for row in compactions}
        self.max_turns = max_turns
        self.compactions = 0

    def rebuild(self, requests: list[Row]) -> SentMessages:
        by_turn: defaultdict[int, list[Row]] = defaultdict(list)
        for request in requests:
            by_turn[request["turn"] if request["turn"] is not None else -1].append(request)
        last = requests[-1]["id"] if requests else None
        sent = SentMessages()
        for turn in sorted(by_turn):
            for request in by_turn[turn]:
                count, key = request.get("messages") or 0, request["id"]
                if turn in sent.turns:
                    sent.requests[key] = self._answer_now()
                    sent.answer_now = key
                elif count == len(self.history):
                    sent.requests[key] = list(self.history)
                    sent.turns[turn] = key
                    self._add_exchange(turn)
                elif turn in self.summaries or key == last:
                    sent.requests[key] = self._compact(turn, count)
        return sent

    def _add_exchange(self, turn: int) -> None:
        row = self.turns.get(turn)
        if row is not None and row.get("reply") is not None:
            self.history += [
                {"role": "assistant", "content": str(row["reply"])},
                {"role": "user", "content": str(row.get("observation") or "")},
            ]

    def _answer_now(self) -> list[Message]:
        note = answer_now(self.max_turns)
        return [*self.history, {"role": "user", "content": note}]

    def _compact(self, turn: int, count: int) -> list[Message]:
        """The summary request that sent `count` messages; when its summary came back, the
        conversation goes on from the summary, the note and the turns kept after them."""
        end = max(HEAD, count - 1)
        head, older, tail = self.history[:HEAD], self.history[HEAD:end], self.history[end:]
        request = [*head, *older, {"role": "user", "content": SUMMARY_REQUEST}]
        summary = self.summaries.get(turn)
        if summary is not None:
            self.compactions += 1
            folded = sum(1 for message in older if message["role"] == "assistant")
            note = COMPACTED_NOTE.format(count=self.compactions, turns=folded)
            self.history = [
                *head,
                {"role": "assistant", "content": summary},
                {"role": "user", "content": note},
                *tail,
            ]
        return request
