"""`check_sources` on texts: each way a quote can match, and each way it must not."""

from __future__ import annotations

from rlm_desktop.engine.sandbox.given_sources import GivenSource
from rlm_desktop.review.health.sources import check_sources, quotes_in_answer

REPORT = (
    "Q1 revenue was 4.2 million euros, up from 3.9 million.\n"
    "The  Heron\tline sold   “well” in the north — and poorly in the south.\n"
    "Staff numbers did not change.\n"
)
DOCUMENTS = [("report.txt", REPORT), ("empty.txt", "")]


def check(*quotes: str, answer: str = "", question: str = "") -> list[tuple[str, int | None]]:
    given = [GivenSource(quote=quote) for quote in quotes]
    return [
        (source.match, source.start) for source in check_sources(DOCUMENTS, given, answer, question)
    ]


def test_whitespace_case_quotation_marks_and_dashes_are_made_alike() -> None:
    [source] = check_sources(
        DOCUMENTS, [GivenSource(quote='the heron line sold "well" in the north - and poorly')], ""
    )
    assert source.match == "normalized"
    assert REPORT[source.start : source.end] == (
        "The  Heron\tline sold   “well” in the north — and poorly"
    )


def test_an_ellipsis_stands_for_text_left_out_in_order_in_one_document() -> None:
    [found] = check_sources(
        DOCUMENTS, [GivenSource(quote="Q1 revenue was … up from 3.9 million")], ""
    )
    assert (found.match, found.start, found.end) == ("exact", 0, REPORT.index("million.\n") + 7)
    assert check("up from 3.9 million ... Q1 revenue was") == [("not_found", None)]


def test_a_changed_figure_is_never_an_approximate_match() -> None:
    assert check("Q1 revenue was 4.2 milion euros, up from 3.9 million") == [("fuzzy", 0)]
    assert check("Q1 revenue was 4.7 million euros, up from 3.9 million") == [("not_found", None)]


def test_short_quotes_must_match_exactly_or_normalised() -> None:
    assert check("Staff numbrs") == [("not_found", None)]
    assert check("staff NUMBERS") == [("normalized", REPORT.index("Staff"))]


def test_spans_are_checked_against_their_document() -> None:
    spans = [GivenSource(span=(0, 0, 10)), GivenSource(span=(1, 0, 1)), GivenSource(span=(5, 0, 1))]
    checked = check_sources(DOCUMENTS, spans, "")
    assert [(s.match, s.quote) for s in checked] == [
        ("span", REPORT[:10]),
        ("not_found", "(1, 0, 1)"),
        ("not_found", "(5, 0, 1)"),
    ]
    assert "outside empty.txt (0 characters)" in checked[1].note
    assert "names document 5, but the run has 2" in checked[2].note


def test_quotes_in_the_answer_skip_terms_the_question_and_sources_already_given() -> None:
    answer = (
        'The “Heron” line — which the report says "sold well in the north" — and, as asked, '
        '"how did the Heron line sell", and "Staff numbers did not change".'
    )
    assert quotes_in_answer(answer)[0] == "sold well in the north"
    checked = check_sources(
        DOCUMENTS,
        [GivenSource(quote="Staff numbers did not change")],
        answer,
        question="How did the Heron line sell?",
    )
    assert [(s.origin, s.quote, s.match) for s in checked] == [
        ("sources", "Staff numbers did not change", "exact"),
        ("answer", "sold well in the north", "not_found"),
    ]


def test_block_quotes_in_the_answer_are_checked() -> None:
    answer = (
        "The report:\n\n> Q1 revenue was 4.2 million euros,\n> up from 3.9 million.\n\nSo it grew."
    )
    [source] = check_sources(DOCUMENTS, [], answer)
    assert (source.origin, source.match, source.start) == ("answer", "exact", 0)


def test_a_document_built_to_make_a_pattern_backtrack_is_searched_in_linear_time() -> None:
    # A pattern allowing any whitespace between the words would retry at every start position
    # here, 900 words deep each time: hours, against the suite's time limit per test.
    hostile = ("a " * 200_000) + "b"
    quote = "  ".join(["a"] * 900) + "  c"
    [source] = check_sources([("hostile.txt", hostile)], [GivenSource(quote=quote)], "")
    assert source.match == "fuzzy"
    assert set(hostile[source.start : source.end]) == {"a", " "}


def test_emphasis_the_answer_added_to_a_quote_does_not_make_it_a_misquote() -> None:
    answer = "The report says “Q1 revenue was **4.2 million euros**, up from 3.9 million”."
    [source] = check_sources(DOCUMENTS, [], answer)
    assert (source.match, source.start) == ("exact", 0)
    assert source.quote == "Q1 revenue was **4.2 million euros**, up from 3.9 million"
