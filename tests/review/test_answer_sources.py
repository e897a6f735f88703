"""Answers with sources, in real runs: the engine over the scripted server, real workers, a real
SQLite file, then read back by `session_health` as the CLI, the window and the exports read it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import ContextDocument
from rlm_desktop.review.health import HealthReport
from rlm_desktop.store import Store
from tests.review.health_runs import health_of, rules
from tests.scripted_rlm import repl, rlm_requests, scripted
from tests.scripted_server import ScriptedServer

MINUTES = ContextDocument(
    name="minutes.txt",
    text=(
        "Board minutes, 4 March.\n"
        "The board approved the Heron budget of 2.4 million euros for the coming year.\n"
        "Ms Okafor said the   supplier contract   would be reviewed in April.\n"
        + "".join(f"Item {i}: routine business, noted without discussion.\n" for i in range(400))
        + "The meeting closed at 17:40 after a vote on the Kestrel site.\n"
    ),
)
LETTER = ContextDocument(
    name="letter.txt",
    text="Dear Board,\nWe regret that deliveries to the Kestrel site will be late by six weeks.\n",
)
DOCUMENTS = (MINUTES, LETTER)
QUERY = "What did the board decide about the Heron budget?"
APPROVED = "The board approved the Heron budget of 2.4 million euros for the coming year."


@pytest.fixture
def store() -> Iterator[Store]:
    """The test's own session database."""
    opened = Store(paths.database_path())
    yield opened
    opened.close()


async def answered(store: Store, server: ScriptedServer, *turns: str) -> HealthReport:
    return await health_of(store, server, scripted(root=turns), documents=DOCUMENTS, query=QUERY)


def by_match(report: HealthReport) -> list[tuple[str, str]]:
    return [(source.quote, source.match) for source in report.sources]


async def test_an_exact_quote_is_found_where_it_is(
    store: Store, scripted_server: ScriptedServer
) -> None:
    report = await answered(
        store,
        scripted_server,
        repl(f'FINAL("It approved 2.4 million euros.", sources=[{APPROVED!r}])'),
    )
    [source] = report.sources
    assert (source.match, source.document, source.document_index) == ("exact", "minutes.txt", 0)
    assert MINUTES.text[source.start : source.end] == APPROVED
    assert ("brittle_answer", "unsupported_quote") not in rules(report)
    assert report.to_json()["sources"][0]["quote"] == APPROVED


async def test_a_quote_with_its_spacing_and_case_changed_is_found_normalised(
    store: Store, scripted_server: ScriptedServer
) -> None:
    report = await answered(
        store,
        scripted_server,
        repl(
            "FINAL('Reviewed in April.', "
            "sources=['ms okafor said the supplier contract would be reviewed in april'])"
        ),
    )
    [source] = report.sources
    assert source.match == "normalized"
    assert MINUTES.text[source.start : source.end] == (
        "Ms Okafor said the   supplier contract   would be reviewed in april".replace(
            "april", "April"
        )
    )


async def test_a_paraphrase_is_not_found_and_is_a_finding(
    store: Store, scripted_server: ScriptedServer
) -> None:
    made_up = "The board rejected the Heron budget and asked for a smaller plan next year."
    report = await answered(
        store, scripted_server, repl(f'FINAL("It was rejected.", sources=[{made_up!r}])')
    )
    [source] = report.sources
    assert source.match == "not_found"
    assert source.start is None
    assert source.document is None
    assert source.score is not None
    assert source.score < 90
    [finding] = [f for f in report.findings if f.rule == "unsupported_quote"]
    assert finding.kind == "brittle_answer"
    assert finding.severity == "warning"
    assert "rejected the Heron budget" in finding.message
    assert finding.figures == {"not_found": 1, "sources": 1, "numbers": [1]}


async def test_a_quote_that_changes_a_figure_is_not_found(
    store: Store, scripted_server: ScriptedServer
) -> None:
    changed = APPROVED.replace("2.4", "3.4")
    report = await answered(
        store, scripted_server, repl(f'FINAL("3.4 million.", sources=[{changed!r}])')
    )
    assert by_match(report) == [(changed, "not_found")]


async def test_a_quote_with_a_typo_is_found_approximately_with_its_score(
    store: Store, scripted_server: ScriptedServer
) -> None:
    typo = APPROVED.replace("approved", "aproved").replace("coming", "comming")
    report = await answered(store, scripted_server, repl(f'FINAL("Approved.", sources=[{typo!r}])'))
    [source] = report.sources
    assert source.match == "fuzzy"
    assert source.score is not None
    assert 90 <= source.score < 100
    assert APPROVED[:40] in MINUTES.text[source.start : source.end + 5]


async def test_a_span_outside_its_document_is_refused_with_a_note_to_the_model(
    store: Store, scripted_server: ScriptedServer
) -> None:
    end = len(LETTER.text) + 50
    report = await answered(
        store,
        scripted_server,
        repl(f'FINAL("Late deliveries.", sources=[(1, 0, {end})])'),
        repl('FINAL("Late deliveries.", sources=[(1, 11, 80)])'),
    )
    second_turn = rlm_requests(scripted_server, QUERY)[1]
    told = second_turn["messages"][-1]["content"]
    assert "SourceError" in told
    assert "outside document 1" in told
    assert f"{len(LETTER.text):,} characters" in told
    [source] = report.sources
    assert (source.match, source.document_index, source.start, source.end) == ("span", 1, 11, 80)
    assert source.quote == LETTER.text[11:80]


async def test_sources_on_final_var_and_in_the_answer_dict(
    store: Store, scripted_server: ScriptedServer
) -> None:
    report = await answered(
        store,
        scripted_server,
        repl(
            "verdict = 'Approved, 2.4 million euros.'\n"
            "quote = context[0][context[0].index('The board'):context[0].index('year.') + 5]\n"
            "FINAL_VAR('verdict', sources=[quote, 'deliveries to the Kestrel site will be late'])"
        ),
    )
    assert by_match(report) == [
        (APPROVED, "exact"),
        ("deliveries to the Kestrel site will be late", "exact"),
    ]
    assert report.sources[1].document == "letter.txt"
    dict_report = await answered(
        store,
        scripted_server,
        repl(
            "answer['content'] = 'The meeting closed at 17:40.'\n"
            "answer['sources'] = ['The meeting closed at 17:40']\n"
            "answer['ready'] = True"
        ),
    )
    assert by_match(dict_report) == [("The meeting closed at 17:40", "exact")]


async def test_a_final_line_in_prose_keeps_its_sources(
    store: Store, scripted_server: ScriptedServer
) -> None:
    report = await answered(
        store,
        scripted_server,
        f'I have what I need.\nFINAL("2.4 million euros", sources=[{APPROVED!r}])',
    )
    assert by_match(report) == [(APPROVED, "exact")]


async def test_quoted_passages_in_the_answer_are_checked_too(
    store: Store, scripted_server: ScriptedServer
) -> None:
    answer = (
        "The minutes say “The board approved the Heron budget” and add that "
        '"the chairman resigned in protest over the Heron plan", which I cannot confirm.'
    )
    report = await answered(store, scripted_server, repl(f"FINAL({answer!r})"))
    assert by_match(report) == [
        ("The board approved the Heron budget", "exact"),
        ("the chairman resigned in protest over the Heron plan", "not_found"),
    ]
    assert [source.origin for source in report.sources] == ["answer", "answer"]
    assert ("brittle_answer", "unsupported_quote") in rules(report)


async def test_without_sources_the_sub_calls_reading_is_shown(
    store: Store, scripted_server: ScriptedServer
) -> None:
    turns = [
        repl(
            "first = llm_query('Find the budget decision in: ' + context[0][:300])\n"
            "second = llm_query('Find any delays in: ' + context[1])\n"
            "print(first, second)"
        ),
        repl('FINAL("The board approved 2.4 million euros for Heron.")'),
    ]

    def sub(prompt: str) -> str:
        return "Approved: 2.4 million euros." if "budget" in prompt else "Deliveries are late."

    report = await health_of(
        store, scripted_server, scripted(root=turns, sub=sub), documents=DOCUMENTS, query=QUERY
    )
    assert report.sources == ()
    read = [(p.document, p.start, p.end, p.used) for p in report.read]
    assert read == [("minutes.txt", 0, 300, True), ("letter.txt", 0, len(LETTER.text), False)]
    shape = report.to_json()["read_to_answer"]
    assert shape[0]["document_index"] == 0
    assert shape[0]["call_id"] == report.read[0].call_id


async def test_a_reply_whose_times_the_answer_gives_as_a_range_was_used(
    store: Store, scripted_server: ScriptedServer
) -> None:
    turns = [
        repl("print(llm_query('When did the outage start and end? ' + context[1]))"),
        repl('FINAL("The outage ran 02:13:05-02:41:50.")'),
    ]
    report = await health_of(
        store,
        scripted_server,
        scripted(root=turns, sub="From 02:13:05 to 02:41:50 UTC."),
        documents=DOCUMENTS,
        query="When was the outage?",
    )
    assert [(p.document, p.used) for p in report.read] == [("letter.txt", True)]
