"""The REPL's tools cannot be lost: a cell that overwrites or deletes them gets them back, and a note."""

from __future__ import annotations

from rlm_desktop.engine import ContextDocument
from rlm_desktop.engine.events import CellExecuted, WorkerRestarted
from rlm_desktop.engine.observation import format_cell
from rlm_desktop.engine.sandbox.process import CellOutcome
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import ScriptedServer

TOOLS = [
    "context",
    "context_meta",
    "llm_query",
    "llm_query_batched",
    "rlm_query",
    "rlm_query_batched",
    "FINAL",
    "FINAL_VAR",
    "SHOW_VARS",
]
USE_THEM = (
    "print('chars', len(context), context_meta[0]['name'])\n"
    "print('one', llm_query('hi'))\n"
    "print('two', llm_query_batched(['a', 'b']))\n"
    "print('vars', SHOW_VARS())\n"
    "print('callable', all(callable(f) for f in (rlm_query, rlm_query_batched, FINAL_VAR)))\n"
    "print('answer', answer)"
)


async def test_overwritten_tools_are_restored_with_a_note(scripted_server: ScriptedServer) -> None:
    clobber = (
        "llm_query = 'mine'\ncontext = None\nFINAL = print\nSHOW_VARS = 42\nanswer = 'oops'\n"
        "mine = 1"
    )
    turns = [repl(clobber), repl(USE_THEM), repl("FINAL('done')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, events = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert (
        "Note: you overwrote context, llm_query, FINAL, SHOW_VARS, answer; they were restored."
        in (shown)
    )
    after = observation_after(scripted_server, 1)
    assert f"chars {len(DOCUMENT.text)} ledger.txt" in after
    assert "one sub-answer" in after
    assert "two ['sub-answer', 'sub-answer']" in after
    assert "vars {'mine': 'int'}" in after
    assert "callable True" in after
    assert "answer {'content': '', 'ready': False, 'sources': []}" in after
    assert "overwrote" not in after
    assert not of_type(events, WorkerRestarted)
    assert (result.status, result.answer) == ("completed", "done")


async def test_deleted_tools_are_restored_even_when_the_cell_fails(
    scripted_server: ScriptedServer,
) -> None:
    delete = (
        f"for name in {TOOLS!r}:\n    del globals()[name]\ndel answer\nraise ValueError('boom')"
    )
    turns = [repl(delete), repl(USE_THEM), repl("FINAL(context_meta[0]['name'])")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, _ = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "ValueError: boom" in shown
    assert f"Note: you overwrote {', '.join(TOOLS)}, answer; they were restored." in shown
    after = observation_after(scripted_server, 1)
    assert f"chars {len(DOCUMENT.text)} ledger.txt" in after
    assert "one sub-answer" in after
    assert result.status == "completed"
    assert result.answer == "ledger.txt"


async def test_one_tool_overwritten_gets_a_singular_note(scripted_server: ScriptedServer) -> None:
    turns = [
        repl("def llm_query(prompt):\n    return 'fake'\nprint(llm_query('x'))"),
        repl(USE_THEM),
    ]
    turns.append(repl("FINAL('ok')"))
    scripted_server.respond_with(scripted({QUERY: turns}))
    await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "fake" in shown
    assert "Note: you overwrote llm_query; it was restored." in shown
    assert "one sub-answer" in observation_after(scripted_server, 1)


async def test_context_and_answer_changed_in_place_are_left_alone(
    scripted_server: ScriptedServer,
) -> None:
    documents = [
        ContextDocument(name="a.txt", text="alpha"),
        ContextDocument(name="b.txt", text="b"),
    ]
    turns = [
        repl(
            "context.append('added')\ncontext_meta.append({'name': 'x'})\nanswer['content'] = 'draft'"
        ),
        repl("print(len(context), context[-1], len(context_meta), answer['content'])"),
        repl("answer['ready'] = True"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, events = await run_to_end(make_run(scripted_server, documents=documents))

    assert "overwrote" not in observation_after(scripted_server, 0)
    assert "3 added 3 draft" in observation_after(scripted_server, 1)
    assert (result.status, result.answer) == ("completed", "draft")
    assert not any(c.variables_lost for c in of_type(events, CellExecuted))


async def test_a_tool_overwritten_and_used_in_the_same_cell_keeps_working_there(
    scripted_server: ScriptedServer,
) -> None:
    """Rebinding a tool is the model's choice for the cell; only the next cells get it back."""
    code = "real = llm_query\nllm_query = lambda p: 'wrapped ' + real(p)\nprint(llm_query('q'))"
    turns = [repl(code), repl("print(llm_query('q'))\nFINAL('ok')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, _ = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "wrapped sub-answer" in shown
    assert "Note: you overwrote llm_query; it was restored." in shown
    assert result.status == "completed"


def test_the_note_is_kept_when_the_cell_output_is_cut() -> None:
    outcome = CellOutcome("x" * 5_000, "", None, 0.1, restored=("llm_query", "context"))
    shown = format_cell(1, outcome, 1_000)
    assert len(shown) <= 1_000
    assert shown.endswith("Note: you overwrote llm_query, context; they were restored.")
