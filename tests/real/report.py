"""What the real model wrote and how long it took, request by request, for a person to read:
printed (the suite runs with -s) and kept in `report.md` beside the server's log."""

from __future__ import annotations

import os
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlm_desktop import paths
from rlm_desktop.engine.events import CellExecuted, LLMResponded, TurnExecuted
from rlm_desktop.store import Store
from rlm_desktop.store.detail import SessionDetail, load_detail

_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
REPORT_DIR = Path(os.environ.get("RLM_REAL_REPORT") or _CACHE / "rlm-desktop" / "test-real")
"""Outside the checkout: the report, the server's log and the evaluation's results."""
SHOWN_CHARS = 500
_LLAMA_TIMING = re.compile(
    r"^\S*\s*(prompt eval|eval) time =\s*([\d.]+) ms /\s*(\d+) (?:tokens|runs)", re.MULTILINE
)


@dataclass
class Report:
    """The report of one suite: a section per saved run, then the speeds measured."""

    folder: Path
    root_replies: list[tuple[int, float]] = field(default_factory=list)
    """(output tokens, seconds) of each reply to a root call (an RLM turn or a direct call)."""

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path.write_text("# The real-model suite: what the model sent\n", encoding="utf-8")

    @property
    def path(self) -> Path:
        """The report file."""
        return self.folder / "report.md"

    def write(self, text: str) -> None:
        """Print `text` and append it to the report."""
        print(text, flush=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(text + "\n")

    def session(self, title: str, session_id: str) -> None:
        """A saved run of this test's data folder: its ending, then every request's reply (its
        first 500 characters), tokens, time, when its first text came and why it was cut."""
        detail, responses = saved_run(session_id)
        head = detail.session
        self.write(
            f"\n## {title}\nsession {session_id}, profile {head['profile']}: {head['status']}"
            + (f" ({head['error']})" if head["error"] else "")
            + f", {head['turns']} root turns, {head['input_tokens']} in / {head['output_tokens']}"
            f" out tokens, {head['wall_s'] or 0:.1f} s"
        )
        roots = {call["id"] for call in detail.roots()}
        for level, call in detail.walk():
            for request in detail.requests_of(call["id"]):
                response = responses.get(request["id"])
                self._request(level, call, request, response, is_root=call["id"] in roots)

    def _request(
        self,
        level: int,
        call: dict[str, Any],
        request: dict[str, Any],
        response: LLMResponded | None,
        is_root: bool,
    ) -> None:
        seconds = request["latency_s"] or 0.0
        tokens = request["output_tokens"] or 0
        if is_root and request["content"]:
            self.root_replies.append((tokens, seconds))
        turn = "" if request["turn"] is None else f" turn {request['turn']}"
        streamed = ""
        if response is not None and response.arrivals:
            streamed = f", first text after {response.arrivals[0][0]:.1f} s"
        self.write(
            f"\n{'  ' * level}- {call['kind']} call {call['id']}{turn}: {tokens} tokens in "
            f"{seconds:.1f} s{streamed}, finish {request['finish_reason']}"
            + (f", cut at {response.cut}" if response is not None and response.cut else "")
            + f", {request['attempts']} attempt(s)"
            + (f", error: {request['error']}" if request["error"] else "")
        )
        shown = (request["content"] or "")[:SHOWN_CHARS]
        self.write("\n".join(f"{'  ' * level}    > {line}" for line in shown.splitlines()))

    def stop_at_code(self, turns: dict[str, tuple[dict[str, Any], LLMResponded]]) -> None:
        """A first turn per profile: its output tokens, seconds, first text and where it was cut."""
        self.write("\n## One root turn with and without stop-at-code\n")
        self.write("| profile | tokens | seconds | first text after | cut |\n|---|---|---|---|---|")
        for profile, (request, response) in turns.items():
            first = f"{response.arrivals[0][0]:.1f} s" if response.arrivals else "–"
            self.write(
                f"| {profile} | {request['output_tokens'] or 0} | {request['latency_s'] or 0:.1f}"
                f" | {first} | {response.cut or request['finish_reason']} |"
            )

    def code_stop_rules(self, results: dict[str, dict[str, Any]]) -> None:
        """One run per `code_stop` rule: turns, input and output tokens, wall time, and the code
        blocks each root turn's reply held."""
        self.write("\n## The same run under each code_stop rule\n")
        self.write(
            "| rule | status | turns | input tokens | output tokens | wall s | blocks a turn |"
        )
        self.write("|---|---|---|---|---|---|---|")
        for rule, result in results.items():
            blocks = [shape.blocks for shape in turn_shapes(result["session_id"])]
            self.write(
                f"| {rule} | {result['status']} | {result['turns']} | {result['input_tokens']:,}"
                f" | {result['output_tokens']:,} | {result['wall_s']:.1f} | {blocks} |"
            )

    def turn_shapes(self, sessions: dict[str, list[str]]) -> None:
        """For each setting's saved runs: how many RLM turns there were, the share whose reply
        held exactly one code block, and the share whose code all ran without an error."""
        self.write("\n## RLM turns by setting\n")
        self.write("| setting | turns | one block | code ran |\n|---|---|---|---|")
        for setting, session_ids in sessions.items():
            turns = one_block = ran = 0
            for session_id in session_ids:
                for shape in turn_shapes(session_id):
                    turns += 1
                    one_block += shape.blocks == 1
                    ran += shape.blocks > 0 and not shape.errors
            self.write(
                f"| {setting} | {turns} | {_share(one_block, turns)} | {_share(ran, turns)} |"
            )

    def speeds(self, server_log: Path) -> None:
        """The root replies' times and the server's own prompt and generation speeds."""
        if self.root_replies:
            seconds = [s for _, s in self.root_replies]
            tokens = sum(t for t, _ in self.root_replies)
            self.write(
                f"\n## Speeds\n{len(seconds)} root replies: median {statistics.median(seconds):.1f} s,"
                f" longest {max(seconds):.1f} s, {tokens / max(sum(seconds), 1e-9):.1f} output"
                " tokens/s including the prompt's reading"
            )
        for kind, rate in server_rates(server_log.read_text(errors="replace")).items():
            self.write(f"server: {kind} {rate:.1f} tokens/s")


def saved_run(session_id: str) -> tuple[SessionDetail, dict[str, LLMResponded]]:
    """A saved session of this test's data folder, and the reply record of each of its requests
    (by request id) from its stored events."""
    store = Store(paths.database_path())
    try:
        detail = load_detail(store, session_id)
        replies = [e for e in store.replay(session_id) if isinstance(e, LLMResponded)]
    finally:
        store.close()
    return detail, {reply.request_id: reply for reply in replies}


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "–"


@dataclass(frozen=True)
class TurnShape:
    """One RLM turn of a saved run: the code blocks its reply held, and its cells that failed."""

    blocks: int
    errors: int


def turn_shapes(session_id: str) -> list[TurnShape]:
    """The RLM turns of a saved session of this test's data folder, in order."""
    store = Store(paths.database_path())
    try:
        events = list(store.replay(session_id))
    finally:
        store.close()
    failed: dict[tuple[str, int], int] = {}
    for event in events:
        if isinstance(event, CellExecuted) and event.error:
            key = (event.call_id, event.turn)
            failed[key] = failed.get(key, 0) + 1
    return [
        TurnShape(event.code_blocks, failed.get((event.call_id, event.index), 0))
        for event in events
        if isinstance(event, TurnExecuted)
    ]


def server_rates(log: str) -> dict[str, float]:
    """llama.cpp's own speeds over the whole log: tokens per second reading prompts ("prompt
    eval") and generating ("eval")."""
    totals: dict[str, list[float]] = {}
    for kind, ms, count in _LLAMA_TIMING.findall(log):
        spent = totals.setdefault(kind, [0.0, 0.0])
        spent[0] += float(ms)
        spent[1] += int(count)
    return {kind: count / (ms / 1000) for kind, (ms, count) in totals.items() if ms > 0}
