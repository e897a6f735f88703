"""The evaluation page's fields as plain values: their defaults, their ranges, and the values a
page was left with read back for the next one, each that no longer holds (a task kind or file
that is gone, a removed profile, a number out of range, text that does not parse) replaced by
its default. No field holds a secret: keys stay in the keyring.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TypeVar

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.pricing import parse_prices
from rlm_desktop.evaluation.options import DEFAULT_CONCURRENCY
from rlm_desktop.evaluation.settings import KEYS
from rlm_desktop.evaluation.task_sets import GENERATORS, MAX_LENGTH, MIN_LENGTH

COUNT_RANGE = (1, 1000)
SEED_RANGE = (0, 1_000_000)
COST_RANGE = (0.0, 100_000.0)
"""Total budget in dollars; 0 means no cap."""
CONCURRENCY_RANGE = (1, 64)
RUN_ON = ("here", "ray")
"""Where the trials run: this machine, or a Ray cluster at `ray_address`."""
_N = TypeVar("_N", int, float)


@dataclass(frozen=True)
class FormFields:
    """What the form holds: task kinds and file, lengths as typed, count, seed, the settings
    one a line, the server, the prices as typed (`;` between models), the budget, and where
    the trials run (`run_on`, one of `RUN_ON`; a Ray cluster's address as `--ray` takes it)."""

    kinds: tuple[str, ...] = ("needle",)
    task_file: str = ""
    lengths: str = "4000, 16000"
    count: int = 5
    seed: int = 0
    settings: tuple[str, ...] = ()
    api_base: str = ""
    prices: str = ""
    max_cost_usd: float = 2.0
    concurrency: int = DEFAULT_CONCURRENCY
    run_on: str = "here"
    ray_address: str = "auto"

    def saved(self) -> dict[str, str]:
        """The fields as text, by field name (the lists as JSON), for `restored` to read."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {
            name: json.dumps(list(value)) if isinstance(value, tuple) else str(value)
            for name, value in values.items()
        }


def default_fields(model: str, api_base: str | None, prices: str = "") -> FormFields:
    """A first page's fields: the window's model in a direct and an RLM setting, its server and
    the user's prices."""
    return FormFields(
        settings=(f"direct:model={model},mode=direct", f"rlm:model={model},mode=rlm,depth=2"),
        api_base=api_base or "",
        prices=prices.replace("\n", "; "),
    )


def restored(
    saved: Mapping[str, object], defaults: FormFields, profiles: Collection[str] | None = None
) -> FormFields:
    """The fields `saved` holds (as `FormFields.saved` wrote them), each one missing or no longer
    valid taken from `defaults`; `profiles` are the profile names that exist now (None: not
    checked), and a setting's `profile=` naming another is dropped, so the profile is chosen
    by model as it is for a setting that names none."""
    if not saved:
        return defaults
    task_file = _text(saved.get("task_file"))
    if task_file and not Path(task_file).expanduser().exists():
        task_file = ""
    kinds = tuple(k for k in _lines(saved.get("kinds")) or () if k in GENERATORS)
    if not kinds and not task_file:
        kinds = defaults.kinds
    settings = tuple(
        line for line in (_checked_setting(s, profiles) for s in _lines(saved.get("settings")) or ())
        if line
    )  # fmt: skip
    return replace(
        defaults,
        kinds=kinds,
        task_file=task_file,
        lengths=_valid_lengths(saved.get("lengths"), defaults.lengths),
        count=_in_range(int, saved.get("count"), COUNT_RANGE, defaults.count),
        seed=_in_range(int, saved.get("seed"), SEED_RANGE, defaults.seed),
        settings=settings or defaults.settings,
        api_base=_text(saved.get("api_base"), defaults.api_base).strip(),
        prices=_valid_prices(saved.get("prices"), defaults.prices),
        max_cost_usd=_in_range(float, saved.get("max_cost_usd"), COST_RANGE, defaults.max_cost_usd),
        concurrency=_in_range(
            int, saved.get("concurrency"), CONCURRENCY_RANGE, defaults.concurrency
        ),
        run_on=run_on if (run_on := _text(saved.get("run_on"))) in RUN_ON else defaults.run_on,
        ray_address=_text(saved.get("ray_address")).strip() or defaults.ray_address,
    )


def _text(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _lines(value: object) -> list[str] | None:
    """The JSON list of text stored as `value` (None when it is not one)."""
    try:
        items = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return None
    return [i for i in items if i.strip()]


def _in_range(kind: type[_N], value: object, bounds: tuple[_N, _N], default: _N) -> _N:
    try:
        number = kind(value) if isinstance(value, str | int | float) else default
    except ValueError:
        return default
    return number if bounds[0] <= number <= bounds[1] else default


def _valid_lengths(value: object, default: str) -> str:
    text = _text(value)
    try:
        lengths = [int(p) for p in text.replace(" ", "").split(",") if p]
    except ValueError:
        return default
    if not lengths or not all(MIN_LENGTH <= n <= MAX_LENGTH for n in lengths):
        return default
    return text


def _valid_prices(value: object, default: str) -> str:
    text = _text(value, default)
    try:
        parse_prices(text.replace(";", "\n"))
    except ConfigError:
        return default
    return text


def _checked_setting(line: str, profiles: Collection[str] | None) -> str:
    """`line` without a `profile=` part naming a profile not in `profiles`."""
    if profiles is None:
        return line.strip()
    name, colon, body = line.partition(":")
    if not colon or "=" in name:
        name, colon, body = "", "", line
    kept = [
        part
        for part in body.split(",")
        if KEYS.get(part.partition("=")[0].strip()) != "profile"
        or part.partition("=")[2].strip() in profiles
    ]
    return f"{name}{colon}{','.join(kept)}".strip()
