"""Replies stream: seen as they arrive, read no further than their code block or their max_tokens,
timed by silence rather than in total, and a server that does not stream still works."""

from __future__ import annotations

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import (
    CellExecuted,
    LLMRequestSent,
    LLMResponded,
    ReplyStreamed,
    TurnExecuted,
)
from rlm_desktop.review.call_tree import CallTree
from tests.engine.scripting import (
    QUERY,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer

IMAGINED = "\nOutput:\n42\n\nNow let me also check:\n```repl\nprint('IMAGINED RAN')\n```\n" * 200


async def test_a_root_reply_is_read_up_to_its_code_block_and_the_rest_is_never_waited_for(
    scripted_server: ScriptedServer,
) -> None:
    first = Reply(content=repl("print('real cell')") + IMAGINED, chunk_chars=8, chunk_delay_s=0.002)
    scripted_server.respond_with(scripted({QUERY: [first, repl("FINAL('done')")]}))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "done")
    assert [c.code for c in of_type(events, CellExecuted)] == [
        "print('real cell')",
        "FINAL('done')",
    ]
    first_reply = of_type(events, TurnExecuted)[0].reply
    assert first_reply.endswith("```")
    assert "IMAGINED" not in first_reply
    responded = of_type(events, LLMResponded)[0]
    assert responded.cut == "code"
    assert 0 in scripted_server.hung_up  # the connection was closed, so the server stops writing
    assert scripted_server.streamed_chars[0] < len(first.content) / 2
    streamed = [e for e in of_type(events, ReplyStreamed) if e.request_id == responded.request_id]
    assert "".join(e.text for e in streamed) == responded.content
    tree = CallTree()
    tree.apply(events)
    assert tree.root is not None
    (sent,) = [e for e in of_type(events, LLMRequestSent) if e.request_id == responded.request_id]
    not_waited = sent.reserved_output_tokens - responded.output_tokens
    assert tree.root.turns[0].stopped_at_code == not_waited > 1000
    assert tree.root.turns[1].stopped_at_code is None  # it ended by itself at its fence
    summary = tree.root.turns[0].summary()
    assert f"stopped at its code (up to {not_waited:,} more tokens not waited for)" in summary


async def test_a_sub_call_reply_that_ignores_max_tokens_is_cut_there_and_the_cap_holds(
    scripted_server: ScriptedServer,
) -> None:
    endless = Reply(content="word " * 40_000, chunk_chars=5, completion_tokens=10)
    cell = repl("r = llm_query('go on forever')\nprint(len(r))")
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('ok')")]}, sub=endless))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_tokens=200_000)))

    (sub,) = [e for e in of_type(events, LLMResponded) if "word" in e.content]
    sent = next(r for r in scripted_server.chat_requests() if "forever" in str(r["messages"]))
    assert sub.cut == "max_tokens"
    assert sub.finish_reason == "length"
    assert sub.output_tokens <= sent["max_tokens"]
    assert len(sub.content.split()) <= sent["max_tokens"]
    assert result.input_tokens + result.output_tokens <= 200_000
    index = scripted_server.chat_requests().index(sent)
    assert index in scripted_server.hung_up


async def test_a_server_that_does_not_stream_still_answers(scripted_server: ScriptedServer) -> None:
    plain = [
        Reply(content=repl("x = 6 * 7"), stream=False),
        Reply(content=repl("FINAL(x)"), stream=False),
    ]
    scripted_server.respond_with(scripted({QUERY: plain}))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "42")
    assert all(r.get("stream") is True for r in scripted_server.chat_requests())
    assert scripted_server.streamed_chars == {}
    assert [e.text for e in of_type(events, ReplyStreamed)] == [repl("x = 6 * 7"), repl("FINAL(x)")]


async def test_a_slow_model_still_writing_is_never_cut_by_the_request_timeout(
    scripted_server: ScriptedServer,
) -> None:
    slow = Reply(content=repl("print('slow but steady')"), chunk_chars=2, chunk_delay_s=0.05)
    scripted_server.respond_with(scripted({QUERY: [slow, repl("FINAL('ok')")]}))
    run = make_run(scripted_server, request_timeout_s=0.5, stream_silence_s=0.5, max_retries=0)
    result, events = await run_to_end(run)

    assert (result.status, result.answer) == ("completed", "ok")
    first = of_type(events, LLMResponded)[0]
    assert first.latency_s > 0.5  # longer in total than the timeout, yet not cut
    assert first.attempts == 1


async def test_a_server_gone_silent_mid_reply_times_out_saying_so(
    scripted_server: ScriptedServer,
) -> None:
    stuck = Reply(
        content=repl("print('never finished')"), chunk_chars=4, stall_after_chars=8, stall_s=3
    )
    scripted_server.respond_with(scripted({QUERY: [stuck]}))
    run = make_run(scripted_server, request_timeout_s=5, stream_silence_s=0.3, max_retries=0)
    result, _events = await run_to_end(run)

    assert result.status == "error"
    assert result.error == "Timeout: the provider went silent for 0.3 s in the middle of its reply"


async def test_a_first_fan_out_to_a_model_goes_out_at_once(scripted_server: ScriptedServer) -> None:
    """No request waits for a first one to report its usage: a reply can hold no more than its
    hold, so the first fan-out to a sub-model is as wide as the concurrency allows."""
    cell = repl("print(len(llm_query_batched([f'part {i}' for i in range(8)])))")
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('ok')")]}, sub="a part"))
    scripted_server.latency_s = 0.3
    run = make_run(scripted_server, sub_model="openai/another-model", budget=Budget(concurrency=8))
    result, _events = await run_to_end(run)

    assert result.status == "completed"
    assert scripted_server.max_in_flight == 8


async def test_a_reply_cut_at_its_limit_without_code_is_told_so(
    scripted_server: ScriptedServer,
) -> None:
    rambling = Reply(
        content="Let me think about the documents first. " * 20, finish_reason="length"
    )
    scripted_server.respond_with(scripted({QUERY: [rambling, repl("FINAL('ok')")]}))
    result, _events = await run_to_end(make_run(scripted_server))

    assert result.status == "completed"
    shown = observation_after(scripted_server, 0)
    assert "your last reply was cut at the output-token limit" in shown
    assert "Your reply had no ```repl code block, so nothing ran." in shown


async def test_one_endless_line_of_a_stream_is_not_read_past_the_calls_cap(
    scripted_server: ScriptedServer,
) -> None:
    """A hostile stream sends its whole reply as one event line: the line is not kept past the
    byte cap of the call's max_tokens, and the call fails saying so."""
    one_line = Reply(content="a" * 2_000_000, chunk_chars=2_000_000)
    cell = repl(
        "try:\n    llm_query('all at once')\nexcept LLMCallError as error:\n    print('failed:', error)"
    )
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('went on')")]}, sub=one_line))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "went on")
    shown = of_type(events, TurnExecuted)[0].observation
    assert "failed:" in shown
    assert "can take, and was not read" in shown
