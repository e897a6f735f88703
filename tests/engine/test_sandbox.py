"""The REPL worker: time limits, uninterruptible cells, memory limits, secrets, cwd, big contexts."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from pathlib import Path

import psutil
import pytest

from rlm_desktop.engine import Budget, ContextDocument, Credentials
from rlm_desktop.engine.events import CellExecuted, WorkerRestarted
from tests.engine.scripting import (
    DOCUMENT,
    HOST_PID,
    QUERY,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
    still_alive,
)
from tests.scripted_server import ScriptedServer

PRINT_PID = f"import os\nprint('pid', {HOST_PID})"


def pids(cells: list[CellExecuted]) -> list[int]:
    return [int(m) for cell in cells for m in re.findall(r"pid (\d+)", cell.stdout)]


async def test_an_endless_loop_is_interrupted_and_the_state_kept(
    scripted_server: ScriptedServer,
) -> None:
    turns = [
        repl(f"{PRINT_PID}\nkeep = 'still here'"),
        repl("n = 0\nwhile True:\n    n += 1"),
        repl(f"{PRINT_PID}\nFINAL(keep)"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    run = make_run(scripted_server, sandbox="kernel", budget=Budget(cell_timeout_s=0.5))
    result, events = await run_to_end(run)

    shown = observation_after(scripted_server, 1)
    assert "TimeoutError" in shown
    assert "interrupted" in shown
    assert "variables" not in shown
    cells = of_type(events, CellExecuted)
    assert (cells[1].timed_out, cells[1].variables_lost) == (True, False)
    assert cells[1].duration_s < 2.0
    assert not of_type(events, WorkerRestarted)
    first, last = pids(cells)
    assert first == last
    assert (result.status, result.answer) == ("completed", "still here")


@pytest.mark.parametrize(
    "stubborn",
    [
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "while True:\n    time.sleep(0.01)",
        "print(sum(range(10**15)))",
    ],
    ids=["sigint-ignored", "c-level-loop"],
)
async def test_a_cell_that_ignores_the_interrupt_restarts_the_worker(
    scripted_server: ScriptedServer, stubborn: str
) -> None:
    turns = [
        repl(f"{PRINT_PID}\nkeep = 1"),
        repl(stubborn),
        repl(f"{PRINT_PID}\nprint('keep' in globals())\nprint('chars', len(context))"),
        repl("FINAL('done')"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    run = make_run(scripted_server, sandbox="kernel", budget=Budget(cell_timeout_s=0.3))
    result, events = await run_to_end(run)

    shown = observation_after(scripted_server, 1)
    assert "could not be interrupted" in shown
    assert "variables" in shown
    assert "lost" in shown
    assert of_type(events, CellExecuted)[1].variables_lost
    assert len(of_type(events, WorkerRestarted)) == 1
    old, new = pids(of_type(events, CellExecuted))
    assert old != new
    assert await still_alive([old]) == set()
    after = observation_after(scripted_server, 2)
    assert "False" in after
    assert f"chars {len(DOCUMENT.text)}" in after
    assert (result.status, result.answer) == ("completed", "done")


async def test_a_memory_bomb_is_stopped_by_the_limit_and_the_run_goes_on(
    scripted_server: ScriptedServer,
) -> None:
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))"
    turns = [repl(bomb), repl("blocks = None\nFINAL('survived')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    parent = psutil.Process()
    before = parent.memory_info().rss
    run = make_run(scripted_server, memory_limit_mb=512, budget=Budget(cell_timeout_s=20))
    result, _ = await run_to_end(run)

    shown = observation_after(scripted_server, 0)
    assert "MemoryError" in shown or "restarted" in shown
    assert (result.status, result.answer) == ("completed", "survived")
    assert parent.memory_info().rss - before < 200 * 1024 * 1024


async def test_secrets_in_the_parent_environment_never_reach_model_code(
    scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-4242-private")
    code = "import os\nprint(dict(os.environ))\nprint(open('/proc/self/environ', 'rb').read())"
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    run = make_run(scripted_server, credentials=Credentials(api_key="sk-test-secret"))
    result, _ = await run_to_end(run)

    assert result.status == "completed"
    assert "'HOME':" in observation_after(scripted_server, 0)
    sent = repr(scripted_server.chat_requests())
    assert "sk-test-secret" not in sent
    assert "tok-4242-private" not in sent
    sent_keys = {
        v for h in scripted_server.headers for k, v in h.items() if k.lower() == "authorization"
    }
    assert sent_keys == {"Bearer sk-test-secret"}


async def test_the_worker_works_in_a_scratch_folder_of_the_run(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    code = (
        "import os\nprint('cwd', os.getcwd())\n"
        "open('note.txt', 'w').write('scratch')\nos.chdir('/')\nprint('moved', os.getcwd())"
    )
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    here = os.getcwd()
    run = make_run(scripted_server, sandbox="kernel")
    result, _ = await run_to_end(run)

    shown = observation_after(scripted_server, 0)
    cwd = Path(re.findall(r"cwd (\S+)", shown)[0])
    assert cwd.is_relative_to(isolated_home / "scratch" / run.run_id)
    assert "moved /" in shown
    assert os.getcwd() == here
    assert result.status == "completed"
    assert not await asyncio.to_thread(cwd.exists)


async def test_a_big_context_reaches_the_repl_intact(scripted_server: ScriptedServer) -> None:
    line = "Zeile {0}: Grüße, naïve café ✓ 𝄞 — amount {0}\n"
    text = "".join(line.format(i) for i in range(70_000))
    assert len(text) > 3_000_000
    digest = hashlib.sha256(text.encode()).hexdigest()
    code = "import hashlib\nprint(len(context), hashlib.sha256(context.encode()).hexdigest())"
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    run = make_run(scripted_server, documents=[ContextDocument(name="big.txt", text=text)])
    result, _ = await run_to_end(run)

    assert f"{len(text)} {digest}" in observation_after(scripted_server, 0)
    assert result.status == "completed"


async def test_several_documents_are_a_list_in_load_order(scripted_server: ScriptedServer) -> None:
    documents = [
        ContextDocument(name="b.txt", text="second " * 10),
        ContextDocument(name="a.txt", text="first"),
    ]
    code = "print(type(context).__name__, [len(c) for c in context], [m['name'] for m in context_meta])"
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    await run_to_end(make_run(scripted_server, documents=documents))

    assert "list [70, 5] ['b.txt', 'a.txt']" in observation_after(scripted_server, 0)


async def test_long_output_is_cut_for_the_model_but_kept_for_the_record(
    scripted_server: ScriptedServer,
) -> None:
    code = "print('HEAD' + 'x' * 50_000 + 'TAIL')"
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    run = make_run(scripted_server, output_limit_chars=1_000)
    _, events = await run_to_end(run)

    shown = observation_after(scripted_server, 0)
    assert len(shown) <= 1_000
    assert "HEAD" in shown
    assert "TAIL" in shown
    assert "characters cut" in shown
    assert len(of_type(events, CellExecuted)[0].stdout.strip()) == 50_008


async def test_model_code_cannot_import_the_workers_own_modules_by_their_short_names(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "for name in ('state', 'repl', 'cells', 'serve', 'launch', 'channel', 'variables'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "        print('imported', name)\n"
        "    except ImportError:\n"
        "        print('refused', name)\n"
    )
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    result, _ = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert result.status == "completed"
    assert "imported" not in shown
    assert shown.count("refused") == 7
