"""Each known failure mode, scripted into a real run, is found with its evidence; a healthy run
raises nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget
from rlm_desktop.engine.litellm_loader import load_litellm
from rlm_desktop.review.health import Finding, HealthReport
from rlm_desktop.review.health.truncation import NEVER_STOPS_ADVICE
from rlm_desktop.store import Store
from tests.review.health_runs import LEDGER, NOTE, health_of, rules
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

FINISH = repl('FINAL("The warehouse holds 120,345 crates.")', "Done.")
BATCHED = repl(
    "chunks = [context[i:i + 50000] for i in range(0, len(context), 50000)]\n"
    "counts = llm_query_batched([f'Count the crates in: {chunk}' for chunk in chunks])\n"
    "print(counts)"
)


@pytest.fixture
def store() -> Iterator[Store]:
    """The test's own session database."""
    opened = Store(paths.database_path())
    yield opened
    opened.close()


def root_of(store: Store, report: HealthReport) -> str:
    """The id of the run's root call."""
    return str(store.session(report.session_id)["calls"][0]["id"])


def only(report: HealthReport, kind: str, rule: str) -> Finding:
    """The one finding of `kind` and `rule`."""
    found = [f for f in report.findings if (f.kind, f.rule) == (kind, rule)]
    assert len(found) == 1, report.to_json()["findings"]
    return found[0]


async def test_a_healthy_run_raises_nothing_and_read_everything(
    store: Store, scripted_server: ScriptedServer
) -> None:
    report = await health_of(
        store, scripted_server, scripted(root=[BATCHED, FINISH], sub="About 40,000 crates.")
    )
    assert report.status == "completed", store.session(report.session_id)["session"]["error"]
    assert report.findings == ()
    assert report.coverage.share == 1.0
    assert report.coverage.documents[0].uncovered == ()


async def test_cells_that_keep_raising_make_a_weak_coder(
    store: Store, scripted_server: ScriptedServer
) -> None:
    failing = repl("print(crate_total)")
    report = await health_of(
        store, scripted_server, scripted(root=[failing, failing, failing, FINISH])
    )
    share = only(report, "weak_coder", "error_share")
    root = share.calls[0]
    assert share.turns == ((root, 0), (root, 1), (root, 2))
    assert share.figures == {"failing_turns": 3, "turns": 4, "share": 0.75}
    repeated = only(report, "weak_coder", "repeated_error")
    assert repeated.turns == ((root, 0), (root, 1), (root, 2))
    assert repeated.figures["error"] == "NameError: name 'crate_total' is not defined"
    assert "--model" in share.advice


async def test_replies_without_code_make_a_weak_coder(
    store: Store, scripted_server: ScriptedServer
) -> None:
    prose = "I believe the warehouse is large; let me think about it."
    report = await health_of(store, scripted_server, scripted(root=[prose, prose, FINISH]))
    finding = only(report, "weak_coder", "no_code")
    root = finding.calls[0]
    assert finding.turns == ((root, 0), (root, 1))
    assert {f.kind for f in report.findings} == {"weak_coder"}


async def test_a_failed_child_rlm_is_a_depth_finding(
    store: Store, scripted_server: ScriptedServer
) -> None:
    ask_child = repl(
        "try:\n"
        "    print(rlm_query('Count the crates of sector 3', context[:2000]))\n"
        "except Exception as error:\n"
        "    print('child failed:', error)"
    )
    responder = scripted(
        {"Count the crates of sector 3": [Reply(status=400, content="model overloaded")]},
        root=[ask_child, FINISH],
    )
    report = await health_of(store, scripted_server, responder, budget=Budget(max_depth=2))
    finding = only(report, "depth", "failed_children")
    assert len(finding.calls) == 1
    child = finding.calls[0]
    assert finding.figures["children"] == finding.figures["failed"] == 1
    assert finding.figures["reasons"][child].startswith("error: ")
    assert "model overloaded" in finding.figures["reasons"][child]
    root_turn = finding.turns[0]
    assert root_turn == (root_of(store, report), 0)


async def test_recursion_with_a_model_that_fails_at_the_root_is_a_depth_finding(
    store: Store, scripted_server: ScriptedServer
) -> None:
    responder = scripted(
        {"Add up sector 3": [repl("FINAL('12 crates')")]},
        root=[
            repl("print(rlm_query('Add up sector 3', context[:2000]))"),
            repl("print(totl)"),
            repl("print(context.crates)"),
            FINISH,
        ],
    )
    report = await health_of(store, scripted_server, responder, budget=Budget(max_depth=2))
    finding = only(report, "depth", "weak_model_recursed")
    root = finding.calls[0]
    assert finding.turns == ((root, 1), (root, 2))
    assert finding.figures == {"depth": 2, "root_failing_turns": 2}
    assert ("depth", "failed_children") not in rules(report)


async def test_the_turn_cap_fallback_is_a_brittle_answer(
    store: Store, scripted_server: ScriptedServer
) -> None:
    look = repl("print(len(context))")
    responder = scripted(root=[look, look, "FINAL(About 120,000 crates)"])
    report = await health_of(store, scripted_server, responder, budget=Budget(max_turns=2))
    assert report.status == "max_turns"
    finding = only(report, "brittle_answer", "partial_answer")
    assert finding.figures == {"turns": 2}
    assert finding.severity == "warning"


async def test_a_variable_name_given_in_a_prose_final_line_is_a_brittle_answer(
    store: Store, scripted_server: ScriptedServer
) -> None:
    responder = scripted(
        root=[repl("crate_total = 120345\nprint(crate_total)"), "FINAL(crate_total)"]
    )
    report = await health_of(store, scripted_server, responder)
    prose = only(report, "brittle_answer", "prose_final")
    assert prose.severity == "info"
    assert prose.turns == ((prose.calls[0], 1),)
    name = only(report, "brittle_answer", "variable_name")
    assert "'crate_total'" in name.message


async def test_final_var_of_a_list_is_a_brittle_answer(
    store: Store, scripted_server: ScriptedServer
) -> None:
    responder = scripted(root=[repl("counts = [12, 40, 7]\nFINAL_VAR('counts')")])
    report = await health_of(store, scripted_server, responder)
    finding = only(report, "brittle_answer", "non_text_value")
    assert "list" in finding.message
    assert finding.turns == ((finding.calls[0], 0),)


async def test_a_repeated_sub_call_prompt_is_money_wasted(
    store: Store, scripted_server: ScriptedServer
) -> None:
    twice = repl(
        "a = llm_query('Summarize sector 3')\nb = llm_query('Summarize sector 3')\n"
        "c = llm_query('Summarize sector 4')\nprint(a, b, c)"
    )
    report = await health_of(
        store, scripted_server, scripted(root=[twice, FINISH], sub="12 crates")
    )
    finding = only(report, "duplicate_sub_calls", "same_prompt")
    assert len(finding.calls) == 2
    assert (finding.figures["prompts"], finding.figures["repeats"]) == (1, 1)
    assert finding.figures["wasted_tokens"] > 0
    assert finding.turns == ((root_of(store, report), 0),)


async def test_sub_calls_in_a_loop_are_serial_and_a_batch_is_not(
    store: Store, scripted_server: ScriptedServer
) -> None:
    slow = Reply(content="No damaged crates here.", delay_s=0.4)
    loop = repl("for i in range(4):\n    print(llm_query(f'Check sector {i} for damage'))")
    report = await health_of(store, scripted_server, scripted(root=[loop, FINISH], sub=slow))
    finding = only(report, "serial_sub_calls", "batchable")
    assert len(finding.calls) == 4
    (cell,) = finding.figures["cells"]
    assert (cell["turn"], cell["cell"], cell["calls"], cell["waves"]) == (0, 0, 4, 4)
    assert cell["saving_s"] >= 3 * 0.4
    assert finding.figures["saving_s"] == cell["saving_s"]

    batch = repl("print(llm_query_batched([f'Check sector {i} for damage' for i in range(4)]))")
    batched = await health_of(store, scripted_server, scripted(root=[batch, FINISH], sub=slow))
    assert "serial_sub_calls" not in {f.kind for f in batched.findings}


async def test_a_chain_of_dependent_sub_calls_is_not_serial(
    store: Store, scripted_server: ScriptedServer
) -> None:
    slow = Reply(content="Sector totals so far: 52 crates.", delay_s=0.4)
    chain = repl(
        "note = llm_query('Start a tally of the crates')\n"
        "for i in range(3):\n"
        "    note = llm_query(f'Continue this tally with sector {i}: {note}')\n"
        "print(note)"
    )
    report = await health_of(store, scripted_server, scripted(root=[chain, FINISH], sub=slow))
    assert "serial_sub_calls" not in {f.kind for f in report.findings}


async def test_a_turn_that_fans_out_widely_is_a_cost_finding(
    store: Store, scripted_server: ScriptedServer
) -> None:
    wide = repl(
        "print(len(llm_query_batched([f'Line {i}: ' + context[i * 100:(i + 1) * 100] for i in range(70)])))"
    )
    report = await health_of(store, scripted_server, scripted(root=[wide, FINISH]))
    finding = only(report, "cost_tail", "fanout")
    root = finding.calls[0]
    assert finding.turns == ((root, 0),)
    assert finding.figures["most"] == 70


async def test_re_sending_long_observations_every_turn_is_a_cost_finding(
    store: Store, scripted_server: ScriptedServer
) -> None:
    dump = repl("print(context[:60000])")
    report = await health_of(
        store,
        scripted_server,
        scripted(root=[dump] * 12 + [FINISH]),
        output_limit_chars=80_000,
        compact_tokens=None,  # the run re-sends everything, as one without compaction would
        compact_window_share=None,
    )
    finding = only(report, "cost_tail", "resent_context")
    assert finding.figures["share"] >= 0.8
    assert finding.figures["resent_tokens"] >= 200_000
    assert finding.calls == (root_of(store, report),)


async def test_rlm_mode_on_a_short_input_is_flagged(
    store: Store, scripted_server: ScriptedServer
) -> None:
    look = repl("print(context[:200])")
    report = await health_of(
        store, scripted_server, scripted(root=[look, FINISH]), documents=[NOTE]
    )
    finding = only(report, "short_input", "direct_would_do")
    assert finding.figures["input_tokens"] <= finding.figures["direct_limit"] == 16_000
    assert finding.figures["spent_tokens"] > 0


async def test_a_reply_cut_at_the_output_limit_names_a_roomier_profile(
    store: Store, scripted_server: ScriptedServer
) -> None:
    cut = Reply(content=repl("print(len(context))"), finish_reason="length")
    report = await health_of(store, scripted_server, scripted(root=[cut, FINISH]), profile="small")
    finding = only(report, "truncated", "repl_reply")
    assert finding.turns == ((finding.calls[0], 0),)
    assert (
        "--profile reasoning (8,192 output tokens for root calls, against 4,096" in finding.advice
    )


async def test_a_reply_that_ran_to_the_limit_repeating_itself_is_not_told_to_take_more_room(
    store: Store, scripted_server: ScriptedServer
) -> None:
    looping = "What is the next question? Let me think about it.\n" * 80
    cut = Reply(content=looping, finish_reason="length")
    report = await health_of(store, scripted_server, scripted(root=[cut, FINISH]), profile="small")
    finding = only(report, "truncated", "repl_reply")
    assert finding.advice == NEVER_STOPS_ADVICE
    assert "--profile" not in finding.advice
    assert ("weak_coder", "repeating_output") in rules(report)


async def test_a_costly_run_among_cheap_ones_is_in_the_tail(
    store: Store, scripted_server: ScriptedServer
) -> None:
    cheap = scripted(root=[FINISH])
    for _ in range(10):
        await health_of(store, scripted_server, cheap, documents=[LEDGER])
    fan_out = repl("llm_query_batched(['item %d' % i for i in range(40)])")
    costly = scripted(root=[fan_out, FINISH], sub=Reply(content="long", completion_tokens=4_000))
    report = await health_of(store, scripted_server, costly)
    finding = only(report, "cost_tail", "history_percentile")
    assert finding.figures["unit"] == "tokens"
    assert finding.figures["runs"] == 10
    assert finding.figures["percentile"] == 100.0


async def test_sending_the_whole_document_with_every_question_is_a_cost_finding(
    store: Store, scripted_server: ScriptedServer
) -> None:
    each = repl(
        "questions = ['How many crates?', 'Which sector is fullest?', 'Any item twice?', "
        "'Which sector is emptiest?', 'Which item is rarest?']\n"
        "print(llm_query_batched([q + ' ' + context for q in questions]))"
    )
    report = await health_of(store, scripted_server, scripted(root=[each, FINISH], sub="Unsure."))
    finding = only(report, "cost_tail", "resent_documents")
    assert finding.figures == {
        "quoted_chars": 5 * len(LEDGER.text),
        "read_chars": len(LEDGER.text),
        "factor": 5.0,
    }
    assert len(finding.calls) == 5
    assert report.coverage.share == 1.0


@pytest.mark.parametrize("status", [400, 404])
async def test_a_run_the_model_never_replied_to_says_so_with_the_error(
    store: Store, scripted_server: ScriptedServer, status: int
) -> None:
    refused = Reply(status=status, content="model 'gemma' not found")
    report = await health_of(store, scripted_server, lambda _request: refused)
    finding = only(report, "no_reply", "every_request_failed")
    assert finding.severity == "warning"
    assert f"HTTP {status}" in finding.figures["error"]
    assert "model 'gemma' not found" in finding.message
    assert finding.calls == (root_of(store, report),)


async def test_a_reply_that_repeats_itself_is_named(
    store: Store, scripted_server: ScriptedServer
) -> None:
    looping = "The warehouse holds many crates. Let me count them again.\n" * 60
    report = await health_of(
        store, scripted_server, scripted(root=[looping + repl("print(1)"), FINISH])
    )
    finding = only(report, "weak_coder", "repeating_output")
    root = root_of(store, report)
    assert (finding.calls, finding.turns) == ((root,), ((root, 0),))
    assert finding.figures["replies"] == 1
    assert finding.figures["packed_share"] <= 0.1


async def test_a_long_reply_that_does_not_repeat_is_not_named(
    store: Store, scripted_server: ScriptedServer
) -> None:
    varied = "".join(
        f"Sector {i} may hold {i * 37 % 211} crates of kind {i * 7 % 53}.\n" for i in range(60)
    )
    report = await health_of(
        store, scripted_server, scripted(root=[varied + repl("print(1)"), FINISH])
    )
    assert ("weak_coder", "repeating_output") not in rules(report)


async def test_a_run_that_timed_out_with_sub_calls_in_flight_names_them(
    store: Store, scripted_server: ScriptedServer
) -> None:
    fan_out = repl("print(llm_query_batched([f'part {i}: ' + context[:50] for i in range(4)]))")
    slow = Reply(content="too late", delay_s=30)
    load_litellm()  # as the window does at start: the time limit counts the run's own start-up
    report = await health_of(
        store,
        scripted_server,
        scripted(root=[fan_out, FINISH], sub=slow),
        budget=Budget(timeout_s=3),
    )
    assert report.status == "timeout"
    finding = only(report, "ended_early", "timeout")
    assert finding.severity == "warning"
    assert finding.figures["unanswered_sub_calls"] == 4
    assert len(finding.calls) == 4
    assert "4 sub-calls never got a reply" in finding.message
    assert report.coverage.share < 1.0  # what the stopped sub-calls were given was not read


async def test_requests_the_provider_made_the_app_retry_are_counted(
    store: Store, scripted_server: ScriptedServer
) -> None:
    answers = scripted(root=[FINISH])
    failures = iter([Reply(status=500, content="overloaded"), Reply(status=503, content="busy")])

    def flaky(request: dict[str, object]) -> str | Reply:
        return next(failures, None) or answers(request)

    report = await health_of(store, scripted_server, flaky)
    assert report.status == "completed"
    finding = only(report, "provider_errors", "retried")
    assert finding.figures == {"requests": 1, "retries": 2}
    assert finding.calls == (root_of(store, report),)
    assert ("ended_early", "completed") not in rules(report)
