"""The application process is non-dumpable once a worker has started (Linux)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli import run_python

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")


def test_starting_a_worker_makes_the_application_non_dumpable(
    tmp_path: Path, isolated_home: Path
) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from rlm_desktop.engine.sandbox.kernel.hardening import is_protected
        from rlm_desktop.engine.sandbox.process import WorkerProcess

        async def handler(op, args):
            return None

        async def main():
            before = is_protected()
            worker = WorkerProcess("ctx", [], scratch_dir=Path({str(tmp_path)!r}),
                                   memory_limit_mb=None, output_cap_chars=1000, handler=handler)
            await worker.start()
            outcome = await worker.execute("print(len(context))", 10)
            await worker.close()
            print(before, is_protected(), outcome.stdout.strip())

        asyncio.run(main())
        """
    )
    result = run_python("-c", script, home=isolated_home, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "3"]
