"""`rlm-desktop run`: one run from the command line, a thin layer over `engine.Run`."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_desktop import paths
from rlm_desktop.commands.load_line import LoadLine
from rlm_desktop.commands.options import (
    Subcommands,
    add_api_base_option,
    add_budget_options,
    add_json_option,
    add_price_option,
    flag_names,
)
from rlm_desktop.commands.progress import ProgressPrinter
from rlm_desktop.commands.sandbox_ready import ready_sandbox
from rlm_desktop.commands.stop_signals import stopped_by_signals
from rlm_desktop.engine import (
    Budget,
    ConfigError,
    ContextDocument,
    Credentials,
    Run,
    RunConfig,
    RunResult,
)
from rlm_desktop.engine.config import (
    DEFAULT_COMPACT_TOKENS,
    DEFAULT_MODE,
    DEFAULT_MODEL,
    DEFAULT_SCRATCH_QUOTA_MB,
    SANDBOX_CHOICES,
)
from rlm_desktop.engine.exposure import exposure_warnings
from rlm_desktop.engine.kept_documents import KeptDocuments
from rlm_desktop.engine.litellm_loader import start_loading_litellm
from rlm_desktop.engine.llm import AUTH_STATUS
from rlm_desktop.engine.preflight import EndpointUnreachable, PreflightProblem, preflight
from rlm_desktop.engine.pricing import parse_prices
from rlm_desktop.engine.run_choices import RunChoices, build_run_config, free_local_models
from rlm_desktop.formatting import (
    ending_title,
    not_an_answer,
    terminal_json,
    terminal_safe,
    terminal_text,
)
from rlm_desktop.freed_memory import give_back_freed_memory

if TYPE_CHECKING:
    from rlm_desktop.documents import Skipped
    from rlm_desktop.store.threads import ContinuedSession

SKIPPED_SHOWN = 20
EXIT_OK, EXIT_NOT_COMPLETED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_NOT_SAVED = 3
"""The session database could not be opened, or the run could not be saved in it in full."""
BUDGET_HELP = {
    "max_depth": "REPL levels (1: root only)",
    "max_turns": "turns per RLM call",
    "max_cost_usd": "dollar cap for the run",
    "max_tokens": "token cap for the run",
    "max_sub_calls": "cap on llm_query/rlm_query calls",
    "timeout_s": "wall-clock limit, seconds",
    "cell_timeout_s": "per-cell limit, seconds",
    "concurrency": "LLM requests in flight at once",
}
"""The help of each budget flag (by `Budget` field); its default is the engine's, which sets no
caps on cost, tokens or sub-calls."""
FLAGS_AS_CHOSEN = (
    "query", "model", "sub_model", "api_base", "mode", "profile", "allow_read", "compact_tokens",
    "sandbox",
)  # fmt: skip
"""The flags whose values are `RunChoices` fields of the same name, as given."""
FLAGS = {
    "require_isolation": "--require-sandbox",
    "scratch_quota_mb": "--scratch-quota",
    "follows": "--continue",
    **flag_names([*FLAGS_AS_CHOSEN, "prices", *BUDGET_HELP]),
}
"""The flag that sets each `RunConfig`/`Budget` field: how the engine's errors name them here."""

RUN_SUMMARY = "answer a question over documents"
RUN_DESCRIPTION = "Answer a question over documents."


def add_run_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register `run` and its flags (DESIGN.md's contract); defaults are the engine's."""
    parser = subparsers.add_parser("run", help=RUN_SUMMARY, description=RUN_DESCRIPTION)
    parser.add_argument("--query", required=True, help="the question")
    parser.add_argument(
        "--doc", action="append", default=[], metavar="PATH", help="file or folder (repeatable)"
    )
    parser.add_argument(
        "--no-ocr",
        dest="ocr",
        action="store_false",
        help="do not read the text of images and scanned PDF pages (OCR, on this CPU)",
    )
    parser.add_argument("--model", default=DEFAULT_MODEL, help="root model (litellm name)")
    parser.add_argument("--sub-model", help="model for llm_query (default: the root model)")
    add_api_base_option(parser)
    parser.add_argument("--mode", choices=("auto", "rlm", "direct"), default=DEFAULT_MODE)
    parser.add_argument("--profile", help="prompt profile (default: chosen by model name)")
    add_budget_options(parser, BUDGET_HELP, defaults=Budget())
    add_price_option(parser)
    parser.add_argument(
        "--allow-read",
        action="append",
        default=[],
        metavar="PATH",
        help="a folder model code may read, read-only (repeatable); nothing else is opened",
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        default="auto",
        help="where model code runs: kernel (the OS's own sandbox around Python: Linux, macOS), "
        "wasm (a WebAssembly Python, on every system) or auto (default: kernel where there is "
        "one, else wasm)",
    )
    parser.add_argument(
        "--require-sandbox",
        action="store_true",
        help="refuse to run model code unless the kernel sandbox isolates files and network",
    )
    parser.add_argument(
        "--scratch-quota",
        type=int,
        default=DEFAULT_SCRATCH_QUOTA_MB,
        metavar="MB",
        help="the most the files model code writes may take in all (default "
        f"{DEFAULT_SCRATCH_QUOTA_MB:,} MB: in memory where the Linux sandbox allows, else "
        "checked on disk, keeping room for the session's record)",
    )
    parser.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="send the run's trace to this OTLP/HTTP receiver when it ends (default: "
        "$OTEL_EXPORTER_OTLP_ENDPOINT; e.g. http://localhost:4318)",
    )
    parser.add_argument(
        "--continue",
        dest="continue_id",
        metavar="SESSION_ID",
        help="ask a follow-up to a saved session: its documents, REPL variables, questions and "
        "answers carry over; --doc adds documents (as context_1, ...)",
    )
    parser.add_argument(
        "--compact-tokens",
        type=int,
        default=DEFAULT_COMPACT_TOKENS,
        metavar="N",
        help="summarize an RLM call's older turns once its conversation reaches N tokens "
        f"(default {DEFAULT_COMPACT_TOKENS:,}; 0: only at 80%% of the model's window)",
    )
    add_json_option(parser, on_stdout=True)
    return parser


def choices_from_args(args: argparse.Namespace) -> RunChoices:
    """The run the flags ask for."""
    return RunChoices(
        **{choice: getattr(args, choice) for choice in FLAGS_AS_CHOSEN},
        prices=parse_prices("\n".join(args.price)),
        require_isolation=args.require_sandbox,
        scratch_quota_mb=args.scratch_quota,
        budget=Budget(**{field: getattr(args, field) for field in BUDGET_HELP}),
    )


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run configuration the flags describe (a model the `--api-base` server serves without
    a price counted at $0 under a dollar cap, as the window counts it)."""
    return build_run_config(choices_from_args(args), local_models_free=True)


def load_documents(
    paths: list[str],
    model: str,
    deadline: float | None = None,
    ocr: bool = True,
    counting: LoadLine | None = None,
) -> list[ContextDocument]:
    """Load `--doc` paths, by `deadline` (a `time.monotonic()` reading: the run's time limit),
    counting them on `counting`'s line as they load.

    Each path that cannot be loaded is one line with its reason and the run goes on with the
    rest; only when nothing loads is it a `ConfigError` (exit 2).
    """
    from rlm_desktop.documents import LoadOptions, load_paths

    if not paths:
        raise ConfigError("no documents: pass --doc PATH (a file or a folder), once or more")
    options = LoadOptions(
        model=model,
        deadline=deadline,
        ocr=ocr,
        on_progress=None if counting is None else counting.on_progress,
    )
    try:
        result = load_paths([Path(p) for p in paths], options)
    except BaseException:
        if counting is not None:
            counting.clear()
        raise
    if counting is not None:
        counting.clear() if not result.documents else counting.finish(
            len(result.documents), sum(document.tokens for document in result.documents)
        )
    for line in left_out(result.skipped):
        say(line)
    for document in result.documents:
        for note in document.notes:
            say(f"{terminal_safe(document.name)}: {note}")
    failed = [f"{terminal_safe(e.path)}: {terminal_safe(e.message)}" for e in result.errors]
    if not result.documents and len(failed) < 2:
        raise ConfigError(failed[0] if failed else "no loadable documents in the given paths")
    for line in failed:
        say(f"not loaded: {line}")
    if not result.documents:
        raise ConfigError("none of the --doc paths could be loaded; fix or drop them")
    return [doc.to_context() for doc in result.documents]


def kept_on_disk(documents: list[ContextDocument]) -> Sequence[ContextDocument]:
    """The documents with their texts moved to a file in the data folder, `documents` emptied:
    the run reads each text back when it needs it (the worker's hand-over, the store), so the
    app does not hold the corpus beside the worker's copy of it. A folder that cannot take the
    file leaves them as they are (the store then says what is wrong with it)."""
    try:
        kept = KeptDocuments(documents, paths.data_dir())
    except OSError:
        return documents
    documents.clear()
    give_back_freed_memory()
    return kept


def continued_from(session_id: str) -> ContinuedSession:
    """The saved session `--continue` names, its documents rebuilt from the store; a
    `ConfigError` when no one session has that id (or prefix)."""
    from rlm_desktop.store import SessionNotFound, Store
    from rlm_desktop.store.threads import SessionReadOnly, continued_session

    store = Store(paths.database_path())
    try:
        return continued_session(store, session_id)
    except (SessionNotFound, SessionReadOnly) as error:
        raise ConfigError(f"--continue: {error}") from None
    finally:
        store.close()


def left_out(skipped: Sequence[Skipped], shown: int = SKIPPED_SHOWN) -> list[str]:
    """One line per file a folder held but the run leaves out, and why (nothing vanishes silently)."""
    lines = [
        f"left out {terminal_safe(skip.path)}: {terminal_safe(skip.reason)}"
        for skip in skipped[:shown]
    ]
    if len(skipped) > shown:
        lines.append(f"left out {len(skipped) - shown:,} more files")
    return lines


def credentials_for(model: str, api_base: str | None) -> Credentials:
    """The key for the run's provider (see `registry.provider_for_run`): keyring, then environment."""
    from rlm_desktop.providers import keys, registry

    return Credentials(api_key=keys.get_key(registry.provider_for_run(model, api_base)))


def key_hint(model: str, api_base: str | None) -> str:
    """Where the key a provider refused came from, so the user knows which one to change."""
    from rlm_desktop.providers import keys, registry

    name = registry.provider_for_run(model, api_base)
    source = keys.key_source(name)
    if source in ("keyring", "session"):
        return "; the key sent was the one saved in the app (Settings → Providers)"
    if source:
        return f"; the key sent was ${source}"
    env_var = registry.provider(name).env_var
    return f"; no key was set: set {env_var}" if env_var else ""


def preflight_line(problem: PreflightProblem) -> str:
    """A pre-flight problem in the command line's words: a setting by its flag, and for a key
    the other place it can live."""
    if problem.setting == "api_key":
        return f"{problem.message}, or save it in the app (Settings → Providers)"
    return problem.worded(FLAGS)


def preflight_exit_code(problems: list[PreflightProblem]) -> int:
    """1 when only the environment is at fault (nothing answered at --api-base), else 2."""
    if all(isinstance(problem, EndpointUnreachable) for problem in problems):
        return EXIT_NOT_COMPLETED
    return EXIT_USAGE


def failure(result: RunResult, config: RunConfig) -> str:
    """The one line that says why a run ended in `error`."""
    hint = key_hint(config.model, config.api_base) if result.http_status in AUTH_STATUS else ""
    return f"{result.error or 'the run failed'}{hint}"


def shown_answer(result: RunResult, config: RunConfig) -> str:
    """The answer; for a run that ended without one, why it ended first, then what the model
    left, labelled as what it is and bounded."""
    if result.answer_kind == "answer":
        return result.answer
    why = failure(result, config) if result.status == "error" else result.error
    lines = [ending_title(result.status, answered=False) + (f": {why}" if why else "")]
    left = not_an_answer(result.answer_kind, result.answer)
    return "\n\n".join([*lines, left] if left else lines)


def say(message: str) -> None:
    """One line on stderr, in the command's name (inert: it may quote a provider or a document)."""
    print(f"rlm-desktop run: {terminal_safe(message)}", file=sys.stderr)


def run_command(args: argparse.Namespace) -> int:
    """Execute `run`; returns the exit code (0, 1, 2 or 130).

    The models, the endpoint and the key are checked before anything is sent (`preflight`);
    each problem is one line, and the exit code says whose it is to fix.
    """
    from rlm_desktop.store import StoreError

    try:
        choices = choices_from_args(args)
        config = build_run_config(choices, local_models_free=True)
        config.validate()
        start_loading_litellm()  # seconds of imports, beside the documents' loading
        for model in free_local_models(choices):
            say(
                f"{model} counted at $0 under the dollar cap: served at --api-base and not "
                f"priced (--price {model}=IN,OUT prices it)"
            )
        for line in exposure_warnings(config.allow_read, paths.data_dir()):
            say(f"warning: --allow-read {terminal_safe(line)}")
        ready_sandbox(config, say)
        started = time.monotonic()  # the run's time limit covers loading its documents
        timeout = config.budget.timeout_s
        deadline = None if timeout is None else started + timeout
        loaded: list[ContextDocument] = []
        if args.continue_id:
            earlier = continued_from(args.continue_id)
            follow_up = dataclasses.replace(
                choices, follows=earlier.session_id, conversation_id=earlier.conversation_id
            )
            config = build_run_config(follow_up, local_models_free=True)
            loaded = list(earlier.documents)
        if args.doc or not loaded:
            counting = None if args.json else LoadLine(sys.stderr)
            loaded += load_documents(args.doc, config.model, deadline, args.ocr, counting)
        documents = kept_on_disk(loaded)
        run = Run(
            config,
            documents,
            folders=paths.engine_folders(),
            credentials=credentials_for(config.model, config.api_base),
        )
        problems = asyncio.run(preflight(config, run.credentials))
        if problems:
            for problem in problems:
                say(preflight_line(problem))
            return preflight_exit_code(problems)
        try:
            result, saved = asyncio.run(_execute(run, documents, quiet=args.json, started=started))
        finally:
            if isinstance(documents, KeptDocuments):
                documents.close()
        result = _send_traces(result, run.run_id, args.otlp_endpoint) if saved else result
        run_id = run.run_id
        del run, documents  # the health below reads the texts back: not two copies at once
        give_back_freed_memory()
    except ConfigError as error:
        say(error.worded(FLAGS))
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted before the run started")
        return EXIT_INTERRUPTED
    except StoreError as error:
        say(str(error))
        return EXIT_NOT_SAVED
    except OSError as error:  # the data folder (scratch folders, database) cannot be made
        say(
            f"{error.filename or 'the data folder'}: {error.strerror or error}; make it "
            f"writable, or point {paths.HOME_ENV} at a folder you can write"
        )
        return EXIT_NOT_SAVED
    if isinstance(sys.stdout, io.TextIOWrapper):  # model code can print lone surrogates
        sys.stdout.reconfigure(errors="backslashreplace")
    output = {**result.to_json(), **(_health_json(run_id) if args.json and saved else {})}
    print(terminal_json(output) if args.json else terminal_text(shown_answer(result, config)))
    if saved and not args.json:
        for line in _source_lines(run_id):
            say(line)
    if result.status == "error":
        say(failure(result, config))
    elif result.refused_calls and result.answer and result.error:
        say(result.error)  # "answered after the budget ran out (N calls refused)"
    for warning in result.warnings:
        say(warning)
    if not saved and result.status != "cancelled":
        return EXIT_NOT_SAVED
    if result.status == "completed":
        return EXIT_OK
    return EXIT_INTERRUPTED if result.status == "cancelled" else EXIT_NOT_COMPLETED


def _health_json(session_id: str) -> dict[str, object]:
    """The `findings` and `coverage` of the run just saved, read back from the store."""
    from rlm_desktop.commands.health import health_json
    from rlm_desktop.review.health import session_health
    from rlm_desktop.store import Store

    store = Store(paths.database_path())
    try:
        return health_json(session_health(store, session_id))
    finally:
        store.close()


def _source_lines(session_id: str) -> list[str]:
    """What the run's answer cites, checked: how many sources were found, and each that was not
    (nothing for an answer without sources or quotes)."""
    from rlm_desktop import formatting as fmt
    from rlm_desktop.commands.health import QUOTE_CHARS
    from rlm_desktop.review.health.report import session_sources
    from rlm_desktop.store import Store

    store = Store(paths.database_path())
    try:
        sources = session_sources(store, session_id)
    finally:
        store.close()
    if not sources:
        return []
    found = sum(1 for source in sources if source.found)
    lines = [f"sources: {found} of {len(sources)} found in the documents"]
    lines += [
        f"source [{source.number}] is not in the documents (the model may have made it up): "
        f"“{fmt.one_line(source.quote, QUOTE_CHARS)}”"
        for source in sources
        if not source.found
    ]
    return lines


def _send_traces(result: RunResult, session_id: str, endpoint: str | None) -> RunResult:
    """The run's trace sent to the collector configured (flag or environment); a collector that
    cannot take it adds one warning and changes nothing else."""
    from rlm_desktop.exports import send_traces
    from rlm_desktop.exports.otlp_proto import configured_endpoint
    from rlm_desktop.store import Store

    collector = configured_endpoint(endpoint)
    if collector is None:
        return result
    store = Store(paths.database_path())
    try:
        problem = send_traces(store, session_id, collector)
    finally:
        store.close()
    if problem is None:
        return result
    return dataclasses.replace(result, warnings=[*result.warnings, problem])


async def _execute(
    run: Run, documents: Sequence[ContextDocument], quiet: bool, started: float | None = None
) -> tuple[RunResult, bool]:
    """The run's result (with what could not be saved among its `warnings`), and whether its
    session was saved in full."""
    from rlm_desktop.store import Store

    with stopped_by_signals(run.cancel):
        ProgressPrinter(sys.stderr, verbose=not quiet).attach(run.bus)
        store = Store(paths.database_path())
        try:
            recorder = store.record(run, documents=documents, secrets=[run.credentials.api_key])
        except BaseException:
            store.close()
            raise
        try:
            result = await run.execute(started=started)
        finally:
            recorder.close()
            store.close()
    unsaved = recorder.warnings
    if not unsaved:
        return result, True
    return dataclasses.replace(result, warnings=[*result.warnings, *unsaved]), False
