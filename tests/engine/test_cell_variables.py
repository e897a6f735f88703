"""After each cell the worker reports the model's variables as short values, within its bounds."""

from __future__ import annotations

from rlm_desktop.engine.config import Budget
from rlm_desktop.engine.events import CellExecuted
from rlm_desktop.engine.sandbox.worker.variables import NAME_CHARS, VALUE_CHARS, VARIABLES_SHOWN
from tests.engine.scripting import DOCUMENT, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_server import ScriptedServer

MANY = (
    "globals().update({f'v{i:03}': i for i in range(150)})\n"
    f"globals()['n' * {NAME_CHARS + 1}] = 'too long a name'"
)
ODD = """
import math, json
from collections import Counter
class Bad:
    def __repr__(self):
        raise ValueError('no repr')
class Loud:
    def __repr__(self):
        return 'x' * 1_000_000
bad, loud = Bad(), Loud()
text = 'word ' * 10_000
numbers = list(range(1_000_000))
table = {i: str(i) * 50 for i in range(1000)}
nested = [[[[[1]]]]]
huge = 10 ** 5000
nan = float('nan')
flag, nothing, ratio = True, None, 0.5
alias = context
short = lambda: 1
context = 'rebound'
"""


async def _cells(server: ScriptedServer, *codes: str) -> list[CellExecuted]:
    server.respond_with(scripted(root=[*(repl(code) for code in codes), repl("FINAL('done')")]))
    result, events = await run_to_end(make_run(server))
    assert result.status == "completed", result.error
    return of_type(events, CellExecuted)


async def test_at_most_the_first_variables_are_reported(scripted_server: ScriptedServer) -> None:
    (many, _final) = await _cells(scripted_server, MANY)
    assert list(many.variables) == [f"v{i:03}" for i in range(VARIABLES_SHOWN)]
    assert many.variables["v042"] == 42


async def test_every_value_is_short_and_no_tool_module_or_context_is_shown(
    scripted_server: ScriptedServer,
) -> None:
    (odd, _final) = await _cells(scripted_server, ODD)
    shown = odd.variables
    assert set(shown) == {
        "bad", "loud", "text", "numbers", "table", "nested", "huge", "nan", "flag", "nothing",
        "ratio", "short", "Bad", "Loud",
    }  # fmt: skip
    assert shown["bad"].startswith("<Bad instance at 0x")  # reprlib's word for a failed repr
    assert shown["Bad"] == "<type 'Bad'>"
    assert shown["short"] == "<function '<lambda>'>"
    assert (shown["flag"], shown["nothing"], shown["ratio"]) == (True, None, 0.5)
    assert shown["nan"] == "nan"
    assert shown["text"] == ("word " * 40)[: VALUE_CHARS - 3] + "..."
    assert shown["numbers"].startswith("[0, 1, 2, 3,")
    assert shown["nested"] == "[[[[...]]]]"
    for name, value in shown.items():
        assert not isinstance(value, str) or len(value) <= VALUE_CHARS, name
    assert DOCUMENT.text[:VALUE_CHARS] not in str(shown)


async def test_variables_follow_the_repl_from_cell_to_cell(scripted_server: ScriptedServer) -> None:
    first, second, third, _final = await _cells(
        scripted_server, "a = 1", "b = a + 1\ndel a", "1 / 0"
    )
    assert first.variables == {"a": 1}
    assert second.variables == {"b": 2}
    assert third.error is not None
    assert third.variables == {"b": 2}


async def test_a_repr_that_never_returns_holds_up_no_cell(
    scripted_server: ScriptedServer,
) -> None:
    stuck = (
        "class Stuck:\n    def __repr__(self):\n        while True:\n            pass\n"
        "s = Stuck()\nprint('made it')"
    )
    scripted_server.respond_with(scripted(root=[repl(stuck), repl("print('next')\nFINAL('done')")]))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(cell_timeout_s=1.0)))
    assert result.status == "completed", result.error
    assert result.answer == "done"
    first, second = of_type(events, CellExecuted)
    assert (first.stdout, first.error) == ("made it\n", None)
    assert first.variables == {"Stuck": "<type 'Stuck'>", "s": "<Stuck: repr too slow>"}
    assert (second.stdout, second.error) == ("next\n", None)
    assert second.variables == first.variables
