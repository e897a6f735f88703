"""Scripted models for evaluation tests: `good-model` answers every task right, `bad-model`
wrong, `inventing-model` right, read from what each request asks (through
`tests.scripted_rlm`).

An RLM root's first turn submits its answer with `FINAL(answer, sources=[...])`; a direct call
answers in one reply, without sources. A wrong answer to a numeric task is off by
`NUMERIC_ERROR`, any other is `WRONG`. As sources, `good-model` quotes the task's gold passages
word for word, `bad-model` a real passage that is none of them (the first such line), and
`inventing-model` a sentence that is in no document (`MADE_UP`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop.evaluation.tasks import Task
from tests.scripted_rlm import QUESTION, asked, repl
from tests.scripted_server import Reply

if TYPE_CHECKING:
    from rlm_desktop.evaluation.task_sets import TaskSpec
    from rlm_desktop.ui.evaluation.dialog import EvaluationDialog
    from tests.scripted_server import ScriptedServer

GOOD, BAD, INVENTING = "good-model", "bad-model", "inventing-model"
MODELS = (GOOD, BAD, INVENTING)
NUMERIC_ERROR = 2
WRONG = "I could not find it."
MADE_UP = "According to the ledger, the auditors confirmed this in writing on the first page."
PRICES = tuple(flag for model in MODELS for flag in ("--price", f"openai/{model}=1,2"))
"""Dollar prices for the scripted models (under a dollar cap the engine needs one)."""


def answer_for(task: Task, model: str) -> str:
    """What the scripted `model` answers to `task`."""
    if model != BAD:
        return task.answer
    if task.scoring == "numeric":
        return str(int(task.answer) + NUMERIC_ERROR)
    return WRONG


def sources_for(task: Task, model: str) -> list[str]:
    """The quotes the scripted `model` gives as the sources of its answer to `task`."""
    if model == GOOD:
        return [span.text(task.documents) for span in task.gold_spans]
    if model == INVENTING:
        return [MADE_UP]
    return [off_gold_line(task)]


def off_gold_line(task: Task) -> str:
    """The first non-blank line of the first document that no gold span of `task` touches
    (its first occurrence, where an exact quote of it is found, is that line itself)."""
    offset = 0
    for line in task.documents[0][1].split("\n"):
        start, end = offset, offset + len(line)
        offset = end + 1
        touched = any(
            span.document_index == 0 and span.start < end and start < span.end
            for span in task.gold_spans
        )
        if line.strip() and not touched:
            return line
    raise AssertionError(f"{task.id} has no line outside its gold spans")


def responder(tasks: Sequence[Task]) -> Any:
    """A `ScriptedServer` responder answering `tasks` (their questions must differ)."""
    by_question = {task.question: task for task in tasks}
    assert len(by_question) == len(tasks), "scripted tasks need distinct questions"

    def respond(request: dict[str, Any]) -> str | Reply:
        seen = asked(request)
        model = str(request.get("model", "")).rsplit("/", 1)[-1]
        if seen.kind == "direct":
            question = seen.prompt.rsplit(QUESTION, 1)[-1]
            return answer_for(by_question[question], model)
        if seen.kind == "rlm" and seen.turn == 0:
            task = by_question[seen.prompt]
            answer, sources = answer_for(task, model), sources_for(task, model)
            return repl(f"FINAL({answer!r}, sources={sources!r})")
        return Reply(status=400, content="the evaluation script has no reply for this request")

    return respond


def numeric_tasks_file(folder: Path, count: int = 2) -> Path:
    """A user's task file of `count` numeric questions over inline documents."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(count):
        text = "\n".join(
            f"crate {j}: {'apples' if j % (i + 2) == 0 else 'pears'}" for j in range(40)
        )
        lines.append(
            {
                "id": f"apples-{i}",
                "question": f"How many crates hold apples in inventory {i}? Answer with a number.",
                "answer": str(sum(1 for j in range(40) if j % (i + 2) == 0)),
                "scoring": "numeric",
                "documents": [{"name": f"inventory-{i}.txt", "text": text}],
            }
        )
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def fill_form(dialog: EvaluationDialog, server: ScriptedServer, spec: TaskSpec) -> None:
    """The evaluation page's form set for `spec`'s needle tasks: a good and a bad setting over
    `server`, priced, with a budget, one trial at a time."""
    form = dialog.form
    form.lengths.setText("200")
    form.count.setValue(spec.count)
    form.seed.setValue(spec.seed)
    form.settings.setPlainText(
        f"good:model=openai/{GOOD},mode=rlm,depth=1\nbad:model=openai/{BAD},mode=direct"
    )
    form.api_base.setText(server.base_url)
    form.prices.setText(f"openai/{GOOD} = 1, 2; openai/{BAD} = 1, 2")
    form.max_cost.setValue(5.0)
    form.concurrency.setValue(1)
