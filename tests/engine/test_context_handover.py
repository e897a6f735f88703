"""The documents reach a worker without the app holding copies of them: streamed document by
document as the worker starts (and again when it restarts), from the one copy the call holds.

Each test drives a real worker of the backend under test (`sandbox`) through `WorkerProcess`;
the app's own allocations are measured with tracemalloc while it hands the context over.
"""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.engine.sandbox.connection import WorkerLauncher
from rlm_desktop.engine.sandbox.handover import frame_limit
from rlm_desktop.engine.sandbox.process import WorkerProcess
from tests.engine.sandboxes import launcher_for

CAP = 10_000
DOCUMENT_CHARS = 50_000
IN_FLIGHT = 12_000_000
KEPT = 2_000_000


async def echo(op: str, args: dict[str, Any]) -> Any:
    """Sub-calls answer with the size of the context they were handed."""
    return f"{op} got {len(args.get('context') or '')} items"


def corpus(megabytes: int) -> list[str]:
    """`megabytes` MB of 50 KB documents, each its own text."""
    count = megabytes * 1_000_000 // DOCUMENT_CHARS
    return [
        (f"document {n}: " + "figures of the quarter. " * 3000)[:DOCUMENT_CHARS]
        for n in range(count)
    ]


def digest(documents: list[str] | str) -> str:
    joined = documents if isinstance(documents, str) else "\x00".join(documents)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()


DIGEST_CELL = (
    "import hashlib\n"
    "joined = context if isinstance(context, str) else '\\x00'.join(context)\n"
    "print(hashlib.sha256(joined.encode('utf-8', 'surrogatepass')).hexdigest(), len(context))"
)


@pytest.fixture
async def launcher(sandbox: str, tmp_path: Path) -> AsyncIterator[WorkerLauncher]:
    made = launcher_for(sandbox, tmp_path / "run", CAP, memory_limit_mb=1024)
    yield made
    await made.close()


def worker(launcher: WorkerLauncher, tmp_path: Path, context: Any) -> WorkerProcess:
    return WorkerProcess(
        context,
        [{"name": "a.txt", "path": "/docs/a.txt", "chars": 1, "tokens": 1}],
        scratch_dir=tmp_path / "run" / "w0",
        memory_limit_mb=1024,
        output_cap_chars=CAP,
        handler=echo,
        launcher=launcher,
    )


async def test_handing_over_the_documents_copies_none_of_them_in_the_app(
    launcher: WorkerLauncher, tmp_path: Path
) -> None:
    documents = corpus(40)
    size = sum(len(d) for d in documents)
    process = worker(launcher, tmp_path, documents)
    await launcher.start()
    try:
        tracemalloc.start()
        await process.start()
        after_start, peak = tracemalloc.get_traced_memory()
        await process.restart()
        _, restart_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        seen = await process.execute(DIGEST_CELL, 60)
    finally:
        tracemalloc.stop()
        await process.close()

    assert seen.stdout.split() == [digest(documents), str(len(documents))]
    # What waits to be sent is bounded (a few MB in flight), whatever the documents weigh.
    assert peak < IN_FLIGHT, f"the app allocated {peak:,} bytes to hand over {size:,}"
    assert restart_peak < IN_FLIGHT, f"a restart allocated {restart_peak:,} bytes"
    assert after_start < KEPT, f"the app kept {after_start:,} bytes after the start"


async def test_one_long_document_arrives_whole_and_in_order(
    launcher: WorkerLauncher, tmp_path: Path
) -> None:
    text = "".join(f"line {n}: é ü 漢字 \U0001f600\n" for n in range(200_000)) + "\ud800 end"
    process = worker(launcher, tmp_path, text)
    try:
        await process.start()
        seen = await process.execute(DIGEST_CELL, 60)
    finally:
        await process.close()

    assert seen.error is None, seen.error
    assert seen.stdout.split() == [digest(text), str(len(text))]


async def test_model_code_that_rewrites_its_documents_and_scratch_leaves_a_restart_the_originals(
    launcher: WorkerLauncher, tmp_path: Path
) -> None:
    documents = corpus(2)
    process = worker(launcher, tmp_path, documents)
    tamper = (
        "import os\n"
        "context[0] = 'tampered'\n"
        "context.append('planted')\n"
        "for name in os.listdir('.'):\n"
        "    if os.path.isfile(name):\n"
        "        open(name, 'w').write('tampered')\n"
        "open('context.json', 'w').write('[\"tampered\"]')\n"
        "print('done')"
    )
    try:
        await process.start()
        tampered = await process.execute(tamper, 30)
        await process.restart()
        seen = await process.execute(DIGEST_CELL, 60)
    finally:
        await process.close()

    assert tampered.stdout.strip() == "done", tampered.error
    assert documents[0].startswith("document 0:")
    assert seen.stdout.split() == [digest(documents), str(len(documents))]


async def test_the_frame_limit_still_lets_a_cell_hand_the_whole_context_on(
    launcher: WorkerLauncher, tmp_path: Path
) -> None:
    documents = corpus(6)
    process = worker(launcher, tmp_path, documents)
    try:
        await process.start()
        handed = await process.execute("print(rlm_query('go', context=context))", 60)
    finally:
        await process.close()

    assert handed.error is None, handed.error
    assert handed.stdout.strip() == f"rlm_query got {len(documents)} items"
    assert process.frame_limit >= frame_limit(CAP, sum(len(d) for d in documents))
