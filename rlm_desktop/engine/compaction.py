"""History compaction: the older turns of a long RLM call replaced by a summary the model writes.

Every turn re-sends the call's whole conversation, so without this a long call pays more per turn
until it overflows the model's window or the budget. When the conversation nears either limit of
the policy (a share of the window, or a token count that bounds what every later turn costs), the
model is asked once to summarize its progress; the system prompt, the first user message (the
question) and the last turns stay as they were, and everything between is replaced by the summary.
Nothing is lost to the model: the REPL's `history` keeps every message, compacted ones included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rlm_desktop.engine.config import DEFAULT_COMPACT_TOKENS, DEFAULT_COMPACT_WINDOW_SHARE
from rlm_desktop.engine.estimates import estimate_messages
from rlm_desktop.engine.llm import Completion, Message

KEEP_TURNS = 2
"""Turns (a reply and what it was shown) kept word for word after the summary."""
HEAD = 2
"""The messages that always stay: the system prompt and the first user message."""

SUMMARY_REQUEST = (
    "Your conversation so far is about to be replaced by a summary that you write now, to keep "
    "the next turns short. Summarize your progress:\n"
    "1. Which steps of the task are done and which remain.\n"
    "2. Every concrete intermediate result (numbers, values, names of REPL variables that hold "
    "results), preserved exactly.\n"
    "3. What your next action should be.\n"
    "Be concise (one to three paragraphs) and write no code."
)
COMPACTED_NOTE = (
    "[Compaction {count}: {turns} earlier turns were replaced by the summary above.] Continue "
    "from it and do not repeat finished work. Your REPL variables are all still there "
    "(SHOW_VARS() lists them), and the REPL variable `history` holds every message of this "
    "conversation, compacted ones included, if you need to look something up."
)

Ask = Callable[[list[Message]], Awaitable[Completion]]


@dataclass(frozen=True)
class CompactionPolicy:
    """When a call's conversation is compacted: at `window_share` of the model's window, or at
    `max_tokens`, whichever comes first (None turns either off; both None: never)."""

    window_share: float | None = DEFAULT_COMPACT_WINDOW_SHARE
    max_tokens: int | None = DEFAULT_COMPACT_TOKENS
    keep_turns: int = KEEP_TURNS

    def limit(self, window: int) -> int | None:
        """The token count at which a conversation for a model with this `window` is compacted
        (None: never)."""
        limits = [self.max_tokens] if self.max_tokens is not None else []
        if self.window_share is not None:
            limits.append(int(window * self.window_share))
        return min(limits) if limits else None


@dataclass(frozen=True)
class Compacted:
    """A compaction that happened: the conversation to go on with, and what it saved."""

    messages: list[Message]
    summary: str
    tokens_before: int
    tokens_after: int
    turns_folded: int


def split_for_compaction(
    messages: list[Message], keep_turns: int, tail_budget: int, model: str
) -> tuple[list[Message], list[Message], list[Message]]:
    """(head, older, tail): the messages that stay first, those to fold, the last turns kept.

    The tail holds up to `keep_turns` whole turns (assistant reply and user observation) while
    they fit in `tail_budget` tokens, so a huge last turn is folded rather than kept.
    """
    head, rest = messages[:HEAD], messages[HEAD:]
    kept = 0
    for turns in range(min(keep_turns, len(rest) // 2), 0, -1):
        if estimate_messages(rest[-2 * turns :], model) <= tail_budget:
            kept = 2 * turns
            break
    split = len(rest) - kept
    return head, rest[:split], rest[split:]


def compaction_due(
    messages: list[Message], policy: CompactionPolicy, window: int, model: str
) -> int:
    """The conversation's estimated tokens when it is due for compaction, else 0."""
    limit = policy.limit(window)
    if limit is None or len(messages) <= HEAD + 2 * policy.keep_turns:
        return 0
    tokens = estimate_messages(messages, model)
    return tokens if tokens >= limit else 0


async def compact(
    messages: list[Message],
    policy: CompactionPolicy,
    *,
    window: int,
    model: str,
    count: int,
    ask: Ask,
) -> Compacted | None:
    """Fold the older turns of `messages` into a summary written by the model through `ask`.

    `count` numbers this compaction within the call (1 for the first). Returns None when nothing
    can be folded (only the question and the kept turns are left). Errors of `ask` (budget,
    provider) are raised as they are: the turn would have needed that request anyway.
    """
    limit = policy.limit(window)
    if limit is None:
        return None
    head, older, tail = split_for_compaction(messages, policy.keep_turns, limit // 4, model)
    if not older:
        return None
    before = estimate_messages(messages, model)
    completion = await ask([*head, *older, {"role": "user", "content": SUMMARY_REQUEST}])
    summary = completion.content.strip() or "(the model wrote no summary)"
    folded = sum(1 for message in older if message.get("role") == "assistant")
    note = COMPACTED_NOTE.format(count=count, turns=folded)
    compacted: list[Message] = [
        *head,
        {"role": "assistant", "content": summary},
        {"role": "user", "content": note},
        *tail,
    ]
    return Compacted(compacted, summary, before, estimate_messages(compacted, model), folded)
