"""Runs against a server that renders Gemma's chat template as llama.cpp does: it refuses two turns
of one role in a row (and, Gemma 2's, a system message) with HTTP 500. Every request the engine
sends is one it takes, the instructions reach a model without a system role, and a run out of
turns ends `max_turns`."""

from __future__ import annotations

from rlm_desktop import paths
from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CallOpened, CellExecuted, LLMRetried, TurnExecuted
from rlm_desktop.engine.profiles import ProfileDraft, save_user_profile
from rlm_desktop.engine.rlm_call import answer_now
from tests.engine.scripting import QUERY, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_rlm import opening
from tests.scripted_server import (
    NO_SYSTEM_ROLE,
    ScriptedServer,
    last_user_text,
    template_refusal,
    templated,
)

OUT_OF_TURNS = [repl("x = 20"), repl("print(x + 1)"), "FINAL(42)"]
"""Two turns without an answer, then the reply to the request for a last answer."""
FOLLOW_UP = "And half of it?"
RULES = "House rules: read `context` ($context_shape) with code, then FINAL."


def no_system_role_profile() -> str:
    """A user profile whose model has no system role; returns its name."""
    draft = ProfileDraft(name="plain", prompt=RULES, patterns=("nothing/*",), system_role=False)
    save_user_profile(paths.user_profiles_dir(), draft)
    return draft.name


async def test_a_run_out_of_turns_under_gemmas_template_ends_max_turns(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(templated(scripted(root=OUT_OF_TURNS)))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=2)))

    assert (result.status, result.answer, result.error) == (
        "max_turns",
        "42",
        "no answer within 2 turns",
    )
    requests = scripted_server.chat_requests()
    assert len(requests) == 3
    assert [template_refusal(request) for request in requests] == [None] * 3
    last = requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    observation, request = last[-1]["content"].rsplit("\n\n", 1)
    assert observation == of_type(events, TurnExecuted)[-1].observation
    assert request == answer_now(2)
    assert not of_type(events, LLMRetried)


async def test_a_model_without_a_system_role_gets_the_instructions_in_its_first_turn(
    scripted_server: ScriptedServer,
) -> None:
    profile = no_system_role_profile()
    scripted_server.respond_with(
        templated(scripted(root=[repl("FINAL('done')")]), system_role=False)
    )
    result, events = await run_to_end(make_run(scripted_server, profile=profile))

    assert (result.status, result.answer) == ("completed", "done")
    (request,) = scripted_server.chat_requests()
    (first,) = request["messages"]
    assert first["role"] == "user"
    (opened,) = of_type(events, CallOpened)
    assert opened.system_prompt.startswith("House rules: read `context` (a str of ")
    assert first["content"].startswith(f"<instructions>\n{opened.system_prompt}\n</instructions>")
    assert opening(request) == (opened.system_prompt, opened.opening[0]["content"])
    assert f"Question: {QUERY}" in first["content"]


async def test_a_system_message_to_a_template_without_one_is_refused_once(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(
        templated(scripted(root=[repl("FINAL('done')")]), system_role=False)
    )
    result, events = await run_to_end(make_run(scripted_server))

    assert result.status == "error"
    assert result.error == f"HTTP 500: {NO_SYSTEM_ROLE}"
    assert len(scripted_server.chat_requests()) == 1
    assert not of_type(events, LLMRetried)


async def test_a_follow_up_is_sent_as_the_template_takes_it_and_keeps_the_history_as_built(
    scripted_server: ScriptedServer,
) -> None:
    profile = no_system_role_profile()
    scripted_server.respond_with(templated(scripted(root=OUT_OF_TURNS), system_role=False))
    first, _ = await run_to_end(
        make_run(scripted_server, profile=profile, budget=Budget(max_turns=2))
    )
    assert first.status == "max_turns"
    code = "print([m['role'] for m in history_0])\nFINAL(int(x) // 2)"
    scripted_server.respond_with(templated(scripted({FOLLOW_UP: [repl(code)]}), system_role=False))
    run = make_run(scripted_server, query=FOLLOW_UP, follows=first.session_id, profile=profile)
    result, events = await run_to_end(run)

    assert (result.status, result.answer) == ("completed", "10")
    requests = scripted_server.chat_requests()
    assert len(requests) == 4
    assert [template_refusal(r, system_role=False) for r in requests] == [None] * 4
    assert FOLLOW_UP in last_user_text(requests[-1])
    roles = ["system", "user", "assistant", "user", "assistant", "user", "user", "assistant"]
    assert of_type(events, CellExecuted)[0].stdout.strip() == str(roles)
