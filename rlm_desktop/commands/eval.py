"""`rlm-desktop eval`: measure settings on tasks with known answers, through the real engine."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any, TextIO

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.commands.options import (
    Subcommands,
    flag_names,
)
from rlm_desktop.commands.trial_progress import TrialProgress
from rlm_desktop.commands.trials import (
    EXIT_OK,
    PreflightFailed,
    add_trial_options,
    concluded,
    options_from_args,
    out_folder,
    resume_overrides,
    run_trials,
    sit,
)
from rlm_desktop.engine.config import ConfigError

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.preflight import PreflightProblem
    from rlm_desktop.evaluation.runner import Evaluation

BUDGET_HELP = {
    "concurrency": "runs at once (2)",
    "max_cost_usd": "dollar cap for the whole evaluation",
    "max_tokens": "token cap for the whole evaluation",
    "timeout_s": "wall-clock limit of each run, seconds (900)",
}
"""The help of each budget flag (by `Budget` field): here they bound the evaluation, and the
time limit each of its runs."""
FLAGS = flag_names(["task", "length", "count", "setting", "resume", "prices", "ray", *BUDGET_HELP])
"""The flag that sets each option: how errors name them here."""


EVAL_SUMMARY = "measure settings on tasks with known answers"
EVAL_DESCRIPTION = (
    "Run a task set against settings (model, sub-model, mode, depth, profile, sandbox) "
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
        "model, sub_model, mode (rlm|direct|auto), depth, profile, max_turns, auto_max_tokens, "
        "sandbox (auto|kernel|wasm: where model code runs) (repeatable)",
    )  # fmt: skip
    add_trial_options(
        parser,
        BUDGET_HELP,
        resume_help="run what an evaluation has not run yet",
        out_help="folder for the CSV and JSON results (default: evaluations/ID in the data folder)",
    )
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


def say(message: str) -> None:
    """One line on stderr, in the command's name (inert: it may quote a provider or a task file)."""
    print(f"rlm-desktop eval: {fmt.terminal_safe(message)}", file=sys.stderr, flush=True)


def eval_command(args: argparse.Namespace) -> int:
    """Execute `eval`; returns the exit code (0 all runs done, 1 some not run or failed to
    start, 2 bad usage, 3 the database cannot be used, 130 interrupted: resume it)."""
    return run_trials(
        args,
        say,
        FLAGS,
        preflight_line,
        lambda store, runs: _open(store, args, runs),
        lambda evaluation, result_stream: _run(evaluation, args, result_stream),
    )


def _open(store: Any, args: argparse.Namespace, runs: Runs) -> Evaluation:
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.engine.pricing import parse_prices
    from rlm_desktop.evaluation.opening import (
        create_evaluation,
        preflight_settings,
        reopen_evaluation,
    )
    from rlm_desktop.evaluation.runner import check_settings
    from rlm_desktop.evaluation.settings import parse_setting, unique_names
    from rlm_desktop.evaluation.task_sets import TaskSpec

    prices = parse_prices("\n".join(args.price))
    folders = paths.engine_folders()
    if args.resume:
        overrides = resume_overrides(args, prices, runs)
        return reopen_evaluation(
            store, args.resume, overrides, folders=folders, credentials=credentials_for, runs=runs
        )
    if not args.task:
        raise ConfigError("is missing: name needle, aggregate, pairs, code or a task file", "task")
    spec = TaskSpec(
        kinds=tuple(args.task), lengths=tuple(args.length or [4_000]), seed=args.seed,
        count=args.count,
    )  # fmt: skip
    options = options_from_args(args, prices, runs)
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


def _run(evaluation: Evaluation, args: argparse.Namespace, result_stream: TextIO) -> int:
    from rlm_desktop.evaluation.report import conclude

    pending = len(evaluation.pending())
    total = pending + len(evaluation.results())
    say(
        f"evaluation {evaluation.evaluation_id}: {fmt.plural(total, 'run')} "
        f"({len(evaluation.settings)} settings x {len(evaluation.tasks)} tasks), {pending} to run"
    )
    progress = _progress(evaluation)
    sit(evaluation, progress, progress.close)
    out = out_folder(args, "evaluation", evaluation.evaluation_id)
    table, summary = conclude(evaluation, out)
    output = fmt.terminal_json(summary) if args.json else fmt.terminal_text(table)
    stopped = concluded(
        evaluation, output, out, result_stream, command="eval",
        runner_id=evaluation.evaluation_id, noun="run", say=say,
    )  # fmt: skip
    if stopped is not None:
        return stopped
    return EXIT_OK


def _progress(evaluation: Evaluation) -> TrialProgress:
    names = [setting.name for setting in evaluation.settings]
    done = {name: 0 for name in names}
    for result in evaluation.results():
        done[result.setting] = done.get(result.setting, 0) + 1
    totals = {name: len(evaluation.tasks) for name in names}
    return TrialProgress(say, names, done, totals, stream=sys.stderr)
