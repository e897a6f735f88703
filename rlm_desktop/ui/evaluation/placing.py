"""Where each setting's trials run while an evaluation goes (from `TrialPlaced`), and where its
finished ones ran (from their results): the line beside the setting's progress bar."""

from __future__ import annotations

from collections import Counter

from rlm_desktop import formatting as fmt


class Placing:
    """The trials under way and the places finished ones ran, per setting."""

    def __init__(self) -> None:
        self._running: dict[str, dict[str, str]] = {}
        self._ran: dict[str, Counter[str]] = {}
        self._retried: Counter[str] = Counter()

    def placed(self, setting: str, task_id: str, where: str) -> None:
        """`task_id` of `setting` is running at `where` (again, on a new node, for a retry)."""
        self._running.setdefault(setting, {})[task_id] = where

    def finished(self, setting: str, task_id: str, where: str, *, retried: bool = False) -> None:
        """`task_id` of `setting` ended; it ran at `where` (empty: it never ran)."""
        self._running.get(setting, {}).pop(task_id, None)
        if where:
            self._ran.setdefault(setting, Counter())[where] += 1
        if retried:
            self._retried[setting] += 1

    def line(self, setting: str) -> str:
        """`running needle-4000-0 on this machine`, or once none runs, where they ran (`ran on
        this machine`, `ran on ray a (node …), ray b (node …)`), with how many were retried."""
        running = self._running.get(setting)
        if running:
            return "running " + ", ".join(f"{task} on {where}" for task, where in running.items())
        ran = self._ran.get(setting)
        if not ran:
            return ""
        text = "ran on " + ", ".join(sorted(ran, key=lambda where: -ran[where]))
        if retried := self._retried[setting]:
            text += f" · {fmt.plural(retried, 'trial')} retried"
        return text
