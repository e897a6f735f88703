"""The quick check for header-like secrets says what the case-blind pattern says, on every text."""

from __future__ import annotations

import random
import re

import pytest

from rlm_desktop.redact import REDACTED, Redactor, may_hold_header

HINT = re.compile(r"(?i)uthoriz|pi[-_]?key|earer")

TRICKY = [
    "",
    "AUTHORIZATION: Bearer abc123def456",
    "aUtHoRiZaTiOn",
    "API-KEY",
    "Api_Key",
    "apikey",
    "BEARER",
    "the quarter's figures, nothing out of the ordinary",
    "apİkey=abc123def456",  # a case-blind match takes İ for i
    "apıkey=abc123def456",  # and the dotless ı
    "api\u212aey=abc123def456",  # and the Kelvin sign for k
    "authorİzation",
    "résumé: authorization pending",
    "« BEARER » ",
    "pi key",
    "p\u0130-KEY",
]


@pytest.mark.parametrize("text", TRICKY)
def test_the_quick_check_agrees_with_the_pattern(text: str) -> None:
    assert may_hold_header(text) is (HINT.search(text) is not None)


PIECES = ["uthoriz", "earer", "pikey", "pi-key", "pi_key", "İ", "ı", "\u212a", "ß", "é", " "]
LETTERS = "AaBbEeIiKkPpRrTtUuZzHhOoYy-_"


def test_the_quick_check_agrees_with_the_pattern_on_any_mix() -> None:
    """Twenty thousand mixes of the hint words' pieces, letters in either case and the letters
    a case-blind match treats as theirs (a fixed seed: the same mixes every run)."""
    chance = random.Random(45)
    for _ in range(20_000):
        pieces = [
            chance.choice(PIECES)
            if chance.random() < 0.3
            else "".join(chance.choice(LETTERS) for _ in range(chance.randint(1, 6)))
            for _ in range(chance.randint(0, 8))
        ]
        text = "".join(pieces)
        assert may_hold_header(text) is (HINT.search(text) is not None), text


def test_a_header_in_a_long_document_in_any_case_is_still_redacted() -> None:
    filler = "the quarter's figures, nothing out of the ordinary.\n" * 2000
    for header in ("AUTHORIZATION: Bearer sk-live-0123456789", "api\u212aey=sk0123456789abcdef"):
        scrubbed = Redactor().text(filler + header + "\n" + filler)
        assert REDACTED in scrubbed
        assert "0123456789" not in scrubbed


def test_what_it_leaves_alone_joined_it_leaves_alone_in_every_part() -> None:
    """The store asks once of an event's strings joined (`Redactor.leaves_alone`): whenever that
    says nothing is to scrub, scrubbing each part changes none of them (mixes of secrets' pieces,
    the hint words' and whole secrets; a fixed seed)."""
    secret = "sk-live-0a9b8c7d"
    redactor = Redactor([secret])
    pieces = [*PIECES, secret, secret[:6], secret[6:], "api_key=", "Bearer ", "0123456789"]
    chance = random.Random(46)
    asked = left_alone = 0
    for _ in range(5_000):
        parts = [
            "".join(chance.choice(pieces + list(LETTERS)) for _ in range(chance.randint(0, 5)))
            for _ in range(chance.randint(1, 4))
        ]
        asked += 1
        if redactor.leaves_alone("\n".join(parts)):
            left_alone += 1
            assert [redactor.text(part) for part in parts] == parts, parts
    assert 0 < left_alone < asked  # both ways were taken
