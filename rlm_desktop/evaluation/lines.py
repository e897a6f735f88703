"""OOLONG-style labelled lines (`Date: ... || User: <id> || Instance: <text>`), shared by the
aggregate and pairs tasks: each instance is a question whose label (TREC's coarse classes) is
known by construction but not written on the line."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from rlm_desktop.evaluation.tasks import GoldSpan, Scoring, Task, fill, joined_spans, task_id
from rlm_desktop.evaluation.words import ADJECTIVES, NOUNS

TEMPLATES: dict[str, tuple[str, ...]] = {
    "abbreviation": (
        "What does {ABBR} stand for?",
        "What is the full form of the acronym {ABBR}?",
    ),
    "entity": (
        "What kind of {noun} is used to build a {noun2}?",
        "Which breed of {noun} is kept near a {noun2}?",
    ),
    "description and abstract concept": (
        "Why is the {noun} considered {adj}?",
        "What is the meaning of the word {noun}?",
    ),
    "human being": (
        "Who built the first {adj} {noun}?",
        "Who is known as the father of the {noun}?",
    ),
    "location": (
        "Where is the {adj} {noun} found?",
        "In which country is the {noun} of {noun2} located?",
    ),
    "numeric value": (
        "How many {noun}s fit in one {noun2}?",
        "In what year was the {adj} {noun} first described?",
    ),
}
LABELS = tuple(TEMPLATES)
FIRST_DAY = date(2022, 1, 1)
LABEL_NOTE = (
    "Each line is `Date: ... || User: <id> || Instance: <text>`. Every instance is a question "
    "that belongs to exactly one of these labels: {labels}. The labels are not written on the "
    "lines; infer each from the instance."
)


@dataclass(frozen=True)
class Line:
    """One labelled line: who wrote it, when, the text, and its hidden label."""

    user: int
    day: date
    text: str
    label: str

    def render(self) -> str:
        """The line as the documents show it (without the label)."""
        return f"Date: {self.day:%b %d, %Y} || User: {self.user} || Instance: {self.text}"


def label_note() -> str:
    """The sentence that tells the model the line format and the labels."""
    return LABEL_NOTE.format(labels=", ".join(f"'{label}'" for label in LABELS))


def records_task(
    kind: str,
    drawn: tuple[int, int, int],
    lines: list[Line],
    question: str,
    answer: str,
    *,
    scoring: Scoring,
    details: dict[str, Any],
    evidence: Callable[[Line], bool] | None = None,
) -> Task:
    """The task of `kind` drawn as `(seed, length, index)`: `lines` as one document,
    records.txt, and `question` after the sentence that explains their format; the lines
    `evidence` picks (none without it) are the task's gold spans."""
    seed, length, index = drawn
    rendered = [line.render() for line in lines]
    spans = joined_spans(rendered)
    gold = tuple(
        GoldSpan(0, *spans[i]) for i, line in enumerate(lines) if evidence and evidence(line)
    )
    return Task(
        id=task_id(kind, seed, length, index),
        kind=kind,
        documents=(("records.txt", "\n".join(rendered)),),
        question=f"{label_note()} {question}",
        answer=answer,
        scoring=scoring,
        length=length,
        details=details,
        gold_spans=gold,
    )


def instance(rng: random.Random, label: str) -> str:
    """One instance text of `label`."""
    template = rng.choice(TEMPLATES[label])
    abbr = "".join(rng.choice("ABCDEFGHKLMNPRSTW") for _ in range(rng.randint(2, 4)))
    return template.format(
        ABBR=abbr, noun=rng.choice(NOUNS), noun2=rng.choice(NOUNS), adj=rng.choice(ADJECTIVES)
    )


def users(rng: random.Random, how_many: int) -> list[int]:
    """Distinct 5-digit user ids."""
    return rng.sample(range(10_000, 100_000), how_many)


def labelled_lines(
    rng: random.Random, length: int, user_ids: list[int], weights: list[float] | None = None
) -> list[Line]:
    """Lines until they hold about `length` tokens; labels drawn with `weights` (uniform by
    default, so counts differ by chance, as in OOLONG's synthetic split)."""
    lines: list[Line] = []

    def make() -> str:
        label = rng.choices(LABELS, weights=weights)[0]
        line = Line(
            user=rng.choice(user_ids),
            day=FIRST_DAY + timedelta(days=rng.randrange(3 * 365)),
            text=instance(rng, label),
            label=label,
        )
        lines.append(line)
        return line.render()

    fill(length, make)
    return lines
