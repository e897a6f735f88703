"""The turn loop: model replies, code runs, observations go back, until an executed answer."""

from __future__ import annotations

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import (
    AnswerSubmitted,
    BudgetUpdated,
    CallFinished,
    CallStarted,
    CellExecuted,
    LLMResponded,
    ModeChosen,
    ReplyStreamed,
    RunFinished,
    RunStarted,
)
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
    whole_replies_profile,
)
from tests.scripted_server import ScriptedServer, estimate_tokens

TOTAL = sum(i % 7 for i in range(300))
TURNS = [
    repl("print(context_meta[0]['name'])\nlen(context)", "First, the size."),
    repl(
        "total = sum(int(row.rsplit(' ', 1)[1]) for row in context.splitlines())\nprint('sum', total)"
    ),
    repl("FINAL(f'The total is {total}.')", "Done."),
]
PER_TURN = ["TurnStarted", "LLMRequestSent", "LLMResponded", "CellExecuted", "TurnExecuted"]


async def test_a_multi_turn_run_reaches_final(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: TURNS}))
    run = make_run(scripted_server)
    result, events = await run_to_end(run)

    assert (result.status, result.answer, result.error) == (
        "completed",
        f"The total is {TOTAL}.",
        None,
    )
    assert (result.turns, result.sub_calls, result.max_depth_reached) == (3, 0, 1)
    assert result.session_id == run.run_id
    assert result.unpriced
    assert result.cost_usd == 0
    requests = scripted_server.chat_requests()
    sent = sum(estimate_tokens("".join(m["content"] for m in r["messages"])) for r in requests)
    assert (result.input_tokens, result.output_tokens) == (
        sent,
        sum(estimate_tokens(reply) for reply in TURNS),
    )
    assert observation_after(scripted_server, 0).splitlines()[1:] == [
        "ledger.txt",
        str(len(DOCUMENT.text)),
    ]
    assert f"sum {TOTAL}" in observation_after(scripted_server, 1)

    names = [type(e).__name__ for e in events if e.stored and not isinstance(e, BudgetUpdated)]
    assert names == [
        "RunStarted",
        "ModeChosen",
        "CallStarted",
        "CallOpened",
        *PER_TURN * 3,
        "AnswerSubmitted",
        "CallFinished",
        "RunFinished",
    ]
    assert {e.run_id for e in events} == {run.run_id}
    for responded in of_type(events, LLMResponded):
        pieces = [e for e in of_type(events, ReplyStreamed) if e.request_id == responded.request_id]
        assert "".join(e.text for e in pieces) == responded.content  # streamed, then answered
        assert events.index(pieces[-1]) < events.index(responded)
    (started,) = of_type(events, RunStarted)
    assert started.documents == [DOCUMENT.meta()]
    assert started.query == QUERY
    assert of_type(events, ModeChosen)[0].mode == "rlm"
    (call,) = of_type(events, CallStarted)
    assert (call.kind, call.depth, call.parent_id) == ("rlm", 1, None)
    (answer,) = of_type(events, AnswerSubmitted)
    assert (answer.call_id, answer.source, answer.answer) == (call.call_id, "FINAL", result.answer)
    (finished,) = of_type(events, CallFinished)
    assert (finished.status, finished.response, finished.input_tokens) == (
        "ok",
        result.answer,
        result.input_tokens,
    )
    (end,) = of_type(events, RunFinished)
    assert (end.status, end.answer, end.turns, end.input_tokens, end.wall_s) == (
        result.status,
        result.answer,
        result.turns,
        result.input_tokens,
        result.wall_s,
    )


async def test_a_syntax_error_is_shown_with_its_line_and_recovered_from(
    scripted_server: ScriptedServer,
) -> None:
    broken = "x = 1\nif x = 2:\n    print('never')"
    fixed = "x = 1\nif x == 1:\n    FINAL('recovered')"
    scripted_server.respond_with(scripted({QUERY: [repl(broken), repl(fixed)]}))
    result, events = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "SyntaxError" in shown
    assert "line 2" in shown
    assert "if x = 2:" in shown
    assert "SyntaxError" in (of_type(events, CellExecuted)[0].error or "")
    assert (result.status, result.answer, result.turns) == ("completed", "recovered", 2)


async def test_a_traceback_names_the_failing_lines_and_state_survives(
    scripted_server: ScriptedServer,
) -> None:
    failing = (
        "rows = context.splitlines()\n"
        "def amount(row):\n"
        "    return int(row.split(':')[2])\n"
        "print(amount(rows[0]))"
    )
    scripted_server.respond_with(
        scripted({QUERY: [repl(failing), repl("print(len(rows))\nFINAL(len(rows))")]})
    )
    result, _ = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "Traceback (most recent call last):" in shown
    assert "line 4" in shown
    assert "print(amount(rows[0]))" in shown
    assert "line 3" in shown
    assert "return int(row.split(':')[2])" in shown
    assert "IndexError: list index out of range" in shown
    assert (result.status, result.answer) == ("completed", "300")


async def test_final_written_in_prose_or_inert_code_does_not_end_the_run(
    scripted_server: ScriptedServer,
) -> None:
    turns = [
        "I will call FINAL(42) once I have added up every line.",
        repl("# no FINAL(99) yet\nprint('FINAL(99) would be a guess')"),
        repl("FINAL(7)"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer, result.turns) == ("completed", "7", 3)
    assert len(of_type(events, AnswerSubmitted)) == 1
    assert "no ```repl code block" in observation_after(scripted_server, 0)
    assert "FINAL(99) would be a guess" in observation_after(scripted_server, 1)


async def test_a_bare_final_line_without_code_is_accepted(scripted_server: ScriptedServer) -> None:
    turns = [repl("print(len(context))"), "I have counted everything.\nFINAL(The total is 42.)"]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer, result.turns) == ("completed", "The total is 42.", 2)
    assert of_type(events, AnswerSubmitted)[0].source == "FINAL"


async def test_a_bare_final_var_line_submits_the_variable(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("total = 6 * 7"), "FINAL_VAR(total)"]}))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "42")
    assert of_type(events, AnswerSubmitted)[0].source == "FINAL_VAR"


async def test_final_var_of_a_missing_variable_is_an_error_the_model_sees(
    scripted_server: ScriptedServer,
) -> None:
    turns = [
        repl("FINAL_VAR('nothing_here')"),
        repl("nothing_here = 'found'\nFINAL_VAR('nothing_here')"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, _ = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "NameError" in shown
    assert "no variable named 'nothing_here'" in shown
    assert (result.status, result.answer, result.turns) == ("completed", "found", 2)


async def test_a_bare_final_var_of_a_missing_variable_is_shown_to_the_model(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted({QUERY: ["FINAL_VAR(nothing_here)", repl("FINAL(1)")]}))
    result, _ = await run_to_end(make_run(scripted_server))

    assert result.status == "completed"
    assert "no variable named 'nothing_here'" in observation_after(scripted_server, 0)


async def test_answer_ready_submits_the_content(scripted_server: ScriptedServer) -> None:
    turns = [
        repl("answer['content'] = 'draft'\nSHOW_VARS()"),
        repl("answer['content'] += ' and final'\nanswer['ready'] = True"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer, result.turns) == ("completed", "draft and final", 2)
    assert of_type(events, AnswerSubmitted)[0].source == "answer"


async def test_blocks_of_one_reply_share_state_and_stop_at_final(
    scripted_server: ScriptedServer,
) -> None:
    reply = repl("a = 20") + "\n" + repl("FINAL(a + 22)") + "\n" + repl("print('never ran')")
    scripted_server.respond_with(scripted({QUERY: [reply]}))
    result, events = await run_to_end(make_run(scripted_server, profile=whole_replies_profile()))

    assert (result.status, result.answer, result.turns) == ("completed", "42", 1)
    assert [c.code for c in of_type(events, CellExecuted)] == ["a = 20", "FINAL(a + 22)"]


async def test_show_vars_lists_the_user_variables(scripted_server: ScriptedServer) -> None:
    turns = [repl("total = 3\nnames = ['a']\nprint(SHOW_VARS())"), repl("FINAL('ok')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    await run_to_end(make_run(scripted_server))

    assert "{'total': 'int', 'names': 'list'}" in observation_after(scripted_server, 0)


async def test_cells_are_numbered_across_the_call_as_tracebacks_name_them(
    scripted_server: ScriptedServer,
) -> None:
    """Turn 2's first cell is the call's third: the model reads `[cell 3]` and `<cell 3>`."""
    two_cells = "Two steps.\n```repl\nx = 1\n```\n```repl\ny = 2\n```"
    raising = repl("print(x + y)\nraise ValueError('stop here')")
    scripted_server.respond_with(scripted({QUERY: [two_cells, raising, repl("FINAL(x + y)")]}))
    result, _ = await run_to_end(make_run(scripted_server, profile=whole_replies_profile()))

    assert result.status == "completed"
    first = observation_after(scripted_server, 0)
    assert "[cell 1]" in first
    assert "[cell 2]" in first
    second = observation_after(scripted_server, 1)
    assert second.startswith("[cell 3]")
    assert 'File "<cell 3>", line 2' in second


async def test_an_answer_given_before_the_cell_ran_out_of_time_stands(
    scripted_server: ScriptedServer,
) -> None:
    """FINAL inside a cell that then loops until its time limit: the answer was given, the run
    ends with it, and the cell shows that it was interrupted."""
    endless = "print('counted 7')\nFINAL('7 rows')\nwhile True:\n    pass"
    scripted_server.respond_with(scripted(root=[repl(endless), repl("FINAL('too late')")]))
    run = make_run(scripted_server, budget=Budget(cell_timeout_s=1.0))
    result, events = await run_to_end(run)
    assert (result.status, result.answer, result.turns) == ("completed", "7 rows", 1)
    (cell,) = of_type(events, CellExecuted)
    assert cell.stdout == "counted 7\n"
    assert cell.timed_out
    assert (cell.error or "").startswith("TimeoutError: the cell ran past")
    (submitted,) = of_type(events, AnswerSubmitted)
    assert submitted.answer == "7 rows"
