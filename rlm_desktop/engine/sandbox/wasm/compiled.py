"""The guest component compiled to this machine's code once, kept in the data folder.

Compiling the 20 MB component takes seconds; loading the compiled form takes milliseconds. The
compiled file is native code the host maps and runs, so it is never trusted as found: its name
carries the guest's digest, the runtime's version and the machine, and a digest of its own
bytes, written beside it, is checked before every load. Anything that does not match (damaged,
stale, another version's) is compiled afresh and replaced atomically.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

GUEST = Path(__file__).with_name("guest.wasm")
"""The component the project's build makes (build.py) and the wheel and bundles ship."""


class GuestMissing(RuntimeError):
    """The guest component is not there (a source checkout that was not built)."""


def digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    hashed = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            hashed.update(block)
    return hashed.hexdigest()


def runtime_version() -> str:
    """The installed wasmtime's version (a frozen bundle without its metadata: "bundled")."""
    import importlib.metadata

    try:
        return importlib.metadata.version("wasmtime")
    except importlib.metadata.PackageNotFoundError:
        return "bundled"


def cache_name(guest_digest: str, runtime_version: str) -> str:
    """The compiled file's name: which guest, which runtime, which machine."""
    machine = f"{sys.platform}-{platform.machine().lower()}"
    return f"guest-{guest_digest[:16]}-wasmtime{runtime_version}-{machine}.cwasm"


def make_engine() -> Any:
    """The one wasmtime engine configuration guests run under (epoch interruption on): a
    compiled guest loads only into an engine configured as the one that compiled it."""
    import wasmtime

    config = wasmtime.Config()
    config.epoch_interruption = True
    return wasmtime.Engine(config)


def load_component(
    engine: Any, cache_dir: Path, on_compiling: Callable[[], None], guest: Path = GUEST
) -> Any:
    """The guest as a wasmtime component for `engine`, from the cache when it holds this exact
    guest's compiled form intact, else compiled now (`on_compiling` is told first) and kept."""
    from wasmtime import WasmtimeError
    from wasmtime.component import Component

    if not guest.is_file():
        raise GuestMissing(
            f"the WebAssembly sandbox's guest ({guest.name}) is not built: run `make` in the "
            "source folder, or install RLM Desktop from a wheel"
        )
    cached = cache_dir / cache_name(digest(guest), runtime_version())
    check = cached.with_suffix(".sha256")
    if cached.is_file() and check.is_file():
        try:
            if check.read_text().strip() == digest(cached):
                return Component.deserialize_file(engine, str(cached))
        except (OSError, WasmtimeError):
            pass
    on_compiling()
    component = Component.from_file(engine, str(guest))
    _keep(cached, check, bytes(component.serialize()))
    return component


def _keep(cached: Path, check: Path, data: bytes) -> None:
    """Write the compiled bytes and their digest, each atomically; a failure keeps nothing."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        _replace(cached, data)
        _replace(check, hashlib.sha256(data).hexdigest().encode())
    except OSError:
        pass  # a read-only data folder: compiled again next time


def _replace(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
