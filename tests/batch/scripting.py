"""A scripted model and its folders for batch tests: each folder holds a contract whose lines
say its party, its term and its governing law; a question asks for one of them by its label,
and the model finds the answer in the row's documents, as a real one would.

An RLM root's first turn runs code that looks the label's line up in `context` and submits
what follows the label with that line as its source; `inventing-model` cites a sentence that
is in no document (`MADE_UP`). A direct call reads the documents in its prompt and answers
with the line in quotation marks. A question reads `What is the <label> of this contract?`
plus anything after it (so that questions can differ).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.scripted_rlm import asked, repl
from tests.scripted_server import Reply

GOOD, OTHER, INVENTING = "good-model", "other-model", "inventing-model"
MODELS = (GOOD, OTHER, INVENTING)
PRICES = tuple(flag for model in MODELS for flag in ("--price", f"openai/{model}=1,2"))
"""Dollar prices for the scripted models (under a dollar cap the engine needs one)."""
LABELS = ("party", "term", "law", "notice")
MADE_UP = "The auditors confirmed in writing that every clause of this contract is void."
COMPANIES = ("Acme Corporation", "Globex Limited", "Initech Holdings", "Umbrella Group",
             "Stark Industries")  # fmt: skip
_LABEL = re.compile(r"What is the (\w+) of this contract\?")


def facts(index: int) -> dict[str, str]:
    """What folder `index`'s contract says, by label."""
    return {
        "party": COMPANIES[index],
        "term": f"{index + 2} years from the signing date",
        "law": (
            "the laws of Delaware",
            "the laws of England",
            "the laws of Ontario",
            "the laws of Bavaria",
            "the laws of Victoria",
        )[index],  # fmt: skip
        "notice": f"{(index + 1) * 30} days in writing",
    }


def line_of(label: str, value: str) -> str:
    """The contract's line for `label` (long enough to be checked as a quoted passage)."""
    return f"The {label} of this agreement is {value}."


def make_folders(root: Path, count: int = 5) -> list[Path]:
    """`count` contract folders under `root`: `contract.txt` with the facts, `annex.md` beside."""
    folders = []
    for index in range(count):
        folder = root / "contracts" / f"c{index}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [line_of(label, value) for label, value in facts(index).items()]
        (folder / "contract.txt").write_text(
            "\n".join([f"Contract {index}", *lines, ""]), encoding="utf-8"
        )
        (folder / "annex.md").write_text(f"# Annex {index}\nNothing of note.\n", encoding="utf-8")
        folders.append(folder)
    return folders


def question(label: str, number: int) -> str:
    """A question for `label`, told apart from others by `number`."""
    return f"What is the {label} of this contract? (question {number})"


def rows(count: int = 20, folders: int = 5) -> list[dict[str, Any]]:
    """`count` rows over `folders` folders, each folder asked about every label."""
    return [
        {
            "id": f"q{number:02d}",
            "question": question(LABELS[number % len(LABELS)], number),
            "documents": f"contracts/c{number % folders}",
            "folder": number % folders,
            "label": LABELS[number % len(LABELS)],
        }
        for number in range(count)
    ]


def expected(row: dict[str, Any]) -> str:
    """The answer the scripted model gives to `row`."""
    return facts(row["folder"])[row["label"]]


def write_csv(path: Path, entries: Sequence[dict[str, Any]], extra: Sequence[str] = ()) -> Path:
    """A CSV questions file: id, question, documents and the `extra` columns the entries hold."""
    columns = ["id", "question", "documents", *extra]
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(entries)
    return path


def write_jsonl(path: Path, entries: Sequence[dict[str, Any]], extra: Sequence[str] = ()) -> Path:
    """A JSONL questions file of the entries' id, question, documents and `extra` keys."""
    keys = ("id", "question", "documents", *extra)
    path.write_text(
        "".join(json.dumps({k: e[k] for k in keys if k in e}) + "\n" for e in entries),
        encoding="utf-8",
    )
    return path


def _rlm_code(label: str, model: str) -> str:
    source = f"[{MADE_UP!r}]" if model == INVENTING else "[line]"
    return (
        "docs = context if isinstance(context, list) else [context]\n"
        f"lead = 'The {label} of this agreement is '\n"
        "line = next(l for d in docs for l in d.splitlines() if l.startswith(lead))\n"
        f"FINAL(line[len(lead):].rstrip('.'), sources={source})"
    )


def respond(request: dict[str, Any]) -> str | Reply:
    """The scripted model's reply to any request of a batch run."""
    seen = asked(request)
    model = str(request.get("model", "")).rsplit("/", 1)[-1]
    found = _LABEL.search(seen.prompt)
    if found is None:
        return Reply(status=400, content="the batch script has no reply for this request")
    label = found.group(1)
    if seen.kind == "rlm" and seen.turn == 0:
        return repl(_rlm_code(label, model))
    if seen.kind == "direct":
        lead = f"The {label} of this agreement is "
        line = next(line for line in seen.prompt.splitlines() if line.startswith(lead))
        return f"{line[len(lead) :].rstrip('.')}. The contract says: “{line}”"
    return Reply(status=400, content="the batch script has no reply for this turn")
