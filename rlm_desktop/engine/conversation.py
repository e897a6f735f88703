"""Conversations: follow-up questions that go on in the REPL state of the questions before them.

Each question is a run of its own. At its end the root call's worker pickles the variables it can
and sends the bytes over its protocol; the app writes them, unopened, to the question's kept
folder (`<scratch root>/conversations/<session id>/`) with what was kept and lost (JSON), the
root's full message history (JSON) and the question and its answer (JSON). A follow-up names the
question it follows; its root worker is sent the bytes back and unpickles them, inside the
sandbox: the app never unpickles anything, and never opens a file in a worker's folder. The documents of the first question stay `context` (`context_0`), those added
later are `context_1`, ...; the earlier questions' messages are `history_0`, ...
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlm_desktop import confined, ids
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.kept_documents import KeptTexts
from rlm_desktop.engine.llm import Message
from rlm_desktop.engine.sandbox.process import StateReport, WorkerProcess
from rlm_desktop.engine.sandbox.untrusted_files import open_new, read_regular, remove_tree

KEPT_FOLDER = "conversations"
STATE_FILE = "repl-state.pickle"
STATE_REPORT_FILE = "repl-state.json"
HISTORY_FILE = "history.json"
QUESTION_FILE = "question.json"
SHOWN_ANSWER_CHARS = 1_500
SHOWN_LOST = 20
STATE_SLACK_BYTES = 16_000_000
"""Room in a state file beyond the variables' cap: the pickle's frame, and the source of the
functions and classes defined in cells, which the cap does not count."""
JSON_LIMIT_BYTES = 256 * 1024 * 1024
"""The largest kept JSON file read back (a long run's full message history)."""


class ConversationError(ConfigError):
    """A follow-up that cannot go on from the question it names (setting `follows`)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem, "follows")


def kept_folder(scratch_root: Path, session_id: str) -> Path:
    """Where the question `session_id` keeps its REPL state, history and answer.

    Raises `ids.MalformedId` or `confined.OutsideFolder` for an id that could lead elsewhere."""
    return ids.folder_for(scratch_root / KEPT_FOLDER, session_id)


def forget(scratch_root: Path, session_id: str) -> None:
    """Remove what the question `session_id` kept (its REPL state may hold document text): called
    when its session is deleted. A link at the folder's name is removed, never followed."""
    folder = scratch_root / KEPT_FOLDER / ids.checked(session_id)
    if folder.is_symlink():
        folder.unlink()
        return
    with contextlib.suppress(OSError):
        remove_tree(kept_folder(scratch_root, session_id))


@dataclass(frozen=True)
class EarlierQuestion:
    """A question of the conversation before this one, as it was kept."""

    session_id: str
    query: str
    answer: str
    status: str
    follows: str | None = None
    context_groups: tuple[int, ...] = ()


@dataclass(frozen=True)
class Thread:
    """What a follow-up starts from: the questions before it (oldest first) and what they kept."""

    earlier: tuple[EarlierQuestion, ...]
    histories: tuple[list[Message], ...]
    state_file: Path | None
    """The previous question's pickled REPL state (None when it kept none)."""
    state_report: StateReport = field(default_factory=StateReport)
    """What the previous question kept and lost when it saved its state."""

    @property
    def previous(self) -> EarlierQuestion:
        """The question this one follows."""
        return self.earlier[-1]

    @property
    def conversation_id(self) -> str:
        """The conversation's id: its first question's session id."""
        return self.earlier[0].session_id


def _read_json(path: Path) -> Any:
    try:
        return json.loads(read_regular(path, JSON_LIMIT_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return None


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _question(folder: Path) -> EarlierQuestion | None:
    data = _read_json(folder / QUESTION_FILE)
    if not isinstance(data, dict) or not ids.is_well_formed(data.get("session_id")):
        return None
    groups = data.get("context_groups") or ()
    return EarlierQuestion(
        session_id=data["session_id"],
        query=str(data.get("query", "")),
        answer=str(data.get("answer", "")),
        status=str(data.get("status", "")),
        follows=data["follows"] if ids.is_well_formed(data.get("follows")) else None,
        context_groups=tuple(int(n) for n in groups if isinstance(n, int)),
    )


def load_thread(scratch_root: Path, follows: str) -> Thread:
    """The conversation up to the question `follows`, read from the kept folders.

    Raises `ConversationError` when that question kept nothing (it was never asked on this
    machine, or its folder was removed).
    """
    try:
        return _thread(scratch_root, follows)
    except (ids.MalformedId, confined.OutsideFolder) as error:
        raise ConversationError(f"cannot go on from {ids.shown(follows)}: {error}") from None


def _thread(scratch_root: Path, follows: str) -> Thread:
    earlier: list[EarlierQuestion] = []
    seen: set[str] = set()
    session: str | None = follows
    while session is not None and session not in seen:
        seen.add(session)
        question = _question(kept_folder(scratch_root, session))
        if question is None:
            break
        earlier.append(question)
        session = question.follows
    if not earlier:
        raise ConversationError(
            f"names session {follows}, which kept no conversation state on this machine (it "
            "ran before conversations were kept, or its folder was removed); ask a new question"
        )
    earlier.reverse()
    histories = []
    for question in earlier:
        history = _read_json(kept_folder(scratch_root, question.session_id) / HISTORY_FILE)
        histories.append(history if isinstance(history, list) else [])
    folder = kept_folder(scratch_root, follows)
    state = folder / STATE_FILE
    report = _read_json(folder / STATE_REPORT_FILE)
    return Thread(
        tuple(earlier),
        tuple(histories),
        state if _is_regular(state) else None,
        _report_from(report) if isinstance(report, dict) else StateReport(error="nothing kept"),
    )


def _report_from(data: dict[str, Any]) -> StateReport:
    return StateReport(
        tuple(str(name) for name in data.get("kept", ())),
        {str(k): str(v) for k, v in dict(data.get("lost", {})).items()},
        int(data.get("size_bytes", 0)),
        data.get("error") if isinstance(data.get("error"), str) else None,
    )


def context_groups(earlier: Sequence[int], documents: int) -> tuple[int, ...]:
    """How many of a follow-up's `documents` make `context_0`, `context_1`, ...: the earlier
    questions' groups, then this question's new documents, if any. Documents that no longer
    match the earlier groups (some were removed) all make `context_0`."""
    if not earlier or documents < sum(earlier):
        return (documents,)
    added = documents - sum(earlier)
    return (*earlier, added) if added else tuple(earlier)


def split_contexts(texts: Sequence[str], groups: Sequence[int]) -> list[str | Sequence[str]]:
    """`context_0`, `context_1`, ...: one str for a group of one document, else a list of str
    (or, for texts kept on disk, a view of them that reads each when it is handed over)."""
    contexts: list[str | Sequence[str]] = []
    start = 0
    for size in groups:
        part = texts[start : start + size]
        start += size
        if len(part) == 1:
            contexts.append(part[0])
        else:
            contexts.append(part if isinstance(part, KeptTexts) else list(part))
    return contexts


def saved_state(thread: Thread) -> bytes | None:
    """The previous question's saved state, to hand a new worker; None when it kept none.

    Raises OSError when the kept file is not the regular file of the size the app kept."""
    if thread.state_file is None:
        return None
    return read_regular(thread.state_file, thread.state_report.size_bytes or JSON_LIMIT_BYTES)


def keep_repl(
    scratch_root: Path, session_id: str, report: StateReport, history: list[Message]
) -> None:
    """Write what the question's REPL kept and lost, and its root's full message history."""
    folder = kept_folder(scratch_root, session_id)
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "kept": list(report.kept),
        "lost": report.lost,
        "size_bytes": report.size_bytes,
        "error": report.error,
    }
    _write_json(folder / STATE_REPORT_FILE, data)
    _write_json(folder / HISTORY_FILE, history)


def keep_question(scratch_root: Path, question: EarlierQuestion) -> None:
    """Write the question, its answer and its place in the conversation."""
    folder = kept_folder(scratch_root, question.session_id)
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "session_id": question.session_id,
        "query": question.query,
        "answer": question.answer,
        "status": question.status,
        "follows": question.follows,
        "context_groups": list(question.context_groups),
    }
    _write_json(folder / QUESTION_FILE, data)


def _write_json(path: Path, data: Any) -> None:
    part = path.with_suffix(path.suffix + ".part")
    part.write_text(json.dumps(data), encoding="ascii")  # escaped: lone surrogates too
    os.replace(part, path)


def follow_up_note(
    thread: Thread,
    restored: StateReport,
    new_documents: Sequence[str],
    groups: Sequence[int],
) -> str:
    """What a follow-up's first message says in place of "you have not looked at `context`": the
    earlier questions and answers, what came back (their histories, the variables) and what is
    gone, where the documents added since are, and that the earlier questions did look."""
    count = len(thread.earlier)
    one = count == 1
    lines = [
        "This question follows "
        + ("an earlier question" if one else f"{count} earlier questions")
        + " over the same documents:"
    ]
    for number, question in enumerate(thread.earlier):
        answer = question.answer
        if len(answer) > SHOWN_ANSWER_CHARS:
            answer = answer[:SHOWN_ANSWER_CHARS] + " [...]"
        lines.append(f"  [{number}] Q: {question.query}")
        lines.append(f"      A ({question.status}): {answer or '(no answer)'}")
    lines.append(
        f"Restored: {name_range('history', 0, count)}, "
        + ("its full messages (a list" if one else "their full messages (lists")
        + " of messages); `history` holds this question's own."
    )
    lines += _variables_lines(thread.state_report, restored)
    lines += _contexts_lines(new_documents, groups)
    lines.append(
        ("The earlier question" if one else "The earlier questions")
        + " already examined `context`: build on "
        + ("its answer" if one else "their answers")
        + " and what was restored, and examine `context` with code only for what this "
        "question still needs."
    )
    return "\n".join(lines)


def name_range(prefix: str, start: int, stop: int) -> str:
    """The REPL names `prefix_start` up to `prefix_{stop - 1}`, each named once: one name, two
    joined by "and", more as a range."""
    names = [f"`{prefix}_{index}`" for index in range(start, stop)]
    if len(names) <= 2:
        return " and ".join(names)
    return f"{names[0]} ... {names[-1]}"


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:SHOWN_LOST]) + (" ..." if len(names) > SHOWN_LOST else "")


def _variables_lines(kept: StateReport, restored: StateReport) -> list[str]:
    if restored.error is not None and not restored.kept:
        gone = [*kept.kept, *kept.lost]
        return [
            "Your variables could not be restored "
            f"({restored.error})" + (f"; gone: {_listed(gone)}." if gone else ".")
        ]
    lines = [
        f"Your variables restored: {_listed(restored.kept)}."
        if restored.kept
        else "No variables of yours were kept."
    ]
    lost = {**kept.lost, **restored.lost}
    if lost:
        shown = list(lost.items())[:SHOWN_LOST]
        lines.append("Not restored: " + "; ".join(f"{name} ({why})" for name, why in shown) + ".")
    return lines


def _contexts_lines(new_documents: Sequence[str], groups: Sequence[int]) -> list[str]:
    """Where the documents are when questions added some: `context_0` is the first question's,
    then those earlier follow-ups added, then (named as new) those this question added."""
    if len(groups) <= 1:
        return []
    new = bool(new_documents)
    earlier_stop = len(groups) - 1 if new else len(groups)
    line = "`context` is still the first question's documents (`context_0`)"
    if earlier_stop > 1:
        line += f"; {name_range('context', 1, earlier_stop)} hold those added by earlier questions"
    lines = [line + "."]
    if new:
        lines.append(
            f"New for this question: `context_{len(groups) - 1}` ({_listed(new_documents)})."
        )
    return lines


@dataclass(frozen=True)
class ReplMemory:
    """A root call's part in a conversation: what its REPL starts with, what it keeps.

    `contexts` are `context_1`, ...; `groups` how many documents make each context;
    `new_documents` the names of those this question added.
    """

    kept_root: Path
    session_id: str
    cap_bytes: int
    thread: Thread | None = None
    contexts: tuple[Any, ...] = ()
    groups: tuple[int, ...] = ()
    new_documents: tuple[str, ...] = ()

    @property
    def histories(self) -> tuple[list[Message], ...]:
        """The earlier questions' messages, `history_0`, ..."""
        return self.thread.histories if self.thread is not None else ()

    async def restore(self, worker: WorkerProcess, timeout_s: float) -> str:
        """Put the previous question's variables back into the running `worker`; returns what
        the first message adds for the model ("" when this question follows none)."""
        if self.thread is None:
            return ""
        try:
            state = saved_state(self.thread)
        except OSError as error:
            report = StateReport(error=f"its saved state was refused: {error}")
        else:
            if state is not None:
                report = await worker.restore_state(state, timeout_s)
            else:
                kept_error = self.thread.state_report.error
                report = StateReport(error=kept_error or "the earlier question kept no REPL state")
        return follow_up_note(self.thread, report, self.new_documents, self.groups)

    async def keep(
        self, worker: WorkerProcess, history: list[Message], timeout_s: float
    ) -> StateReport:
        """Have `worker` keep its variables for a follow-up, and keep the call's history."""
        if self.cap_bytes <= 0:
            report = StateReport(error="keeping REPL variables is turned off")
        else:
            report = await self._receive_state(worker, timeout_s)
        keep_repl(self.kept_root, self.session_id, report, history)
        return report

    async def _receive_state(self, worker: WorkerProcess, timeout_s: float) -> StateReport:
        """The worker's state, written to the question's kept folder as it arrives (a part file
        renamed into place once whole; removed when anything went wrong)."""
        folder = kept_folder(self.kept_root, self.session_id)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / STATE_FILE
        part = target.with_name(target.name + ".part")
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
        limit = self.cap_bytes + STATE_SLACK_BYTES
        with open_new(part) as file:
            report = await worker.save_state(self.cap_bytes, file.write, limit, timeout_s)
        if report.error is not None:
            part.unlink()
            return report
        os.replace(part, target)
        return report
