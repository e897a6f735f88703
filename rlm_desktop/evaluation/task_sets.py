"""A task set described by a few numbers (kinds, lengths, seed, count), so that an evaluation
can be stored as its description and generated again, identically, to resume it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.aggregate import aggregate_task
from rlm_desktop.evaluation.code import code_task
from rlm_desktop.evaluation.needle import needle_task
from rlm_desktop.evaluation.pairs import pairs_task
from rlm_desktop.evaluation.tasks import Task
from rlm_desktop.evaluation.user_tasks import user_tasks

GENERATORS: dict[str, Callable[[int, int, int], Task]] = {
    "needle": needle_task,
    "aggregate": aggregate_task,
    "pairs": pairs_task,
    "code": code_task,
}
MIN_LENGTH, MAX_LENGTH = 100, 2_000_000


@dataclass(frozen=True)
class TaskSpec:
    """Which tasks: generated `kinds` (or paths of users' task sets), at each of `lengths`
    tokens, `count` of each from `seed`. A user's task set is used whole (lengths, seed and
    count apply to generated tasks only)."""

    kinds: tuple[str, ...]
    lengths: tuple[int, ...] = (4_000,)
    seed: int = 0
    count: int = 5

    def validate(self) -> None:
        """Raise `ConfigError` naming what cannot work."""
        if not self.kinds:
            raise ConfigError(
                f"is missing: name one of {', '.join(GENERATORS)} or a task file", "task"
            )
        for kind in self.kinds:
            if kind not in GENERATORS and not Path(kind).exists():
                raise ConfigError(
                    f"{kind!r} is neither one of {', '.join(GENERATORS)} nor an existing file "
                    "or folder",
                    "task",
                )
        if not self.lengths:
            raise ConfigError("is missing: give at least one length in tokens", "length")
        for length in self.lengths:
            if not MIN_LENGTH <= length <= MAX_LENGTH:
                raise ConfigError(
                    f"{length} is out of range ({MIN_LENGTH}–{MAX_LENGTH:,} tokens)", "length"
                )
        if self.count < 1:
            raise ConfigError("must be at least 1", "count")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record, read back by `from_json`."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskSpec:
        """The spec `to_json` recorded."""
        return cls(
            kinds=tuple(data["kinds"]),
            lengths=tuple(int(n) for n in data["lengths"]),
            seed=int(data["seed"]),
            count=int(data["count"]),
        )


def generate(spec: TaskSpec) -> list[Task]:
    """Every task of the spec, in a stable order (kind, length, index)."""
    spec.validate()
    tasks: list[Task] = []
    for kind in spec.kinds:
        generator = GENERATORS.get(kind)
        if generator is None:
            tasks.extend(user_tasks(Path(kind)))
            continue
        for length in spec.lengths:
            tasks.extend(generator(length, spec.seed, index) for index in range(spec.count))
    return tasks
