"""The options several commands share, each added by one call: a flag is spelled, parsed and
explained the same wherever it is given, and errors name it by the same flag."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from rlm_desktop.engine.config import Budget

Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `add_subparsers` returns: each command adds its parser to it."""
QT_PROBE_FLAG = "--qt-probe"
"""The hidden flag with which the self-check starts the app to load Qt's platform plugin."""


@dataclass(frozen=True)
class BudgetOption:
    """A flag that sets a `Budget` field (its `dest` is the field's name)."""

    flag: str
    field: str
    kind: type[int] | type[float]

    @property
    def metavar(self) -> str:
        """`--max-cost` reads MAX_COST in the help."""
        return self.flag.removeprefix("--").replace("-", "_").upper()


BUDGET_OPTIONS = {
    option.field: option
    for option in (
        BudgetOption("--max-depth", "max_depth", int),
        BudgetOption("--max-turns", "max_turns", int),
        BudgetOption("--max-cost", "max_cost_usd", float),
        BudgetOption("--max-tokens", "max_tokens", int),
        BudgetOption("--max-sub-calls", "max_sub_calls", int),
        BudgetOption("--timeout", "timeout_s", float),
        BudgetOption("--cell-timeout", "cell_timeout_s", float),
        BudgetOption("--concurrency", "concurrency", int),
    )
}
"""Every budget flag, by the `Budget` field it sets."""
SHARED_FLAGS = {
    "api_base": "--api-base",
    "prices": "--price",
    **{option.field: option.flag for option in BUDGET_OPTIONS.values()},
}
"""The flag of each setting these options set."""


def flag_names(settings: Iterable[str]) -> dict[str, str]:
    """`{setting: flag}` for the given settings, for `ConfigError.worded`: a shared option's
    flag, else the setting spelled as a flag (`sub_model`: `--sub-model`)."""
    return {
        setting: SHARED_FLAGS.get(setting, "--" + setting.replace("_", "-")) for setting in settings
    }


def add_budget_options(
    parser: argparse.ArgumentParser,
    helps: Mapping[str, str],
    *,
    defaults: Budget | None = None,
    metavars: Mapping[str, str] | None = None,
) -> None:
    """Add the budget flags `helps` names (`Budget` field: help), in its order, each with the
    default `defaults` holds (None: not given) and the metavar `metavars` holds (else from its
    flag)."""
    for field, text in helps.items():
        option = BUDGET_OPTIONS[field]
        parser.add_argument(
            option.flag,
            dest=field,
            type=option.kind,
            default=None if defaults is None else getattr(defaults, field),
            metavar=(metavars or {}).get(field, option.metavar),
            help=text,
        )


def add_api_base_option(parser: argparse.ArgumentParser) -> None:
    """`--api-base URL`: the server the models are reached at."""
    parser.add_argument("--api-base", help="base URL of an OpenAI-compatible or local server")


def add_price_option(parser: argparse.ArgumentParser) -> None:
    """`--price MODEL=IN,OUT`, repeatable, as `pricing.parse_prices` reads each line."""
    parser.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=IN,OUT",
        help="your price for a model, USD per million input and output tokens (repeatable)",
    )


def add_json_option(parser: argparse.ArgumentParser, *, on_stdout: bool = False) -> None:
    """`--json`: the command prints one JSON object (the help says "on stdout" where the
    command also writes progress, on stderr)."""
    where = " on stdout" if on_stdout else ""
    parser.add_argument("--json", action="store_true", help=f"print one JSON object{where}")


def add_session_id(parser: argparse.ArgumentParser) -> None:
    """The positional `id` of a saved session."""
    parser.add_argument("id", help="a session id, or a unique prefix of one")
