"""The REPL contract of DESIGN.md, and the reference's REPL cases, held by every sandbox backend.

Each test drives a real worker of the backend under test (`sandbox`: the kernel sandbox's
process or the wasm sandbox's guest) through `WorkerProcess`, the engine's one way to a REPL;
sub-calls reach a handler of the test's own, the boundary a run's dispatcher sits at.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.engine import ConfigError, ContextDocument
from rlm_desktop.engine.sandbox.connection import WorkerLauncher
from rlm_desktop.engine.sandbox.process import CellOutcome, SubCallFailure, WorkerProcess
from tests.engine.sandboxes import launcher_for
from tests.engine.scripting import make_run
from tests.scripted_server import ScriptedServer

CAP = 100_000
Worker = Callable[..., Awaitable[WorkerProcess]]


async def answer(op: str, args: dict[str, Any]) -> Any:
    """The sub-calls' stand-in: replies that show what was asked."""
    if op == "llm_query":
        if args["prompt"] == "fail":
            raise SubCallFailure("LLMCallError", "the provider said no")
        return f"reply to {args['prompt']}"
    if op == "llm_query_batched":
        await asyncio.sleep(0.05)
        return [f"reply to {p}" for p in args["prompts"]]
    if op == "rlm_query":
        return f"child answer to {args['prompt']} over {str(args.get('context'))[:20]}"
    return [f"child answer to {p}" for p in args["prompts"]]


@pytest.fixture
async def launcher(sandbox: str, tmp_path: Path) -> AsyncIterator[WorkerLauncher]:
    made = launcher_for(sandbox, tmp_path / "run", CAP)
    yield made
    await made.close()


@pytest.fixture
async def worker(launcher: WorkerLauncher, tmp_path: Path) -> AsyncIterator[Worker]:
    started: list[WorkerProcess] = []

    async def start(context: Any = "the context", meta: Any = None, **more: Any) -> WorkerProcess:
        process = WorkerProcess(
            context,
            meta or [{"name": "a.txt", "path": "/docs/a.txt", "chars": 11, "tokens": 3}],
            scratch_dir=tmp_path / "run" / f"w{len(started)}",
            memory_limit_mb=512,
            output_cap_chars=CAP,
            handler=answer,
            launcher=launcher,
            **more,
        )
        started.append(process)
        await process.start()
        return process

    yield start
    for process in started:
        await process.close()


async def cells(process: WorkerProcess, *codes: str, timeout_s: float = 20) -> list[CellOutcome]:
    return [await process.execute(code, timeout_s) for code in codes]


async def test_cells_run_in_one_namespace_and_errors_come_back_as_tracebacks(
    worker: Worker,
) -> None:
    repl = await worker()
    done = await cells(
        repl,
        "x = 1 + 2\nprint('Hello, World!')",
        "def greet(name):\n    return f'Hello, {name}!'\nsquares = [x**2 for x in range(5)]",
        "print(greet('World'), sum(squares), x)",
        "1 / 0",
        "def broken(",
        "sorted([3, 1, 2])",
        "import math\nround(math.pi, 3)",
    )
    assert done[0].stdout.strip() == "Hello, World!"
    assert done[0].error is None
    assert done[2].stdout.strip() == "Hello, World! 30 3"
    assert "ZeroDivisionError: division by zero" in (done[3].error or "")
    assert '<cell 4>", line 1' in (done[3].error or "")
    assert "SyntaxError" in (done[4].error or "")
    assert done[5].stdout.strip() == "[1, 2, 3]"  # a trailing expression is shown
    assert done[6].stdout.strip() == "3.142"
    assert done[2].variables["x"] == 3


async def test_the_context_and_its_meta_are_there_one_or_several(worker: Worker) -> None:
    one = await worker("This is the context data.")
    several = await worker(["first document", "second"], [{"name": "a"}, {"name": "b"}])
    (shown,) = await cells(one, "print(type(context).__name__, context, context_meta[0]['name'])")
    (listed,) = await cells(several, "print(len(context), context[1], context_meta[1]['name'])")
    assert shown.stdout.strip() == "str This is the context data. a.txt"
    assert listed.stdout.strip() == "2 second b"


async def test_overwritten_tools_and_context_are_restored(worker: Worker) -> None:
    repl = await worker("original context content")
    rebound, after, rewrapped = await cells(
        repl,
        "context = 'hijacked'\nllm_query = lambda x: 'hijacked'\nanswer = 5\ndel FINAL",
        "print(context)\nprint(llm_query('test'))\nprint(answer)",
        "answer = {'content': 'intermediate', 'ready': False}",
    )
    assert set(rebound.restored) >= {"context", "llm_query", "answer", "FINAL"}
    assert after.stdout.splitlines() == [
        "original context content",
        "reply to test",
        "{'content': '', 'ready': False, 'sources': []}",
    ]
    (done,) = await cells(repl, "answer['content'] = 'done'\nanswer['ready'] = True")
    assert rewrapped.final is None
    assert done.final == "done"


async def test_answers_by_final_final_var_and_the_answer_dict(worker: Worker) -> None:
    repl = await worker("a" * 100)
    unready, final = await cells(
        repl,
        "answer['content'] = 'still working'",
        "FINAL('the answer', sources=[(0, 0, 10)])",
    )
    assert (unready.final, unready.partial) == (None, "still working")
    assert final.final == "the answer"
    assert [s.span for s in final.sources] == [(0, 0, 10)]
    by_name = await worker()
    missing, named = await cells(by_name, "FINAL_VAR('nothing')", "total = 42\nFINAL_VAR('total')")
    assert "no variable named 'nothing'" in (missing.error or "")
    assert (named.final, named.final_source) == ("42", "FINAL_VAR")


async def test_sub_calls_reach_the_app_and_their_errors_come_back_typed(worker: Worker) -> None:
    repl = await worker()
    done = await cells(
        repl,
        "print(llm_query('hi'))",
        "print(llm_query_batched(['a', 'b', 'c']))",
        "print(rlm_query('sub', context='child context'))",
        "print(rlm_query_batched(['x', 'y']))",
        "try:\n    llm_query('fail')\nexcept LLMCallError as e:\n    print('caught', e)",
        "print(SHOW_VARS())",
    )
    assert [c.stdout.strip() for c in done[:5]] == [
        "reply to hi",
        "['reply to a', 'reply to b', 'reply to c']",
        "child answer to sub over child context",
        "['child answer to x', 'child answer to y']",
        "caught the provider said no",
    ]
    assert done[5].error is None


async def test_output_is_capped_in_the_worker(worker: Worker) -> None:
    repl = await worker()
    (huge,) = await cells(repl, "print('x' * 3_000_000)")
    assert len(huge.stdout) < CAP + 200
    assert "more characters not kept" in huge.stdout


async def test_the_standard_library_model_code_uses_is_there(worker: Worker) -> None:
    repl = await worker()
    modules = ["re", "json", "collections", "itertools", "functools", "math", "statistics", "datetime", "csv", "io", "textwrap", "difflib", "string", "heapq", "bisect", "random", "hashlib", "base64", "unicodedata", "pathlib", "fractions", "decimal", "dataclasses", "typing", "copy", "pprint", "html", "urllib.parse", "zlib", "gzip", "struct", "uuid"]
    (imported,) = await cells(
        repl,
        "import importlib\n"
        f"names = {modules!r}\n"
        "print(sum(1 for n in names if importlib.import_module(n)))\n"
        "import statistics, hashlib, json, re\n"
        "print(statistics.mean([1, 2, 3]), hashlib.sha256(b'x').hexdigest()[:8],\n"
        "      json.dumps({'a': re.findall(r'\\d+', 'a1b22')}))",
    )
    assert imported.error is None, imported.error
    assert imported.stdout.splitlines() == [str(len(modules)), '2 2d711642 {"a": ["1", "22"]}']


async def test_a_module_that_is_not_there_fails_with_an_import_error(worker: Worker) -> None:
    repl = await worker()
    (missing,) = await cells(repl, "import no_such_module_anywhere")
    assert "ModuleNotFoundError" in (missing.error or "")
    assert "no_such_module_anywhere" in (missing.error or "")


async def test_a_cell_past_its_time_is_stopped_and_the_next_one_runs(
    worker: Worker, sandbox: str
) -> None:
    repl = await worker("kept context")
    loop, after = await cells(repl, "while True:\n    pass", "print(context)", timeout_s=0.5)
    assert loop.timed_out
    assert "TimeoutError" in (loop.error or "")
    if sandbox == "wasm":
        assert "the WebAssembly sandbox cannot pause a cell" in (loop.error or "")
        assert loop.variables_lost
    assert after.stdout.strip() == "kept context"


async def test_a_cell_that_exhausts_memory_fails_alone(worker: Worker) -> None:
    repl = await worker("kept context")
    bomb, after = await cells(
        repl, "blocks = []\nwhile True:\n    blocks.append(bytearray(32 * 1024 * 1024))", "print(context)"
    )
    assert "MemoryError" in (bomb.error or "") or bomb.variables_lost
    assert after.stdout.strip() == "kept context"


async def test_a_saved_state_comes_back_in_a_new_worker(worker: Worker) -> None:
    first = await worker()
    await cells(first, "notes = {'total': 42}\ndef double(v):\n    return 2 * v")
    saved = bytearray()
    report = await first.save_state(1 << 20, saved.extend, 1 << 20, 10)
    assert set(report.kept) == {"notes", "double"}
    second = await worker()
    restored = await second.restore_state(bytes(saved), 10)
    assert set(restored.kept) == {"notes", "double"}
    (used,) = await cells(second, "print(double(notes['total']))")
    assert used.stdout.strip() == "84"


def test_a_context_too_large_for_a_webassembly_python_is_refused_before_the_run(
    scripted_server: ScriptedServer,
) -> None:
    big = ContextDocument(name="big.txt", text="x" * 100_000_000)
    with pytest.raises(ConfigError) as refused:
        make_run(scripted_server, sandbox="wasm", documents=[big], memory_limit_mb=256)

    assert refused.value.setting == "sandbox"
    assert refused.value.worded({"sandbox": "--sandbox"}).startswith(
        "--sandbox wasm: the documents' 100 MB of text are too large for the WebAssembly sandbox"
    )
    assert "--sandbox kernel" in str(refused.value)
    assert scripted_server.chat_requests() == []
    make_run(scripted_server, sandbox="kernel", documents=[big], memory_limit_mb=256)


def test_a_memory_limit_too_small_for_a_webassembly_python_is_refused_before_the_run(
    scripted_server: ScriptedServer,
) -> None:
    with pytest.raises(ConfigError) as refused:
        make_run(scripted_server, sandbox="wasm", memory_limit_mb=1)

    assert refused.value.setting == "memory_limit_mb"
    assert "too small for the WebAssembly sandbox" in str(refused.value)
    assert scripted_server.chat_requests() == []
