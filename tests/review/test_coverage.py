"""Coverage is exact: what reached a model verbatim is read, once; nothing else is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlm_desktop import paths
from rlm_desktop.review.health.coverage import MIN_RUN, Coverage, CoverageIndex
from rlm_desktop.store import Store
from tests.review.health_runs import LEDGER, NOTE, health_of
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

TEXT = "".join(f"Row {i:04d} of the inventory lists {i * 13 % 101} pallets.\n" for i in range(400))
OTHER = "".join(
    f"Memo {i:03d}: shipment {i * 17 % 89} left the dock on time.\n" for i in range(200)
)


def coverage_of(
    *sources: str, documents: tuple[tuple[str, str], ...] = (("a.txt", TEXT),)
) -> Coverage:
    """The coverage of `documents` by `sources`.

    Sources wrap their quotes in » and «, which are in no document, so that a quote's edges are
    its own and not a neighbouring character that happens to match.
    """
    index = CoverageIndex(documents)
    index.add_all(sources)
    return index.coverage()


def test_a_slice_of_the_second_half_covers_exactly_that_half() -> None:
    half = len(TEXT) // 2
    result = coverage_of(f"Summarize this »{TEXT[half:]}« thanks.")
    (document,) = result.documents
    assert document.uncovered == ((0, half),)
    assert document.covered == len(TEXT) - half
    assert result.share == pytest.approx((len(TEXT) - half) / len(TEXT))


def test_overlapping_and_repeated_slices_count_once() -> None:
    result = coverage_of(
        "first »" + TEXT[100:5000],
        "second »" + TEXT[3000:8000] + "«",
        TEXT[100:5000],
        TEXT[100:5000],
    )
    (document,) = result.documents
    assert document.covered == 8000 - 100
    assert document.uncovered == ((0, 100), (8000, len(TEXT)))


def test_text_that_is_in_no_document_is_not_counted() -> None:
    invented = "".join(f"Row {i:04d} of the inventory lists 999 pallets.\n" for i in range(50))
    result = coverage_of(invented, "The quick brown fox jumps over the lazy dog. " * 20)
    assert result.documents[0].covered == 0
    assert result.share == 0.0


def test_passages_shorter_than_the_minimum_are_coincidences() -> None:
    assert coverage_of(TEXT[500 : 500 + MIN_RUN - 1]).documents[0].covered == 0
    assert coverage_of(TEXT[500 : 500 + MIN_RUN]).documents[0].covered == MIN_RUN


def test_each_document_is_covered_on_its_own() -> None:
    documents = (("a.txt", TEXT), ("b.txt", OTHER))
    result = coverage_of(OTHER[:1000], documents=documents)
    first, second = result.documents
    assert (first.name, first.covered, second.name, second.covered) == ("a.txt", 0, "b.txt", 1000)
    assert result.share == pytest.approx(1000 / (len(TEXT) + len(OTHER)))
    assert result.to_json()["documents"][1]["uncovered"] == [[1000, len(OTHER)]]


def test_coverage_grows_as_sources_arrive() -> None:
    index = CoverageIndex((("a.txt", TEXT),))
    index.add(TEXT[:2000])
    assert index.coverage().documents[0].covered == 2000
    index.add(TEXT[1000:4000])
    assert index.coverage().documents[0].covered == 4000


def test_text_that_quotes_nothing_is_probed_up_to_the_limit_and_the_rest_counted() -> None:
    index = CoverageIndex((("a.txt", TEXT),), probe_limit=5_000)
    quoted = "x" * 100 + TEXT
    assert index.passages(quoted) == [(0, 0, len(TEXT))]  # a match is jumped over, not probed
    nothing = "".join(f"no quote {n}; " for n in range(1_000))  # about 13,000 characters
    assert index.passages(nothing) == []
    assert index.unscanned == len(nothing) - (5_000 - 100)
    assert index.passages(TEXT[:3_000]) == []  # past the limit nothing more is scanned
    assert index.coverage().unscanned == len(nothing) - 4_900 + 3_000
    assert index.coverage().to_json()["unscanned_chars"] == index.unscanned


def test_quotes_far_into_a_long_source_are_found() -> None:
    """Quotes 70,000 and 280,000 characters into a source are found as one at its start is."""
    filler = "·" * 70_000
    first, second, third = TEXT[:200], TEXT[5_000:5_300], TEXT[9_000:9_100]
    source = "»" + first + "«" + filler + "»" + second + "«" + filler * 3 + "»" + third + "«"

    covered = coverage_of(source).documents[0]

    assert covered.covered == len(first) + len(second) + len(third)
    assert covered.read == ((0, 200), (5_000, 5_300), (9_000, 9_100))


def test_text_beyond_the_basic_plane_and_lone_surrogates_is_matched_by_characters() -> None:
    """Emoji and other characters beyond U+FFFF, and a lone surrogate a decoder let through,
    are one character each, as Python counts them."""
    document = "".join(f"🦩 flock {i} \ud800 counted at dawn; 𝔄𝔫𝔫𝔞𝔩𝔰 line {i}.\n" for i in range(300))
    quote = document[1_000:1_400]

    covered = coverage_of("»" + quote + "«", documents=(("birds.txt", document),)).documents[0]

    assert covered.read == ((1_000, 1_400),)


def test_a_span_of_the_documents_is_taken_as_it_is() -> None:
    index = CoverageIndex((("a.txt", TEXT),))
    assert index.span(0, 100, 5_000) == [(0, 100, 5_000)]
    assert index.span(0, len(TEXT) - 10, len(TEXT) + 99) == []  # shorter than MIN_RUN inside
    assert index.span(3, 0, 100) == []  # no such document
    assert index.unscanned == 0


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store(paths.database_path())
    yield opened
    opened.close()


async def test_a_real_run_covers_what_its_sub_call_and_its_output_showed(
    store: Store, scripted_server: ScriptedServer
) -> None:
    text = LEDGER.text
    half = len(text) // 2
    read = repl(
        "print(llm_query('Count the crates in »' + context[len(context) // 2:]))\n"
        "print(context[1000:3000])"
    )
    report = await health_of(
        store, scripted_server, scripted(root=[read, repl("FINAL('many')")], sub="40,000 crates")
    )
    (document,) = report.coverage.documents
    assert document.uncovered == ((0, 1000), (3000, half))
    assert document.covered == 2000 + len(text) - half


@pytest.mark.parametrize("status", [400, 404])
async def test_prompts_the_provider_refused_were_read_by_no_model(
    store: Store, scripted_server: ScriptedServer, status: int
) -> None:
    refused = Reply(status=status, content="model not found")
    report = await health_of(
        store, scripted_server, lambda _request: refused, documents=[NOTE], mode="direct"
    )
    assert report.status == "error"
    assert NOTE.text[:200] in scripted_server.chat_requests()[0]["messages"][-1]["content"]
    assert report.coverage.share == 0.0
