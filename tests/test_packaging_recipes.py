"""The packaging recipes stay correct without building them: the PyInstaller spec files (Linux,
macOS, Windows), what bundle.py puts in a bundle, the Flatpak manifest, and the desktop entry and
AppStream metadata as Debian's validators read them."""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from rlm_desktop import __version__
from rlm_desktop.engine.sandbox.kernel.launcher import WORKER_SCRIPT, launcher_command
from rlm_desktop.engine.sandbox.wasm import build
from rlm_desktop.engine.sandbox.wasm.compiled import GUEST
from rlm_desktop.engine.sandbox.wasm.launcher import HOST_MODULE
from rlm_desktop.engine.sandbox.worker.launch import FROZEN_LAUNCHER_FLAG
from rlm_desktop.litellm_files import PRICE_MAP_FILE, litellm_package_dir
from rlm_desktop.paths import RESOURCES
from rlm_desktop.ui.app import DESKTOP_ID
from tests.cli import ROOT, isolated_env, run_python
from tests.packaged import first_guest

PACKAGING = ROOT / "packaging"
SPECS = ("rlm-desktop.spec", "rlm-desktop-macos.spec", "rlm-desktop-windows.spec")
SPEC_GLOBALS = {"Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE"}
DESKTOP_FILE = PACKAGING / f"{DESKTOP_ID}.desktop"
METAINFO = PACKAGING / f"{DESKTOP_ID}.metainfo.xml"
FLATPAK = PACKAGING / "flatpak" / f"{DESKTOP_ID}.yml"


def load_bundle() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bundle", PACKAGING / "bundle.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bundle = load_bundle()


@pytest.mark.parametrize("name", SPECS)
def test_each_spec_file_is_python_that_takes_its_contents_from_bundle_py(name: str) -> None:
    tree = ast.parse((PACKAGING / name).read_text(encoding="utf-8"), filename=name)
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "bundle"
    }
    missing = sorted(attribute for attribute in used if not hasattr(bundle, attribute))
    assert not missing, f"{name} uses bundle.{missing}, which bundle.py lacks"
    assert {"ENTRY", "resource_datas", "package_datas", "sandbox_datas", "stdlib_modules"} <= used
    assert {"HIDDEN_IMPORTS", "QT_LEFT_OUT", "METADATA", "is_dropped"} <= used
    assert {"build_guest", "native_binaries"} <= used  # the wasm sandbox's guest and runtime
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert called - {"str", "Path", "copy_metadata", "collect_submodules"} <= SPEC_GLOBALS
    assert {"Analysis", "PYZ", "EXE", "COLLECT"} <= called
    first_line = {
        name: min(
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == name)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
            )
        )
        for name in ("build_guest", "Analysis")
    }
    assert first_line["build_guest"] < first_line["Analysis"], "the guest is built first"


def test_the_platform_recipes_name_their_icons_and_the_app_id() -> None:
    macos = (PACKAGING / "rlm-desktop-macos.spec").read_text(encoding="utf-8")
    windows = (PACKAGING / "rlm-desktop-windows.spec").read_text(encoding="utf-8")
    assert "bundle.ICNS" in macos
    assert "BUNDLE(" in macos
    assert "bundle.APP_ID" in macos
    assert "bundle.ICO" in windows
    assert "console=False" in windows
    assert "console=True" in windows
    assert bundle.ICNS.is_file()
    assert bundle.ICO.is_file()
    assert bundle.ENTRY.is_file()
    assert bundle.APP_ID == DESKTOP_ID
    assert bundle.version() == __version__


def test_the_bundle_gets_every_file_where_the_app_reads_it() -> None:
    resources = dict(bundle.resource_datas())
    assert {Path(source) for source in resources} == {
        path for path in RESOURCES.iterdir() if path.is_dir() and path.name != "__pycache__"
    }
    assert all(target == f"resources/{Path(source).name}" for source, target in resources.items())
    package = litellm_package_dir()
    assert package is not None
    packages = dict(bundle.package_datas())
    assert packages[str(package / PRICE_MAP_FILE)] == "litellm"
    tokenizers = package / "litellm_core_utils" / "tokenizers"
    assert packages[str(tokenizers)] == "litellm/litellm_core_utils/tokenizers"
    ocr = Path(bundle.package_folder("rapidocr_onnxruntime"))
    assert packages[str(ocr / "config.yaml")] == "rapidocr_onnxruntime"
    assert packages[str(ocr / "models")] == "rapidocr_onnxruntime/models"
    assert list((ocr / "models").glob("*.onnx"))
    sandbox = dict(bundle.sandbox_datas())
    assert str(WORKER_SCRIPT) in sandbox
    assert all(Path(source).is_file() for source in sandbox)
    worker = WORKER_SCRIPT.parent
    assert {str(path) for path in worker.glob("*.py")} <= set(sandbox)
    assert {sandbox[str(path)] for path in worker.glob("*.py")} == {
        "rlm_desktop/engine/sandbox/worker"
    }
    assert sandbox[str(GUEST)] == GUEST.parent.relative_to(ROOT).as_posix()
    assert set(sandbox.values()) == {
        "rlm_desktop/engine/sandbox/kernel",
        "rlm_desktop/engine/sandbox/worker",
        "rlm_desktop/engine/sandbox/wasm",
    }


def test_a_bundle_carries_the_wasm_sandbox_its_host_and_wasmtimes_native_library() -> None:
    from wasmtime import _ffi

    assert HOST_MODULE in bundle.HIDDEN_IMPORTS
    assert {"wasmtime", "wasmtime.component"} <= set(bundle.HIDDEN_IMPORTS)
    # wasmtime loads `_libwasmtime.so` with ctypes from a folder of its package: PyInstaller's
    # analysis does not follow that, and collect_dynamic_libs looks for lib*.so only.
    loaded = Path(_ffi.filename)
    binaries = dict(bundle.native_binaries())
    assert binaries[str(loaded)] == f"wasmtime/{loaded.parent.name}"
    assert all(Path(source).is_file() for source in binaries)


def test_the_recipes_build_the_guest_from_the_sources_as_they_are() -> None:
    bundle.build_guest()
    assert build.is_current()
    assert GUEST.is_file()


def test_model_code_in_a_bundle_gets_the_standard_library_but_what_it_never_needs() -> None:
    modules = set(bundle.stdlib_modules())
    assert {"statistics", "json", "csv", "re", "sqlite3", "xml.etree.ElementTree"} <= modules
    assert {"collections", "concurrent.futures", "email.mime.text", "urllib.parse"} <= modules
    assert not {name for name in modules if name.split(".")[0] in ("tkinter", "idlelib", "test")}
    assert "numpy" in bundle.HIDDEN_IMPORTS


def test_qt_translations_and_the_gtk_theme_are_dropped_and_qt_itself_is_not() -> None:
    assert bundle.is_dropped("PySide6/Qt/translations/qtbase_de.qm")
    assert bundle.is_dropped("PySide6/Qt/plugins/platformthemes/libqgtk3.so")
    assert not bundle.is_dropped("PySide6/Qt/plugins/platforms/libqxcb.so")
    assert not bundle.is_dropped("PySide6/Qt/lib/libQt6Widgets.so.6")
    assert all(name.startswith("PySide6.Qt") for name in bundle.QT_LEFT_OUT)
    assert not {"PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets"} & set(bundle.QT_LEFT_OUT)


def test_no_module_of_the_app_imports_a_qt_module_the_bundle_leaves_out() -> None:
    left_out = set(bundle.QT_LEFT_OUT)
    importing = []
    for path in sorted((ROOT / "rlm_desktop").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            importing += [f"{path.name}: {name}" for name in names if name in left_out]
    assert not importing, "add these to the bundle (packaging/bundle.py QT_LEFT_OUT)"


def test_the_flatpak_manifest_runs_on_kde_with_pyside_network_and_the_secret_service() -> None:
    manifest = yaml.safe_load(FLATPAK.read_text(encoding="utf-8"))
    assert manifest["app-id"] == DESKTOP_ID
    assert (manifest["runtime"], manifest["sdk"]) == ("org.kde.Platform", "org.kde.Sdk")
    assert manifest["base"] == "io.qt.PySide.BaseApp"
    assert manifest["base-version"] == manifest["runtime-version"]
    assert manifest["command"] == "rlm-desktop"
    assert {"--share=network", "--talk-name=org.freedesktop.secrets"} <= set(
        manifest["finish-args"]
    )
    assert not [arg for arg in manifest["finish-args"] if arg.startswith("--filesystem")]
    app = manifest["modules"][-1]
    assert (FLATPAK.parent / app["sources"][0]["path"]).resolve() == ROOT
    named = [word for command in app["build-commands"] for word in command.split()]
    packaged = [word for word in named if word.startswith("packaging/")]
    assert packaged
    assert all((ROOT / word).exists() for word in packaged)


def test_the_flatpak_requirements_are_the_projects_but_pyside6_and_what_builds_the_guest(
    tmp_path: Path,
) -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dependencies = pyproject["project"]["dependencies"]
    done = run_python(str(FLATPAK.parent / "requirements.py"), home=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = done.stdout.splitlines()
    assert not [line for line in listed if "pyside6" in line.lower()]
    # The app's module is built with --no-build-isolation: what setup.py's build needs beyond the
    # SDK's setuptools (componentize-py, the wasm guest's builder) is installed first, and the
    # manifest removes it from the app once everything is built.
    builders = [r for r in pyproject["build-system"]["requires"] if not r.startswith("setuptools")]
    assert [r.split("==")[0] for r in builders] == ["componentize-py"]
    assert set(listed) | {d for d in dependencies if "PySide6" in d} == {*dependencies, *builders}
    cleanup = yaml.safe_load(FLATPAK.read_text(encoding="utf-8"))["cleanup"]
    assert "/bin/componentize-py" in cleanup
    assert "/lib/python3*/site-packages/componentize_py*" in cleanup
    # OpenCV, which RapidOCR's wheel brings, is not the app's: OCR runs without it.
    assert {"/lib/python3*/site-packages/cv2", "/lib/python3*/site-packages/opencv_python*"} <= set(
        cleanup
    )


def test_the_wheel_installs_the_desktop_files_it_names() -> None:
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["data-files"]
    for patterns in data_files.values():
        for pattern in patterns:
            assert list(ROOT.glob(pattern)), pattern
    assert data_files["share/applications"] == [DESKTOP_FILE.relative_to(ROOT).as_posix()]


def validator(name: str) -> str:
    found = shutil.which(name)
    if found is None:  # make test installs both (Debian's desktop-file-utils and appstream)
        pytest.fail(
            f"{name} is missing: make test installs it (apt-get install desktop-file-utils appstream)"
        )
    return found


def test_the_desktop_entry_validates_without_a_hint() -> None:
    done = subprocess.run(
        [validator("desktop-file-validate"), str(DESKTOP_FILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout + done.stderr) == (0, "")
    entry = dict(
        line.split("=", 1) for line in DESKTOP_FILE.read_text().splitlines() if "=" in line
    )
    assert entry["Icon"] == DESKTOP_ID
    assert entry["Exec"] == "rlm-desktop"


def test_the_appstream_metadata_validates_and_names_this_release() -> None:
    done = subprocess.run(
        [validator("appstreamcli"), "validate", "--no-net", "--explain", str(METAINFO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation was successful" in done.stdout
    assert f'<release version="{__version__}"' in METAINFO.read_text(encoding="utf-8")
    assert f'<launchable type="desktop-id">{DESKTOP_FILE.name}</launchable>' in (
        METAINFO.read_text(encoding="utf-8")
    )


def test_the_changelog_and_the_appstream_release_agree_on_this_version() -> None:
    released = re.search(
        rf'<release version="{re.escape(__version__)}" date="([0-9-]+)"', METAINFO.read_text()
    )
    assert released is not None
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{__version__}] - {released[1]}" in changelog.splitlines()
    assert "## [Unreleased]" in changelog.splitlines()


def test_the_entry_point_hands_the_repl_launcher_flag_to_the_worker(tmp_path: Path) -> None:
    done = run_python(
        str(bundle.ENTRY), FROZEN_LAUNCHER_FLAG, "not-a-descriptor", home=tmp_path, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.strip().startswith("usage: worker.py --launcher FD")
    assert launcher_command(7) == [
        sys.executable,
        "-I",
        "-S",
        str(WORKER_SCRIPT),
        "--launcher",
        "7",
    ]


def test_the_entry_point_serves_as_the_wasm_host_with_its_flag(
    tmp_path: Path, wasm_guest: Path, compiled_guest_folder: Path
) -> None:
    command = [sys.executable, str(bundle.ENTRY)]
    started = first_guest(
        command, compiled_guest_folder, tmp_path / "scratch", isolated_env(tmp_path)
    )
    assert started.level.startswith("wasm+wasmtime")


def test_the_bundle_takes_every_document_reader_the_loader_imports_by_name() -> None:
    from rlm_desktop.documents.extract import _READERS

    readers = {target.split(":")[0] for target in _READERS.values()}
    assert readers <= set(bundle.HIDDEN_IMPORTS)
