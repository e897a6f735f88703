"""`rlm-desktop batch`: one question a row of a CSV or JSONL file, each asked of its own
documents through the real engine, every row a saved session, under one total budget."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.commands import trials
from rlm_desktop.commands.eval import preflight_line
from rlm_desktop.commands.options import Subcommands, flag_names
from rlm_desktop.commands.trial_progress import TrialProgress
from rlm_desktop.engine.config import ConfigError

if TYPE_CHECKING:
    from rlm_desktop.batch.questions import QuestionRow
    from rlm_desktop.batch.runner import Batch, BatchEvent
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.store import Store

BUDGET_HELP = {
    "concurrency": "rows at once (2)",
    "max_cost_usd": "dollar cap for the whole batch",
    "max_tokens": "token cap for the whole batch",
    "timeout_s": "wall-clock limit of each row's run (and of loading its documents), seconds (900)",
}
"""The help of each budget flag (by `Budget` field): here they bound the batch, and the time
limit each of its runs."""
FLAGS = flag_names(["questions", "setting", "resume", "prices", "ray", *BUDGET_HELP])
"""The flag that sets each option: how errors name them here."""
ANSWER_CHARS = 200
"""An answer is shown on one line of at most this many characters (the files hold it whole)."""

BATCH_SUMMARY = "ask a question of each of many documents or folders"
BATCH_DESCRIPTION = (
    "Ask each question of a CSV or JSONL file (columns: question, documents, and optionally id "
    "and setting keys) of its own documents. Every row is a saved session; results.csv and "
    "results.json hold every answer with its sources and findings."
)


def add_batch_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register `batch` and its flags."""
    parser = subparsers.add_parser("batch", help=BATCH_SUMMARY, description=BATCH_DESCRIPTION)
    parser.add_argument(
        "--questions",
        metavar="FILE",
        help="CSV (with a header row) or JSONL file: question, documents (a file, folder or glob, "
        "relative to the file's folder; several separated by ';' in CSV, a list in JSONL), "
        "optional id and setting keys (model, sub_model, mode, depth, profile, max_turns, "
        "auto_max_tokens, sandbox) that override --setting for the row",
    )
    parser.add_argument(
        "--setting", metavar="key=value,...",
        help="the rows' default setting, e.g. 'model=openai/gpt-5-mini,mode=rlm,depth=2'; keys: "
        "model, sub_model, mode (rlm|direct|auto), depth, profile, max_turns, auto_max_tokens, "
        "sandbox (auto|kernel|wasm: where model code runs)",
    )  # fmt: skip
    trials.add_trial_options(
        parser,
        BUDGET_HELP,
        resume_help="run the rows a batch has not run yet",
        out_help="folder for results.csv and results.json (default: batches/ID in the data folder)",
    )
    return parser


def say(message: str) -> None:
    """One line on stderr, in the command's name (inert: it may quote a provider or a file)."""
    print(f"rlm-desktop batch: {fmt.terminal_safe(message)}", file=sys.stderr, flush=True)


def batch_command(args: argparse.Namespace) -> int:
    """Execute `batch`; returns the exit code (0 every row completed, 1 some did not or were
    not started, 2 bad usage or a bad questions file, 3 the database cannot be used, 130
    interrupted: resume it)."""
    try:
        return trials.run_trials(
            args,
            say,
            FLAGS,
            preflight_line,
            lambda store, runs: _open(store, args, runs),
            lambda batch, result_stream: _run(batch, args, result_stream),
        )
    except KeyboardInterrupt:  # before the rows started (reading, checking, pre-flight)
        say("interrupted before the batch started")
        return trials.EXIT_INTERRUPTED


def _open(store: Store, args: argparse.Namespace, runs: Runs) -> Batch:
    from rlm_desktop.batch.opening import create_batch, plan_batch, reopen_batch
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.engine.pricing import parse_prices
    from rlm_desktop.evaluation.settings import parse_setting

    prices = parse_prices("\n".join(args.price))
    folders = paths.engine_folders()
    if args.resume:
        for given in ("questions", "setting"):
            if getattr(args, given) is not None:
                raise ConfigError(
                    "cannot change on --resume: a batch resumes with the questions and setting "
                    "it started with",
                    given,
                )
        overrides = trials.resume_overrides(args, prices, runs)
        batch = reopen_batch(
            store, args.resume, overrides, folders=folders, credentials=credentials_for, runs=runs
        )
        _preflight(batch.rows, batch.options)
        return batch
    if not args.questions:
        raise ConfigError("is missing: give a CSV or JSONL file of questions", "questions")
    options = trials.options_from_args(args, prices, runs)
    default = parse_setting(args.setting or "")
    plan = plan_batch(Path(args.questions), default, options, folders=folders, shown=args.questions)
    _preflight(plan.rows, options)
    return create_batch(store, plan, folders=folders, credentials=credentials_for, runs=runs)


def _preflight(rows: Sequence[QuestionRow], options: EvaluationOptions) -> None:
    """Raise `PreflightFailed` when a setting the rows run under cannot reach its model."""
    from rlm_desktop.batch.opening import distinct_settings
    from rlm_desktop.commands.run import credentials_for
    from rlm_desktop.evaluation.opening import preflight_settings

    problems = asyncio.run(preflight_settings(distinct_settings(rows), options, credentials_for))
    if problems:
        raise trials.PreflightFailed(problems)


def _run(batch: Batch, args: argparse.Namespace, result_stream: TextIO) -> int:
    from rlm_desktop.batch.results import conclude

    pending = len(batch.pending())
    total = len(batch.rows)
    say(f"batch {batch.batch_id}: {fmt.plural(total, 'question')}, {pending} to run")
    group = f"batch {batch.batch_id}"
    progress = TrialProgress(
        say, [group], {group: total - pending}, {group: total}, stream=sys.stderr, scored=False,
        unit="row",
    )  # fmt: skip
    trials.sit(batch, _follow(progress, group), progress.close)
    out = trials.out_folder(args, "batch", batch.batch_id)
    summary = conclude(batch, out)
    output = fmt.terminal_json(summary) if args.json else fmt.terminal_text(render(summary))
    stopped = trials.concluded(
        batch, output, out, result_stream, command="batch", runner_id=batch.batch_id,
        noun="row", say=say,
    )  # fmt: skip
    if stopped is not None:
        return stopped
    return trials.EXIT_OK if summary["done"] == summary["rows"] else trials.EXIT_NOT_COMPLETED


def _follow(progress: TrialProgress, group: str) -> Callable[[BatchEvent], None]:
    """A batch listener that tells `progress` how each row goes."""
    from rlm_desktop.batch.runner import RowFinished, RowPlaced, RowSkipped

    def follow(event: BatchEvent) -> None:
        if isinstance(event, RowFinished):
            progress.finished(group, f"row {event.result.row_id}", event.result)
        elif isinstance(event, RowPlaced):
            progress.placed(group, f"row {event.row_id}", event.ran_on)
        elif isinstance(event, RowSkipped):
            progress.skipped(group, f"row {event.row_id}", event.reason)

    return follow


def render(summary: dict[str, Any]) -> str:
    """The batch for a terminal: one line a row (its status and the start of its answer), then
    the counts and what it spent."""
    lines = []
    for result in summary["results"]:
        said = result["answer"] or result["error"] or ""
        lines.append(
            f"{result['row_id']}: {fmt.status_text(result['status'])}"
            + (f" — {fmt.one_line(said, ANSWER_CHARS)}" if said else "")
        )
    lines.append(
        f"{fmt.plural(summary['rows'], 'row')}: {summary['done']} completed, "
        f"{summary['failed']} failed, {summary['skipped']} not run; spent "
        f"{fmt.dollars(summary['cost_usd'])}"
    )
    return "\n".join(lines)
