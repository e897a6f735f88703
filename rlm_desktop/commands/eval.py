"""`rlm-desktop eval`: measure settings on tasks with known answers, through the real engine."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.commands.executors import add_ray_option, executor
from rlm_desktop.commands.options import (
    Subcommands,
    add_api_base_option,
    add_budget_options,
    add_json_option,
    add_price_option,
    flag_names,
)
from rlm_desktop.commands.run import preflight_exit_code
from rlm_desktop.commands.trial_progress import TrialProgress
from rlm_desktop.engine.config import ConfigError

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.preflight import PreflightProblem
    from rlm_desktop.evaluation.runner import Evaluation

EXIT_OK, EXIT_NOT_COMPLETED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_NOT_SAVED = 0, 1, 2, 130, 3
BUDGET_HELP = {
    "concurrency": "runs at once (2)",
    "max_cost_usd": "dollar cap for the whole evaluation",
    "max_tokens": "token cap for the whole evaluation",
    "timeout_s": "wall-clock limit of each run, seconds (900)",
}
"""The help of each budget flag (by `Budget` field): here they bound the evaluation, and the
time limit each of its runs."""
BUDGET_METAVARS = {"max_cost_usd": "USD", "max_tokens": "N", "timeout_s": "S"}
FLAGS = flag_names(["task", "length", "count", "setting", "resume", "prices", "ray", *BUDGET_HELP])
"""The flag that sets each option: how errors name them here."""
RESUMABLE = {
    "api_base": "api_base",
    "concurrency": "concurrency",
    "max_cost_usd": "max_cost_usd",
    "max_tokens": "max_tokens",
    "timeout_s": "run_timeout_s",
}
"""Flags that, given with --resume, replace the stored option (argument name: option name)."""


EVAL_SUMMARY = "measure settings on tasks with known answers"
EVAL_DESCRIPTION = (
    "Run a task set against settings (model, sub-model, mode, depth, profile) "
    "and report score, cost and time per setting. Every run is a saved session."
)


def add_eval_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register `eval` and its flags."""
    parser = subparsers.add_parser("eval", help=EVAL_SUMMARY, description=EVAL_DESCRIPTION)
    parser.add_argument(
        "--task",
        action="append",
        default=[],
        metavar="KIND|PATH",
        help="needle, aggregate, pairs, code, or a JSONL file / folder of your tasks (repeatable)",
    )
    parser.add_argument(
        "--length", action="append", type=int, default=[], metavar="TOKENS",
        help="input length of generated tasks, in tokens (repeatable; default 4000)",
    )  # fmt: skip
    parser.add_argument(
        "--count",
        type=int,
        default=5,
        help="generated tasks per kind and length (5); your own task files are used whole",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated tasks (0)")
    parser.add_argument(
        "--setting", action="append", default=[], metavar="NAME:key=value,...",
        help="a setting to measure, e.g. 'small:model=openai/gpt-5-mini,mode=rlm,depth=2'; keys: "
        "model, sub_model, mode (rlm|direct|auto), depth, profile, max_turns, auto_max_tokens "
        "(repeatable)",
    )  # fmt: skip
    add_api_base_option(parser)
    add_price_option(parser)
    add_budget_options(parser, BUDGET_HELP, metavars=BUDGET_METAVARS)
    add_ray_option(parser)
    parser.add_argument("--resume", metavar="ID", help="run what an evaluation has not run yet")
    parser.add_argument("--out", metavar="DIR", help="folder for the CSV and JSON results "
                        "(default: evaluations/ID in the data folder)")  # fmt: skip
    add_json_option(parser, on_stdout=True)
    return parser


PREFLIGHT_NAMES = {
    "model": "--setting model",
    "sub_model": "--setting sub_model",
    **flag_names(["api_base"]),
}
"""How pre-flight problems name the settings here."""


def preflight_line(problem: PreflightProblem) -> str:
    """One line for a pre-flight problem of an evaluation's settings (CLI and GUI alike)."""
    if problem.setting == "api_key":
        return f"{problem.message}, or save it in the app (Settings → Providers)"
    return problem.worded(PREFLIGHT_NAMES)


class PreflightFailed(Exception):
    """The settings' pre-flight check found problems; nothing was recorded."""

    def __init__(self, problems: list[PreflightProblem]) -> None:
        super().__init__(problems)
        self.problems = problems


def say(message: str) -> None:
    """One line on stderr, in the command's name (inert: it may quote a provider or a task file)."""
    print(f"rlm-desktop eval: {fmt.terminal_safe(message)}", file=sys.stderr, flush=True)


def eval_command(args: argparse.Namespace) -> int:
    """Execute `eval`; returns the exit code (0 all runs done, 1 some not run or failed to
    start, 2 bad usage, 3 the database cannot be used, 130 interrupted: resume it)."""
    from rlm_desktop.store import Store, StoreError

    try:
        store = Store(paths.database_path())
    except StoreError as error:
        say(str(error))
        return EXIT_NOT_SAVED
    try:
        with executor(args.ray, paths.engine_folders(), say) as runs:
            evaluation = _open(store, args, runs)
            return _run(evaluation, args)
    except PreflightFailed as failed:
        for problem in failed.problems:
            say(preflight_line(problem))
        return preflight_exit_code(failed.problems)
    except ConfigError as error:
        say(error.worded(FLAGS))
        return EXIT_USAGE
    except StoreError as error:
        say(str(error))
        return EXIT_NOT_SAVED
    finally:
        store.close()


def _open(store: Any, args: argparse.Namespace, runs: Runs) -> Evaluation:
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.engine.pricing import parse_prices
    from rlm_desktop.evaluation.opening import (
        create_evaluation,
        preflight_settings,
        reopen_evaluation,
    )
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.evaluation.runner import check_settings
    from rlm_desktop.evaluation.settings import parse_setting, unique_names
    from rlm_desktop.evaluation.task_sets import TaskSpec

    prices = parse_prices("\n".join(args.price))
    folders = paths.engine_folders()
    if args.resume:
        overrides: dict[str, Any] = {
            option: getattr(args, name)
            for name, option in RESUMABLE.items()
            if getattr(args, name) is not None
        }
        if prices:
            overrides["prices"] = {m: list(p) for m, p in prices.items()}
        if args.concurrency is None and (slots := runs.default_concurrency()) is not None:
            overrides["concurrency"] = slots
        return reopen_evaluation(
            store, args.resume, overrides, folders=folders, credentials=credentials_for, runs=runs
        )
    if not args.task:
        raise ConfigError("is missing: name needle, aggregate, pairs, code or a task file", "task")
    spec = TaskSpec(
        kinds=tuple(args.task), lengths=tuple(args.length or [4_000]), seed=args.seed,
        count=args.count,
    )  # fmt: skip
    defaults = EvaluationOptions()
    options = EvaluationOptions(
        api_base=args.api_base,
        prices=prices,
        concurrency=args.concurrency or runs.default_concurrency() or defaults.concurrency,
        max_cost_usd=args.max_cost_usd,
        max_tokens=args.max_tokens,
        run_timeout_s=args.timeout_s or defaults.run_timeout_s,
    )
    settings = [parse_setting(text) for text in args.setting]
    spec.validate()
    options.validate()
    unique_names(settings)
    check_settings(settings, options, folders)
    problems = asyncio.run(preflight_settings(settings, options, credentials_for))
    if problems:
        raise PreflightFailed(problems)
    return create_evaluation(
        store, spec, settings, options, folders=folders, credentials=credentials_for, runs=runs
    )


def _run(evaluation: Evaluation, args: argparse.Namespace) -> int:
    from rlm_desktop.evaluation.report import conclude

    pending = len(evaluation.pending())
    total = pending + len(evaluation.results())
    say(
        f"evaluation {evaluation.evaluation_id}: {fmt.plural(total, 'run')} "
        f"({len(evaluation.settings)} settings x {len(evaluation.tasks)} tasks), {pending} to run"
    )
    progress = _progress(evaluation)
    evaluation.add_listener(progress)
    try:
        asyncio.run(_execute(evaluation))
    finally:
        progress.close()
    out = (
        Path(args.out) if args.out else paths.data_dir() / "evaluations" / evaluation.evaluation_id
    )
    table, summary = conclude(evaluation, out)
    print(fmt.terminal_json(summary) if args.json else fmt.terminal_text(table), flush=True)
    say(f"results written to {fmt.terminal_safe(out)}")
    if evaluation.cancelled:
        say(f"interrupted: resume with  rlm-desktop eval --resume {evaluation.evaluation_id}")
        return EXIT_INTERRUPTED
    if evaluation.skipped:
        say(
            f"{fmt.plural(len(evaluation.skipped), 'run')} not started: the total budget is "
            f"spent; resume with a larger --max-cost (rlm-desktop eval --resume "
            f"{evaluation.evaluation_id} --max-cost USD)"
        )
        return EXIT_NOT_COMPLETED
    return EXIT_OK


async def _execute(evaluation: Evaluation) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, evaluation.cancel)
    await evaluation.run()


def _progress(evaluation: Evaluation) -> TrialProgress:
    names = [setting.name for setting in evaluation.settings]
    done = {name: 0 for name in names}
    for result in evaluation.results():
        done[result.setting] = done.get(result.setting, 0) + 1
    totals = {name: len(evaluation.tasks) for name in names}
    return TrialProgress(say, names, done, totals, stream=sys.stderr)
