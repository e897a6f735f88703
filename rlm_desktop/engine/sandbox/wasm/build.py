"""Builds the wasm sandbox's guest: the worker's REPL and a standard library in one component.

`python -m rlm_desktop.engine.sandbox.wasm.build` (run by `make`, by the wheel's build and by the
bundles' spec): stages the worker package as `rlm_worker` beside guest/*.py, has componentize-py
(a build-time dependency, never the app's) make `guest.wasm` from them and guest/repl.wit, and
writes the digest of what it was built from beside it (`guest.wasm.sources`), so a guest older
than its sources is known (`is_current`) and rebuilt, never shipped.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rlm_desktop.engine.sandbox.wasm.compiled import GUEST

HERE = Path(__file__).resolve().parent
GUEST_SOURCES = HERE / "guest"
WORKER = HERE.parent / "worker"
SOURCES_RECORD = GUEST.with_name(GUEST.name + ".sources")
WORLD = "repl"


def inputs() -> list[Path]:
    """The files the guest is made from, in a fixed order."""
    files = sorted(WORKER.glob("*.py")) + sorted(GUEST_SOURCES.glob("*.py"))
    return [*files, GUEST_SOURCES / "repl.wit"]


def sources_digest() -> str:
    """A digest of the guest's inputs and the builder's version."""
    hashed = hashlib.sha256(_builder_version().encode())
    for path in inputs():
        hashed.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hashed.hexdigest()


def is_current() -> bool:
    """True when guest.wasm exists and was built from the sources as they are now."""
    if not GUEST.is_file() or not SOURCES_RECORD.is_file():
        return False
    return SOURCES_RECORD.read_text().strip() == sources_digest()


def _builder_version() -> str:
    try:
        return importlib.metadata.version("componentize-py")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def build(output: Path = GUEST) -> Path:
    """Build the guest into `output` (atomically) and record what it was built from."""
    if _builder_version() == "absent":
        raise SystemExit(
            "componentize-py is not installed: `pip install -e '.[dev]'` (or `make`) installs it"
        )
    with tempfile.TemporaryDirectory(prefix="rlm-guest-") as folder:
        stage = Path(folder)
        package = stage / "rlm_worker"
        package.mkdir()
        for source in sorted(WORKER.glob("*.py")):
            shutil.copy2(source, package / source.name)
        for source in sorted(GUEST_SOURCES.glob("*.py")):
            shutil.copy2(source, stage / source.name)
        built = stage / "guest.wasm"
        command = [
            sys.executable,
            "-c",
            "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; "
            "sys.exit(script())",
            "-d",
            str(GUEST_SOURCES / "repl.wit"),
            "-w",
            WORLD,
            "componentize",
            "-p",
            str(stage),
            "app",
            "-o",
            str(built),
        ]
        result = subprocess.run(command, cwd=stage, capture_output=True, text=True)
        if result.returncode != 0 or not built.is_file():
            errors = [line for line in result.stderr.splitlines() if "Error" in line]
            raise SystemExit(
                "building the wasm guest failed: "
                + (errors[-1] if errors else result.stderr[-2000:])
            )
        temporary = output.with_name(output.name + ".part")
        shutil.copyfile(built, temporary)
        os.replace(temporary, output)
    SOURCES_RECORD.write_text(sources_digest() + "\n")
    return output


def main() -> None:
    """Build the guest unless it is current (`--force` builds it anyway)."""
    if "--force" in sys.argv[1:] or not is_current():
        path = build()
        print(f"built {path} ({path.stat().st_size / 1e6:.1f} MB)")
    else:
        print(f"{GUEST} is current")


if __name__ == "__main__":
    main()
