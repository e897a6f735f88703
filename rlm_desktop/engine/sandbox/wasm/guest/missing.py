"""A clear ImportError for a module the WebAssembly sandbox does not carry."""

import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

NOT_IN_SANDBOX = (
    "{name!r} is not available in RLM Desktop's WebAssembly sandbox (no processes, sockets, "
    "threads or native extensions there); use the standard library's text and data modules, "
    "llm_query_batched for parallel calls, or run with --sandbox kernel where the system has one"
)


class NotInSandbox:
    """The last finder on `sys.meta_path`: any module nothing else found is refused by name."""

    @staticmethod
    def find_spec(
        name: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        top = name.partition(".")[0]
        raise ModuleNotFoundError(NOT_IN_SANDBOX.format(name=top), name=name)


def install() -> None:
    """Put the finder last, once."""
    if not any(isinstance(f, NotInSandbox) for f in sys.meta_path):
        sys.meta_path.append(NotInSandbox())
