"""A saved run as the health checks read it: the stored session plus a few indexes over it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from rlm_desktop.engine.observation import NO_CODE_NOTE
from rlm_desktop.store.detail import Row, SessionDetail

SUBMITTED_IN_TURN = ("FINAL", "FINAL_VAR", "answer")
"""Answer sources set by a turn's own reply (`partial` comes after the last turn, `direct` from
a direct call)."""


@dataclass
class RunView:
    """A `SessionDetail` with the turns, cells and sub-calls of each RLM call at hand."""

    detail: SessionDetail
    _by_turn: dict[tuple[str, int], list[Row]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        grouped: defaultdict[tuple[str, int], list[Row]] = defaultdict(list)
        for call in self.detail.calls:
            if call["parent_id"] is not None and call["parent_turn"] is not None:
                grouped[(call["parent_id"], call["parent_turn"])].append(call)
        self._by_turn = dict(grouped)

    @property
    def session(self) -> Row:
        """The session's row, its settings parsed and its documents listed."""
        return self.detail.session

    @property
    def calls(self) -> list[Row]:
        """Every call, in start order."""
        return self.detail.calls

    def rlm_calls(self) -> list[Row]:
        """The calls that had a REPL (the root and child RLM calls), in start order."""
        return [call for call in self.detail.calls if call["kind"] == "rlm"]

    def root(self) -> Row | None:
        """The run's top call (an RLM call, or the one LLM call of a direct answer)."""
        roots = self.detail.roots()
        return roots[0] if roots else None

    def turns_of(self, call_id: str) -> list[Row]:
        """An RLM call's turns, in order."""
        return self.detail.turns_of(call_id)

    def cells_of(self, call_id: str, turn: int) -> list[Row]:
        """The cells a turn ran, in order."""
        return self.detail.cells_of(call_id, turn)

    def sub_calls_of(self, call_id: str, turn: int) -> list[Row]:
        """The sub-calls the cells of one turn started, in start order."""
        return self._by_turn.get((call_id, turn), [])

    def turn_error(self, call_id: str, turn: int) -> str | None:
        """The last line of the first error a turn's cells raised (None when none raised)."""
        for cell in self.cells_of(call_id, turn):
            if cell["error"]:
                return error_line(cell["error"])
        return None

    def code_of(self, call_id: str) -> str:
        """All the code an RLM call ran, cell after cell."""
        return "\n".join(
            cell["code"] or ""
            for turn in self.turns_of(call_id)
            for cell in self.cells_of(call_id, turn["idx"])
        )

    def answering_turn(self, call: Row) -> int | None:
        """The index of the turn whose reply submitted the call's answer, if one did."""
        turns = self.turns_of(call["id"])
        if call["answer_source"] in SUBMITTED_IN_TURN and turns:
            return int(turns[-1]["idx"])
        return None

    def replied(self, call_id: str) -> bool:
        """Whether any request of the call got a reply from its model."""
        return any(got_reply(request) for request in self.detail.requests_of(call_id))

    def budget(self) -> dict[str, object]:
        """The run's budget settings as recorded ({} for a session saved without them)."""
        settings = self.session.get("settings") or {}
        budget = settings.get("budget") if isinstance(settings, dict) else None
        return budget if isinstance(budget, dict) else {}


def error_line(traceback: str) -> str:
    """What a traceback says in one line: its last non-empty line (`NameError: name 'x' ...`)."""
    lines = [line.strip() for line in traceback.strip().splitlines() if line.strip()]
    return lines[-1] if lines else traceback.strip()


def had_no_code(turn: Row) -> bool:
    """True for a turn whose reply had no code block, so nothing ran (the engine said so)."""
    return not turn["code_blocks"] and (turn["observation"] or "") == NO_CODE_NOTE


def got_reply(request: Row) -> bool:
    """True for a request the model replied to (a refused, failed or unanswered one did not)."""
    return bool(request["content"]) or (
        request["responded_at"] is not None and not request["error"]
    )
