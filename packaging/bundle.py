"""What every frozen build of RLM Desktop holds, shared by the Linux, macOS and Windows spec files.

PyInstaller-free (the spec files add what needs PyInstaller), so a test can check it without
building anything. Paths are relative to the repository; destinations are folders inside the bundle,
laid out as the installed package is: `resources/` beside the `rlm_desktop` package (paths.py looks
there), litellm's and RapidOCR's data files inside their packages' folders (litellm_files.py and
RapidOCR find them through the package's folder), and the sandbox's scripts as files in
`rlm_desktop/engine/sandbox/` (the worker, in its folder `worker/`, loads confine.py from the folder
above its own), with the wasm sandbox's guest in `wasm/` (built from the sources first,
`build_guest`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pkgutil
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "rlm-desktop"
APP_ID = "io.github.rlm_desktop.RLMDesktop"
ENTRY = ROOT / "packaging" / "bundle_entry.py"
ICONS = ROOT / "packaging" / "icons"
ICO = ICONS / "rlm-desktop.ico"
ICNS = ICONS / "rlm-desktop.icns"

RESOURCE_FOLDERS = ("profiles", "samples", "icons", "style")
SANDBOX_SCRIPTS = (
    "kernel/confine.py", "kernel/mounts.py", "kernel/seccomp.py", "kernel/pipes.py",
    "kernel/seatbelt.py",
    "worker/__init__.py", "worker/__main__.py", "worker/launch.py", "worker/serve.py",
    "worker/channel.py", "worker/proxy.py", "worker/errors.py", "worker/repl.py",
    "worker/cells.py", "worker/variables.py", "worker/state.py", "worker/cell_module.py",
    "worker/sources.py",
    # The wasm sandbox's guest (build_guest makes it; the host compiles it once per machine).
    "wasm/guest.wasm",
)
# Packages that load a native library of their own with ctypes from a folder of the package, which
# PyInstaller's analysis does not follow, under a name its collect_dynamic_libs misses (wasmtime's
# `_libwasmtime.so` is not `lib*.so`); pyinstaller-hooks-contrib has no hook for wasmtime.
NATIVE_LIBRARY_PACKAGES = ("wasmtime",)
NATIVE_SUFFIXES = (".so", ".dll", ".dylib")
# Data files packages read from their own folder, which PyInstaller's analysis does not see:
# {package: ((file or folder in it, folder in the bundle's copy of it), ...)}.
PACKAGE_DATA = {
    "litellm": (
        ("model_prices_and_context_window_backup.json", "."),
        ("litellm_core_utils/tokenizers", "litellm_core_utils/tokenizers"),
    ),
    # OCR's PP-OCR models (documents/ocr_models.py); RapidOCR's code, which imports OpenCV, stays out.
    "rapidocr_onnxruntime": (("config.yaml", "."), ("models", "models")),
}

# Standard-library modules model code never needs and that would pull in large extras.
STDLIB_LEFT_OUT = frozenset(
    {
        "tkinter",
        "turtle",
        "turtledemo",
        "idlelib",
        "test",
        "lib2to3",
        "ensurepip",
        "venv",
        "pydoc_data",
        "distutils",
        "__phello__",
        "antigravity",
        "this",
    }
)
# Qt modules the window does not use (pyqtgraph tries QtSvg, QtOpenGLWidgets and QtTest, and works
# without them); PySide6-Essentials ships them all.
QT_LEFT_OUT = tuple(
    f"PySide6.{name}"
    for name in (
        "QtQml",
        "QtQuick",
        "QtQuickWidgets",
        "QtQuickControls2",
        "QtQuickTest",
        "QtOpenGL",
        "QtOpenGLWidgets",
        "QtTest",
        "QtSvg",
        "QtSvgWidgets",
        "QtSql",
        "QtNetwork",
        "QtDBus",
        "QtDesigner",
        "QtUiTools",
        "QtXml",
        "QtConcurrent",
        "QtHelp",
        "QtPrintSupport",
        "QtStateMachine",
    )
)
PYTHON_LEFT_OUT = (
    "tkinter",
    "IPython",
    "matplotlib",
    "PyQt5",
    "PyQt6",
    "PySide2",
    "pytest",
    "mypy",
    "ast_serialize",
    # The cluster executor is the `[cluster]` extra of a pip install (every node needs one too);
    # the frozen app runs its trials here and names the extra when --ray is asked for.
    "ray",
    # OpenCV (~170 MB with its FFmpeg and OpenBLAS): RapidOCR's wheel names it, but the app's OCR
    # pipeline runs without it (documents/ocr_pipeline.py), so nothing may bring it in.
    "cv2",
    "rapidocr_onnxruntime",
)
# Bundle paths (forward slashes) dropped after analysis: Qt's translations (the window is English
# only), plugins for Qt modules that are left out, and the GTK 3 platform theme, which would bring
# the build machine's whole GTK stack (about 20 MB); Qt then follows the desktop through its
# xdg-desktop-portal theme.
DROPPED_PREFIXES = (
    "PySide6/Qt/translations/",
    "PySide6/Qt/plugins/platformthemes/libqgtk3",
    "PySide6/Qt/plugins/qmltooling/",
    "PySide6/Qt/plugins/designer/",
    "PySide6/Qt/plugins/sqldrivers/",
)
# Distribution metadata read at run time (versions in --self-check, keyring's backend entry points).
# OpenTelemetry finds its context implementation through an entry point too.
METADATA = (
    "qasync",
    "sqlite-utils",
    "keyring",
    "litellm",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "pypdfium2",
)
# Extra modules found only at run time: tiktoken's encodings plugin, keyring's backends (entry
# points), and numpy for model code in the REPL worker.
HIDDEN_IMPORTS = (
    # The wasm sandbox's host, started as the bundle itself with --wasm-host.
    "rlm_desktop.engine.sandbox.wasm.host",
    "wasmtime",
    "wasmtime.component",
    "tiktoken_ext",
    "tiktoken_ext.openai_public",
    "keyring.backends.SecretService",
    "keyring.backends.kwallet",
    "keyring.backends.libsecret",
    "keyring.backends.macOS",
    "keyring.backends.Windows",
    "keyring.backends.chainer",
    "keyring.backends.fail",
    "opentelemetry.context.contextvars_context",
    "numpy",
    # The document readers, imported by name when a file of their type comes (documents/extract.py).
    "rlm_desktop.documents.pdf",
    "rlm_desktop.documents.word",
    "rlm_desktop.documents.spreadsheet",
    "rlm_desktop.documents.slides",
    "rlm_desktop.documents.opendocument",
    "rlm_desktop.documents.ebook",
    "rlm_desktop.documents.richtext",
    "rlm_desktop.documents.mail",
    "rlm_desktop.documents.ocr",
)


def version() -> str:
    """The app's version, read from rlm_desktop/__init__.py without importing it."""
    text = (ROOT / "rlm_desktop" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if found is None:
        raise SystemExit("rlm_desktop/__init__.py names no __version__")
    return found[1]


def installed(distribution: str) -> bool:
    """True when `distribution` is installed (its metadata can be copied into the bundle)."""
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def build_guest() -> None:
    """Build the wasm sandbox's guest unless it is current (componentize-py, of the dev extra),
    so a bundle never carries a guest older than its sources, or none."""
    subprocess.run(
        [sys.executable, "-m", "rlm_desktop.engine.sandbox.wasm.build"], cwd=ROOT, check=True
    )


def resource_datas() -> list[tuple[str, str]]:
    """The app's own resources: (source folder, bundle folder)."""
    return [(str(ROOT / "resources" / name), f"resources/{name}") for name in RESOURCE_FOLDERS]


def sandbox_datas() -> list[tuple[str, str]]:
    """The sandbox's scripts as files, each in its folder, for the worker to load confine.py."""
    folder = ROOT / "rlm_desktop" / "engine" / "sandbox"
    return [
        (str(folder / name), f"rlm_desktop/engine/sandbox/{name}".rpartition("/")[0])
        for name in SANDBOX_SCRIPTS
    ]


def package_folder(name: str) -> Path:
    """An installed package's folder, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} is not installed: run `make package` from the project's venv")
    return Path(next(iter(spec.submodule_search_locations)))


def package_datas() -> list[tuple[str, str]]:
    """The data files of PACKAGE_DATA: litellm's price map and tokenizer files and RapidOCR's
    models (the app never downloads any of them)."""
    return [
        (str(package_folder(name) / source), f"{name}/{target}".rstrip("/."))
        for name, files in PACKAGE_DATA.items()
        for source, target in files
    ]


def native_binaries() -> list[tuple[str, str]]:
    """The native libraries of NATIVE_LIBRARY_PACKAGES, each in the bundle where its package
    loads it from: (file, bundle folder)."""
    found = []
    for name in NATIVE_LIBRARY_PACKAGES:
        package = package_folder(name)
        for path in sorted(package.rglob("*")):
            if path.suffix in NATIVE_SUFFIXES and path.is_file():
                found.append((str(path), f"{name}/{path.parent.relative_to(package).as_posix()}"))
    return found


def stdlib_modules() -> list[str]:
    """Every standard-library module but those left out: model code in the REPL worker may import
    any of them, and the worker runs on the bundle's own interpreter."""
    names = {name for name in sys.stdlib_module_names if not name.startswith("_")}
    names.update(_walk(Path(sysconfig.get_paths()["stdlib"]), ""))
    return sorted(
        name
        for name in names
        if name.split(".")[0] not in STDLIB_LEFT_OUT
        and importlib.util.find_spec(name.split(".")[0]) is not None
    )


def _walk(folder: Path, prefix: str) -> list[str]:
    """Module names under `folder`, found without importing anything."""
    found = []
    for module in pkgutil.iter_modules([str(folder)], prefix):
        last = module.name.rsplit(".", 1)[-1]
        if last in ("test", "tests", "__main__") or module.name in STDLIB_LEFT_OUT:
            continue
        found.append(module.name)
        if module.ispkg:
            found += _walk(folder / last, module.name + ".")
    return found


def is_dropped(destination: str) -> bool:
    """True for a bundle path the app never reads (see DROPPED_PREFIXES)."""
    return destination.replace("\\", "/").startswith(DROPPED_PREFIXES)


def only_needed_by_dropped(binaries: list[tuple[str, str, str]]) -> set[str]:
    """Bundle paths of the shared libraries that only dropped files need (ELF only, read with
    `readelf -d`; nothing where it is missing). `binaries` are PyInstaller's TOC entries."""
    readelf = shutil.which("readelf")
    if readelf is None:
        return set()
    needs = {name: _needed(readelf, source) for name, source, _kind in binaries}
    by_file = {Path(name).name: name for name in needs}

    def closure(roots: list[str]) -> set[str]:
        seen: set[str] = set()
        while roots:
            name = roots.pop()
            if name not in seen:
                seen.add(name)
                roots += [by_file[lib] for lib in needs.get(name, ()) if lib in by_file]
        return seen

    top_level_libraries = {name for name in needs if "/" not in name.replace("\\", "/")}
    used = closure(
        [name for name in needs if not is_dropped(name) and name not in top_level_libraries]
    )
    return closure([name for name in needs if is_dropped(name)]) - used


def _needed(readelf: str, path: str) -> list[str]:
    output = subprocess.run(
        [readelf, "-d", path], capture_output=True, text=True, check=False
    ).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", output)


def strip_bundle(folder: Path) -> int:
    """Strip the symbols of the bundle's ELF files (`strip --strip-unneeded`), but those in a
    wheel's `*.libs` folder, which auditwheel patched and strip(1) breaks (numpy's OpenBLAS then
    fails with "ELF load command ... not page-aligned"). The number of files stripped."""
    strip = shutil.which("strip")
    if strip is None:
        return 0
    internal = folder / "_internal"  # not the executable: its archive is appended to it
    elf = [
        path
        for path in sorted(internal.rglob("*"))
        if path.is_file()
        and not path.is_symlink()
        and not any(part.endswith(".libs") for part in path.relative_to(internal).parts)
        and _is_elf(path)
    ]
    for path in elf:
        subprocess.run([strip, "--strip-unneeded", str(path)], check=True)
    return len(elf)


def _is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"
