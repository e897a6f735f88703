"""Replies held to their shape by the server (`constrained_replies`): what each kind of server is
sent, which requests carry it, and a JSON-shaped reply read back as prose and a block.

The scripted server poses as each kind of server by answering where that server answers (llama.cpp's
`/props`, vLLM's `max_model_len`, LM Studio's `/api/v0/models`); the real llama.cpp server parses
the grammar in `make test-real`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget
from rlm_desktop.engine.constrained_replies import (
    JSON_INSTRUCTIONS,
    PROSE_CHARACTERS,
    JsonTurnReader,
    gbnf,
    json_schema,
    prose_limit,
    regex,
)
from rlm_desktop.engine.events import CellExecuted, ReplyStreamed, RunStarted, TurnExecuted
from rlm_desktop.engine.parsing import extract_code_blocks, prose_without_code
from rlm_desktop.engine.profiles import ProfileDraft, save_user_profile
from tests.cli import run_cli
from tests.engine.scripting import DOCUMENT, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_rlm import is_sub_call, opening
from tests.scripted_server import Reply, ScriptedServer

CONSTRAINED = "held"
LLAMA_CPP_PROPS = {"default_generation_settings": {"n_ctx": 32768}, "total_slots": 1}
LM_STUDIO_MODELS = {
    "object": "list",
    "data": [{"id": "test-model", "state": "loaded", "loaded_context_length": 32768}],
}
VLLM_MODELS = {
    "object": "list",
    "data": [{"id": "test-model", "object": "model", "owned_by": "vllm", "max_model_len": 8192}],
}
SUB_CALL_CODE = 'x = llm_query("Summarise: " + context[:40])\nprint(x)'


def constrained_profile(*, constrained: bool = True) -> str:
    """A user profile whose replies are held to their shape; returns its name."""
    draft = ProfileDraft(
        name=CONSTRAINED,
        prompt=(paths.profile_folders().bundled / "default.txt").read_text(encoding="utf-8"),
        constrained_replies=constrained,
    )
    save_user_profile(paths.user_profiles_dir(), draft)
    return draft.name


def turn_requests(server: ScriptedServer) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests() if not is_sub_call(r)]


def json_turn(reasoning: str, code: str) -> str:
    return json.dumps({"reasoning": reasoning, "code": code})


@pytest.mark.parametrize(
    ("reply", "held"),
    [
        ("I will look.\n```repl\nprint(context[:80])\n```\n", True),
        ("```repl\nx = '`a`' + \"``\"\nprint(x)\n```\n", True),
        ("Two lines\nof prose.\n\n```repl\nprint(1)\nprint(2)\n```\n", True),
        ("No code at all.", False),
        ("```repl\n\n```\n", False),
        ("```python\nprint(1)\n```\n", False),
        ("```repl\nprint(1)\n```\n```repl\nprint(2)\n```\n", False),
        ("```repl\nprint(1)\n```\nand then more prose", False),
        ("```text\nx\n```\n```repl\nprint(1)\n```\n", False),
        ("```repl\n   \n```\n", False),
        ("```repl\n print(1)\n```\n", False),
        ("Begin with ```repl\nprint(1)\n```\n", False),
        ("a" * 512 + "\n```repl\nprint(1)\n```\n", True),
        ("a" * 513 + "\n```repl\nprint(1)\n```\n", False),
    ],
)
def test_the_shape_is_bounded_prose_and_exactly_one_repl_block(reply: str, held: bool) -> None:
    assert prose_limit(256) == 512
    assert (re.fullmatch(regex(256), reply) is not None) is held
    if held:
        assert len(extract_code_blocks(reply)) == 1


def test_prose_is_bounded_by_the_reply_s_cap_within_its_limits() -> None:
    least, most = PROSE_CHARACTERS
    assert [prose_limit(cap) for cap in (16, 256, 8192)] == [least, 512, most]
    assert f"piece{{0,{most}}}" in gbnf(8192)
    assert json_schema(96)["properties"]["reasoning"]["maxLength"] == least


@pytest.mark.parametrize(
    ("fields", "expected_code"),
    [
        ({"reasoning": "Look first.", "code": "print(context[:40])"}, "print(context[:40])"),
        (
            {"reasoning": 'A "quoted" \\ path\tand é ✓ 𝄞', "code": 'print("a\\nb")\nx = 1\n'},
            'print("a\\nb")\nx = 1',
        ),
        ({"code": "print(1)", "reasoning": "after the code"}, "print(1)"),
        ({"reasoning": "", "extra": "never shown", "code": "y = 2"}, "y = 2"),
    ],
)
def test_a_json_reply_reads_as_prose_and_one_block_however_it_is_cut(
    fields: dict[str, str], expected_code: str
) -> None:
    for ascii_only in (True, False):
        raw = json.dumps(fields, ensure_ascii=ascii_only)
        whole = JsonTurnReader().feed(raw)
        assert extract_code_blocks(whole) == [expected_code]
        assert "never shown" not in whole
        if list(fields)[0] == "reasoning":
            assert prose_without_code(whole) == fields["reasoning"].strip()
        for cut in range(1, len(raw)):
            reader = JsonTurnReader()
            assert reader.feed(raw[:cut]) + reader.feed(raw[cut:]) == whole, cut
        reader = JsonTurnReader()
        assert "".join(reader.feed(char) for char in raw) == whole


def test_a_broken_surrogate_in_a_json_reply_reads_as_a_replacement_character() -> None:
    raw = '{"reasoning": "a\\ud834b \\udd1e c", "code": "print(1)"}'
    assert JsonTurnReader().feed(raw).startswith("a\ufffdb \ufffd c\n\n```repl\n")


async def test_llama_cpp_is_sent_the_grammar_on_every_turn_that_runs_code_and_nothing_else(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.routes["/props"] = LLAMA_CPP_PROPS
    scripted_server.respond_with(
        scripted(root=[repl(SUB_CALL_CODE), repl("y = 1")], sub="a summary")
    )
    run = make_run(scripted_server, profile=constrained_profile(), budget=Budget(max_turns=2))
    result, events = await run_to_end(run)

    assert result.status == "max_turns", result.error
    turns = turn_requests(scripted_server)
    assert len(turns) == 3  # two turns, then the turn-limit answer
    caps = [r["max_tokens"] for r in turns]
    assert [r.get("grammar") for r in turns] == [gbnf(caps[0]), gbnf(caps[1]), None]
    (sub_call,) = [r for r in scripted_server.chat_requests() if is_sub_call(r)]
    assert "grammar" not in sub_call
    assert JSON_INSTRUCTIONS.strip() not in opening(turns[0])[0]
    (started,) = of_type(events, RunStarted)
    assert started.settings["constrained_replies"] == "llama.cpp grammar"


async def test_a_profile_that_does_not_ask_sends_no_grammar(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.routes["/props"] = LLAMA_CPP_PROPS
    scripted_server.respond_with(scripted(root=[repl("FINAL('done')")]))
    run = make_run(scripted_server, profile=constrained_profile(constrained=False))
    result, events = await run_to_end(run)

    assert result.status == "completed", result.error
    assert all("grammar" not in r for r in scripted_server.chat_requests())
    assert "constrained_replies" not in of_type(events, RunStarted)[0].settings


async def test_vllm_is_sent_the_regex_as_structured_outputs(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.routes["/v1/models"] = VLLM_MODELS
    scripted_server.respond_with(scripted(root=[repl("FINAL('done')")]))
    result, events = await run_to_end(make_run(scripted_server, profile=constrained_profile()))

    assert result.status == "completed", result.error
    (turn,) = turn_requests(scripted_server)
    assert turn["structured_outputs"] == {"regex": regex(turn["max_tokens"])}
    assert of_type(events, RunStarted)[0].settings["constrained_replies"] == "vLLM regex"


async def test_lm_studio_s_json_replies_stream_as_prose_and_code_and_the_code_runs(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.routes["/api/v0/models"] = LM_STUDIO_MODELS
    first = json_turn("I will count the lines.", 'n = context.count("\\n")\nprint(n)')
    second = json_turn("Now I know.", "FINAL(str(n))")
    scripted_server.respond_with(
        scripted(root=[Reply(first, chunk_chars=5), Reply(second, chunk_chars=3)])
    )
    result, events = await run_to_end(make_run(scripted_server, profile=constrained_profile()))

    assert (result.status, result.answer) == ("completed", str(DOCUMENT.text.count("\n")))
    turns = turn_requests(scripted_server)
    for request in turns:
        response_format = request["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["schema"] == json_schema(request["max_tokens"])
    assert opening(turns[0])[0].endswith(JSON_INSTRUCTIONS)
    executed = of_type(events, TurnExecuted)
    reply = 'I will count the lines.\n\n```repl\nn = context.count("\\n")\nprint(n)\n```\n'
    assert executed[0].reply == reply  # read to its end: nothing follows the block
    assert [cell.code for cell in of_type(events, CellExecuted)] == [
        'n = context.count("\\n")\nprint(n)',
        "FINAL(str(n))",
    ]
    root = executed[0].call_id
    streamed = "".join(e.text for e in of_type(events, ReplyStreamed) if e.call_id == root)
    assert streamed.startswith("I will count the lines.\n\n```repl\n")
    assert "{" not in streamed, "the stream shows prose and code, not JSON"
    history = turns[1]["messages"]
    assert history[-2] == {"role": "assistant", "content": reply}


async def test_a_server_that_does_not_say_what_it_is_is_sent_nothing_and_the_run_says_why(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL('done')")]))
    result, events = await run_to_end(make_run(scripted_server, profile=constrained_profile()))

    assert result.status == "completed", result.error
    (turn,) = turn_requests(scripted_server)
    assert not {"grammar", "structured_outputs", "response_format"} & set(turn)
    said = of_type(events, RunStarted)[0].settings["constrained_replies"]
    assert said.startswith("none: the server did not say what it is")


def test_the_command_line_says_when_replies_cannot_be_held(
    scripted_server: ScriptedServer, isolated_home: Path, tmp_path: Path
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL('done')")]))
    name = constrained_profile()
    notes = tmp_path / "notes.txt"
    notes.write_text("some text", encoding="utf-8")
    done = run_cli(
        "run", "--model", "openai/test-model", "--api-base", scripted_server.base_url,
        "--mode", "rlm", "--profile", name, "--query", "Anything?", "--doc", str(notes), "--json",
        home=isolated_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "replies not held to their shape: the server did not say what it is" in done.stderr


def test_a_reply_that_is_not_json_is_passed_on_as_it_came() -> None:
    """A server that ignored the schema: its reply is read as if nothing had been asked."""
    reply = "  I will look.\n```repl\nprint(1)\n```"
    reader = JsonTurnReader()
    assert (
        "".join(reader.feed(piece) for piece in (" ", " I", " will look.\n```repl\nprint(1)\n```"))
        == reply
    )
