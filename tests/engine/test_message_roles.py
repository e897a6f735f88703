"""The message lists sent: roles alternate after an optional system message, turns of one role are
merged in order with nothing dropped, the system prompt opens the first user turn for a model
without a system role, and a list already sendable comes back unchanged."""

from __future__ import annotations

import pytest

from rlm_desktop.engine.message_roles import OPENING_TURN, sendable_messages
from tests.scripted_server import template_refusal

Messages = list[dict[str, str]]


def msg(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


OUT_OF_TURNS: Messages = [
    msg("system", "You answer with code."),
    msg("user", "Question: the total?"),
    msg("assistant", "```repl\nprint(1)\n```"),
    msg("user", "1"),
    msg("user", "You have used all 1 turns. Reply now."),
]
SHAPES: dict[str, Messages] = {
    "out of turns": OUT_OF_TURNS,
    "no system": OUT_OF_TURNS[1:],
    "assistant first": [msg("assistant", "I start."), msg("user", "ok"), msg("user", "go on")],
    "system only": OUT_OF_TURNS[:1],
    "a later system message": [
        *OUT_OF_TURNS[:3],
        msg("system", "Be brief."),
        msg("user", "2"),
        msg("assistant", "one"),
        msg("assistant", "two"),
    ],
    "two system messages": [msg("system", "A."), msg("system", "B."), msg("user", "q")],
    "empty": [],
}


def test_the_request_for_a_last_answer_joins_the_last_observation() -> None:
    sent = sendable_messages(OUT_OF_TURNS)
    assert sent == [
        *OUT_OF_TURNS[:3],
        msg("user", "1\n\nYou have used all 1 turns. Reply now."),
    ]


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("system_role", [True, False])
def test_every_shape_alternates_keeps_every_text_in_order_and_is_idempotent(
    shape: str, system_role: bool
) -> None:
    messages = SHAPES[shape]
    given = [dict(m) for m in messages]
    sent = sendable_messages(messages, system_role=system_role)

    assert messages == given, "the engine's own list is left as it built it"
    assert template_refusal({"messages": sent}, system_role=system_role) is None, "Gemma's rules"
    texts = "\n\n".join(m["content"] for m in sent)
    position = 0
    for message in messages:
        found = texts.find(message["content"], position)
        assert found >= 0, f"{message['content']!r} was dropped or moved"
        position = found + len(message["content"])
    assert sendable_messages(sent, system_role=system_role) == sent


def test_without_a_system_role_the_prompt_opens_the_first_user_turn() -> None:
    sent = sendable_messages(OUT_OF_TURNS, system_role=False)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == (
        "<instructions>\nYou answer with code.\n</instructions>\n\nQuestion: the total?"
    )


def test_a_list_that_would_open_with_the_assistant_gets_a_user_turn_first() -> None:
    sent = sendable_messages(SHAPES["assistant first"])
    assert sent == [
        msg("user", OPENING_TURN),
        msg("assistant", "I start."),
        msg("user", "ok\n\ngo on"),
    ]
    folded = sendable_messages(
        [msg("system", "Rules."), *SHAPES["assistant first"]], system_role=False
    )
    assert folded[:2] == [
        msg("user", "<instructions>\nRules.\n</instructions>"),
        msg("assistant", "I start."),
    ]


def test_a_system_message_after_the_start_is_a_user_turn() -> None:
    sent = sendable_messages(SHAPES["a later system message"])
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant"]
    assert sent[3]["content"] == "Be brief.\n\n2"
    assert sent[4]["content"] == "one\n\ntwo"


def test_a_sendable_list_is_sent_as_it_is() -> None:
    alternating = OUT_OF_TURNS[:4]
    assert sendable_messages(alternating) == alternating
