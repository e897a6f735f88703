"""DSPy's `dspy.RLM` trajectories: `Prediction.trajectory`, a list of `{reasoning, code, output}`
steps, saved as a JSON list, as a JSON object holding it under `trajectory` (a prediction's
fields beside it: the answer), or as JSON Lines of steps.

Each step is a turn of one root call whose reply is its reasoning and code and whose one cell
printed the output; the step that submitted (`SUBMIT: ...` or `FINAL: ...`) gives the answer
when the prediction's fields do not.
"""

from __future__ import annotations

import re

from rlm_desktop.importing.reading import Entry, as_text
from rlm_desktop.importing.trajectory import Call, Cell, Trajectory, Turn

LEFT_OUT = (
    "models, token usage and cost: a DSPy trajectory does not record them",
    "times: a DSPy trajectory records none (each step is shown taking no time)",
    "sub-calls (llm_query) made in a step: DSPy keeps only what the step printed",
    "the question and the documents: a trajectory holds neither",
)
_SUBMITTED = re.compile(r"(?:SUBMIT|FINAL): ?(.*)", re.DOTALL)
_PREDICTION_KEYS = ("trajectory", "final_reasoning")


def is_step(entry: Entry) -> bool:
    """True for an object in the shape of a DSPy `REPLEntry`."""
    return isinstance(entry.data, dict) and entry.has("code") and entry.has("output")


def steps_of(entries: list[Entry], whole_document: bool) -> tuple[list[Entry], Entry | None]:
    """The steps of a DSPy file, and the prediction they came in (None for a bare list)."""
    if not whole_document:
        return entries, None
    data = entries[0].data
    if isinstance(data, list):
        if not all(isinstance(step, dict) for step in data):
            raise entries[0].fail("is a list that holds something other than DSPy steps")
        return [Entry(1, step) for step in data], None
    prediction = entries[0]
    return prediction.items("trajectory"), prediction


def read(steps: list[Entry], prediction: Entry | None) -> Trajectory:
    """The run a DSPy trajectory records, as one root call with a turn per step."""
    root = Call(id="c1", kind="rlm", depth=1, model="", prompt="")
    for step in steps:
        if not is_step(step):
            raise step.fail("is not a DSPy step (an object with 'code' and 'output')")
        reasoning, code = step.text("reasoning"), step.text("code")
        output = as_text(step.get("output"))
        reply = (f"{reasoning}\n" if reasoning else "") + f"```python\n{code}\n```"
        root.turns.append(Turn(reply=reply, cells=[Cell(code=code, stdout=output)],
                               observation=output, duration_s=0.0))  # fmt: skip
    answer = _answer(steps, prediction)
    trajectory = Trajectory(source="dspy", query="", model="", root=root, left_out=list(LEFT_OUT))
    if answer is not None:
        root.answer, root.answer_source, root.response = answer, "FINAL", answer
        trajectory.answer = answer
    else:
        trajectory.status, trajectory.answer_kind = "error", "none"
        root.status = "error"
        trajectory.error = root.error = "the trajectory ends without a submitted answer"
    return trajectory


def _answer(steps: list[Entry], prediction: Entry | None) -> str | None:
    if prediction is not None:
        outputs = [key for key in prediction.data if key not in _PREDICTION_KEYS]
        if outputs:
            return "\n".join(as_text(prediction.data[key]) for key in outputs)
    if steps:
        submitted = _SUBMITTED.fullmatch(as_text(steps[-1].get("output")).strip())
        if submitted is not None:
            return submitted.group(1)
    return None
