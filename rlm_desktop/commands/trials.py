"""What `eval` and `batch` share: the store and the executor opened around a runner, the
errors turned into one line and an exit code, the flags a resume may change, and a run that
SIGINT and SIGTERM stop (to be resumed)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

from rlm_desktop import paths
from rlm_desktop.commands.executors import add_ray_option, executor
from rlm_desktop.commands.options import (
    add_api_base_option,
    add_budget_options,
    add_json_option,
    add_price_option,
)
from rlm_desktop.commands.stop_signals import stopped_by_signals
from rlm_desktop.engine.config import ConfigError

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.preflight import PreflightProblem
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.store import Store

EXIT_OK, EXIT_NOT_COMPLETED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_NOT_SAVED = 0, 1, 2, 130, 3
RESUMABLE = {
    "api_base": "api_base",
    "concurrency": "concurrency",
    "max_cost_usd": "max_cost_usd",
    "max_tokens": "max_tokens",
    "timeout_s": "run_timeout_s",
}
"""Flags that, given with --resume, replace the stored option (argument name: option name)."""
BUDGET_METAVARS = {"max_cost_usd": "USD", "max_tokens": "N", "timeout_s": "S"}
Runner = TypeVar("Runner")


class Stoppable(Protocol):
    """A runner of trials: an `Evaluation`, a `Batch`."""

    cancelled: bool

    @property
    def skipped(self) -> Sequence[object]:
        """The trials the total budget could not cover, this sitting."""
        ...

    def add_listener(self, listener: Callable[[Any], None]) -> None:
        """Call `listener` with every event of the trials."""
        ...

    async def run(self) -> Any:
        """Run what is pending."""
        ...

    def cancel(self) -> None:
        """Stop every run now (to be resumed)."""
        ...


class PreflightFailed(Exception):
    """The settings' pre-flight check found problems; nothing was recorded."""

    def __init__(self, problems: list[PreflightProblem]) -> None:
        super().__init__(problems)
        self.problems = problems


def add_trial_options(
    parser: argparse.ArgumentParser, budget_help: dict[str, str], resume_help: str, out_help: str
) -> None:
    """The flags of a command that sends trials: `--api-base`, `--price`, the budget flags
    `budget_help` names (caps on the whole), `--ray`, `--resume ID`, `--out DIR` and `--json`."""
    add_api_base_option(parser)
    add_price_option(parser)
    add_budget_options(parser, budget_help, metavars=BUDGET_METAVARS)
    add_ray_option(parser)
    parser.add_argument("--resume", metavar="ID", help=resume_help)
    parser.add_argument("--out", metavar="DIR", help=out_help)
    add_json_option(parser, on_stdout=True)


def run_trials(
    args: argparse.Namespace,
    say: Callable[[str], None],
    flags: dict[str, str],
    preflight_line: Callable[[PreflightProblem], str],
    open_runner: Callable[[Store, Runs], Runner],
    run: Callable[[Runner, TextIO], int],
) -> int:
    """Open the store and the executor `args.ray` names, `open_runner` in them, then `run` it,
    its result to be printed on the stream given (stdout: `executor` sends Ray's own prints to
    stderr while the cluster is joined); returns its exit code, or 2 (bad usage: `ConfigError`, named by `flags`), the pre-flight's
    code, or 3 (the database cannot be used), each problem said in one line."""
    from rlm_desktop.commands.run import preflight_exit_code
    from rlm_desktop.store import Store, StoreError

    try:
        store = Store(paths.database_path())
    except StoreError as error:
        say(str(error))
        return EXIT_NOT_SAVED
    result_stream = sys.stdout
    try:
        with executor(args.ray, paths.engine_folders(), say) as runs:
            return run(open_runner(store, runs), result_stream)
    except PreflightFailed as failed:
        for problem in failed.problems:
            say(preflight_line(problem))
        return preflight_exit_code(failed.problems)
    except ConfigError as error:
        say(error.worded(flags))
        return EXIT_USAGE
    except StoreError as error:
        say(str(error))
        return EXIT_NOT_SAVED
    finally:
        store.close()


def resume_overrides(
    args: argparse.Namespace, prices: dict[str, tuple[float, float]], runs: Runs
) -> dict[str, Any]:
    """The stored options a resume replaces: the flags given (`RESUMABLE`), the prices, and the
    executor's concurrency where none is given."""
    overrides: dict[str, Any] = {
        option: getattr(args, name)
        for name, option in RESUMABLE.items()
        if getattr(args, name) is not None
    }
    if prices:
        overrides["prices"] = {m: list(p) for m, p in prices.items()}
    if args.concurrency is None and (slots := runs.default_concurrency()) is not None:
        overrides["concurrency"] = slots
    return overrides


def options_from_args(
    args: argparse.Namespace, prices: dict[str, tuple[float, float]], runs: Runs
) -> EvaluationOptions:
    """The options of a new evaluation or batch: the flags given, else the executor's
    concurrency, else the defaults (checked later: `EvaluationOptions.validate`)."""
    from rlm_desktop.evaluation.options import EvaluationOptions

    defaults = EvaluationOptions()
    concurrency = args.concurrency
    if concurrency is None:
        concurrency = runs.default_concurrency() or defaults.concurrency
    return EvaluationOptions(
        api_base=args.api_base,
        prices=prices,
        concurrency=concurrency,
        max_cost_usd=args.max_cost_usd,
        max_tokens=args.max_tokens,
        run_timeout_s=defaults.run_timeout_s if args.timeout_s is None else args.timeout_s,
    )


async def until_signalled(runner: Stoppable) -> None:
    """Run `runner`; SIGINT and SIGTERM (and Ctrl-Break on Windows) cancel it (it returns early,
    to be resumed)."""
    with stopped_by_signals(runner.cancel):
        await runner.run()


def sit(runner: Stoppable, listener: Callable[[Any], None], close: Callable[[], None]) -> None:
    """Run `runner` until it ends or SIGINT/SIGTERM stops it, `listener` told of every event;
    `close` ends the progress it draws, whatever happened."""
    runner.add_listener(listener)
    try:
        asyncio.run(until_signalled(runner))
    finally:
        close()


def out_folder(args: argparse.Namespace, kind: str, runner_id: str) -> Path:
    """Where the results go: `--out`, else the `kind`'s folder for its id in the data folder
    (`paths.results_folder`)."""
    return Path(args.out) if args.out else paths.results_folder(kind, runner_id)


def concluded(
    runner: Stoppable,
    output: str,
    out: Path,
    result_stream: TextIO,
    *,
    command: str,
    runner_id: str,
    noun: str,
    say: Callable[[str], None],
) -> int | None:
    """Print the sitting's `output` (written to `out`); the exit code of a sitting that stopped
    short, with the line that says how to resume it: 130 interrupted, 1 with `noun`s the total
    budget could not cover; None when neither."""
    from rlm_desktop import formatting as fmt

    print(output, file=result_stream, flush=True)
    say(f"results written to {fmt.terminal_safe(out)}")
    if runner.cancelled:
        say(f"interrupted: resume with rlm-desktop {command} --resume {runner_id}")
        return EXIT_INTERRUPTED
    if runner.skipped:
        say(
            f"{fmt.plural(len(runner.skipped), noun)} not started: the total budget is spent; "
            f"resume with a larger --max-cost (rlm-desktop {command} --resume {runner_id} "
            "--max-cost USD)"
        )
        return EXIT_NOT_COMPLETED
    return None
