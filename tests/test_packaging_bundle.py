"""The frozen bundle as a user runs it (`make package-test`; deselected from `make test`).

Runs dist/rlm-desktop/rlm-desktop (or `RLM_BUNDLE`), built by `make package`: its version, its
self-check, a real run whose model code imports the analysis packages in the bundle's REPL worker,
a real run in its wasm sandbox (the bundle started as its own wasm host), and its window for three
seconds, all offscreen and isolated from the user's data and keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from rlm_desktop import __version__
from rlm_desktop.engine.sandbox.kernel.launcher import probe_sandbox
from rlm_desktop.engine.sandbox.wasm import build, compiled
from rlm_desktop.engine.sandbox.wasm.compiled import cache_name, digest, runtime_version
from tests.cli import ROOT
from tests.conftest import TEST_MODEL
from tests.documents.makers import make_pdf
from tests.documents.ocr_makers import make_image, make_scanned_pdf
from tests.packaged import MEMOS, first_guest, packaged_env, run_in_wasm
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer, last_user_text
from tests.test_self_check import check_lines

pytestmark = pytest.mark.package

BUNDLE = Path(os.environ.get("RLM_BUNDLE", ROOT / "dist" / "rlm-desktop" / "rlm-desktop"))
WINDOW_SECONDS = 3.0
ANALYSIS_CODE = """\
import numpy, statistics, json, re, csv, collections, datetime, math, difflib, textwrap, sqlite3
import xml.etree.ElementTree, urllib.parse, itertools, functools, fractions, decimal, heapq
values = numpy.array(VALUES)
print("numpy", numpy.__version__, int(values.sum()), float(statistics.median(values.tolist())))
print(len(context), "documents,", sum("4242" in text for text in context), "with the total")
"""
VALUES = [3, 1, 4, 1, 5, 9, 2, 6]
OCR_LINES = ["Invoice 4471 for the northern region", "The scanned letter from our supplier"]
INTERNAL = BUNDLE.parent / "_internal"
GUEST = INTERNAL / "rlm_desktop" / "engine" / "sandbox" / "wasm" / "guest.wasm"


def bundle(*args: str, home: Path, **options: object) -> subprocess.CompletedProcess[str]:
    """The bundle's executable run to its end, isolated in `home`, offscreen."""
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} does not exist: run `make package` first")
    return subprocess.run(
        [str(BUNDLE), *args],
        env=packaged_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        **options,  # type: ignore[call-overload]
    )


def test_the_bundle_says_its_version(tmp_path: Path) -> None:
    done = bundle("--version", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"rlm-desktop {__version__}"


def test_the_bundle_passes_its_self_check(tmp_path: Path) -> None:
    done = bundle("--self-check", home=tmp_path)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    lines = check_lines(done.stdout)
    assert all(state in ("ok", "warn") for state, _ in lines.values())
    assert lines["imports"][0] == "ok"
    assert lines["price map"][0] == "ok"
    assert str(BUNDLE.parent / "_internal" / "litellm") in lines["price map"][1]
    assert "plugin offscreen" in lines["Qt platform"][1]
    # The bundle starts itself as the wasm host and compiles its guest into the data folder,
    # keyed by the runtime's version (the bundle carries wasmtime's metadata for it).
    assert lines["wasm sandbox"][0] == "ok"
    assert lines["wasm sandbox"][1].startswith(
        f"ran print(1) in wasm+wasmtime{runtime_version()} (--sandbox wasm); compiled for this "
        "machine in"
    ), lines["wasm sandbox"][1]
    compiled = tmp_path / "compiled" / cache_name(digest(GUEST), runtime_version())
    assert compiled.is_file()


def test_model_code_imports_the_analysis_packages_inside_the_bundles_sandbox(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    # A PDF is read in a "spawn" process: the frozen app starting itself as multiprocessing's child.
    pdf = make_pdf(tmp_path / "ledger.pdf", [["The ledger total is 4242."]])
    code = ANALYSIS_CODE.replace("VALUES", repr(VALUES))
    turns = [repl(code), repl("FINAL('analysed')")]
    scripted_server.respond_with(scripted({"Which dates?": turns}))
    done = bundle(
        "run",
        "--query",
        "Which dates?",
        "--doc",
        str(MEMOS),
        "--doc",
        str(pdf),
        "--model",
        TEST_MODEL,
        "--api-base",
        scripted_server.base_url,
        "--mode",
        "rlm",
        "--json",
        home=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["answer"]) == ("completed", "analysed")
    observation = last_user_text(scripted_server.chat_requests()[-1])
    assert "Traceback" not in observation, observation
    assert f"{sum(VALUES)} {float(statistics.median(VALUES))}" in observation
    assert f"{len(list(MEMOS.iterdir())) + 1} documents, 1 with the total" in observation
    source_level = asyncio.run(probe_sandbox(tmp_path)).level
    assert result["sandbox"] == source_level  # the frozen worker is confined as a source one


def test_the_bundle_reads_an_image_and_a_scanned_page_by_ocr(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    image = make_image(tmp_path / "invoice.png", OCR_LINES[:1])
    scan = make_scanned_pdf(tmp_path / "letter.pdf", [OCR_LINES[1:]])
    scripted_server.respond_with(
        scripted({"What was scanned?": [repl("print(context)"), repl("FINAL('read')")]})
    )
    done = bundle("run", "--query", "What was scanned?", "--doc", str(image), "--doc", str(scan),
                  "--model", TEST_MODEL, "--api-base", scripted_server.base_url, "--mode", "rlm",
                  "--json", home=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    read = "".join(last_user_text(scripted_server.chat_requests()[-1]).lower().split())
    # PP-OCR's models sometimes drop the space between English words: compared without spaces.
    assert all("".join(line.lower().split()) in read for line in OCR_LINES), read


def test_a_big_run_in_the_bundle_is_written_by_the_stores_writing_process(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    """The frozen app starts itself as the store's writing process ("spawn" through
    `freeze_support`) for a run of thousands of sub-calls, and the session is saved whole."""
    calls = 2_500
    scripted_server.respond_with(
        scripted(
            root=[
                f"```repl\nr = llm_query_batched(['q %d' % i for i in range({calls})])\n```",
                "```repl\nFINAL(str(len(r)))\n```",
            ],
            sub="7",
        )
    )
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    home = tmp_path / "home"
    process = subprocess.Popen(
        [str(BUNDLE), "run", "--query", "How many parts?", "--doc", str(document),
         "--model", TEST_MODEL, "--api-base", scripted_server.base_url, "--mode", "rlm",
         "--max-sub-calls", str(calls), "--json"],
        env=packaged_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    writers = set()
    while process.poll() is None:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(process.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if "--multiprocessing-fork" in child.cmdline():
                        writers.add(child.pid)
        time.sleep(0.05)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert json.loads(out)["status"] == "completed"
    assert writers, "no process of the app's own was started to write the run"
    with contextlib.closing(sqlite3.connect(home / "sessions.db")) as conn:
        ((status, sub_calls),) = conn.execute("SELECT status, sub_calls FROM sessions").fetchall()
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    assert (status, sub_calls) == ("completed", calls)
    assert events > 4 * calls


def test_a_run_in_the_bundles_wasm_sandbox_compiles_its_guest_once_and_completes(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    home = tmp_path / "home"
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} does not exist: run `make package` first")
    assert build.is_current()  # the bundle's guest is the one made from these sources
    assert digest(GUEST) == digest(compiled.GUEST)
    first = run_in_wasm([str(BUNDLE)], home, scripted_server)
    again = run_in_wasm([str(BUNDLE)], home, scripted_server)
    print(
        f"bundle, run --sandbox wasm: {first.seconds:.1f} s the first time on this machine "
        f"(compiling the guest; the run's own wall {first.result['wall_s']:.1f} s), "
        f"{again.seconds:.1f} s after (wall {again.result['wall_s']:.1f} s)"
    )
    assert [path.suffix for path in sorted((home / "compiled").iterdir())] == [".cwasm", ".sha256"]


def test_the_bundle_starts_itself_as_the_wasm_host_and_a_guest_in_it(tmp_path: Path) -> None:
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} does not exist: run `make package` first")
    env = packaged_env(tmp_path / "home")
    cache = tmp_path / "compiled"
    first = first_guest([str(BUNDLE)], cache, tmp_path / "scratch", env)
    again = first_guest([str(BUNDLE)], cache, tmp_path / "scratch", env)
    print(
        f"bundle's wasm host: ready in {first.host_s:.2f} s on a new machine (compiling its "
        f"guest), {again.host_s:.2f} s after; its first guest ready in "
        f"{first.guest_s * 1000:.0f} ms, {again.guest_s * 1000:.0f} ms"
    )
    assert (first.compiled, again.compiled) == (True, False)
    assert first.level == f"wasm+wasmtime{runtime_version()}"


def test_the_window_stays_up_for_three_seconds_without_an_error(tmp_path: Path) -> None:
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} does not exist: run `make package` first")
    window = subprocess.Popen(
        [str(BUNDLE)],
        env=packaged_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(WINDOW_SECONDS)
    still_running = window.poll() is None
    window.terminate()
    stdout, stderr = window.communicate(timeout=30)
    assert still_running, f"the window exited with {window.returncode}: {stderr}"
    assert "Traceback" not in stdout + stderr
    assert "rror" not in stderr, stderr


def test_the_bundle_leaves_out_what_the_app_never_uses() -> None:
    files = [
        path.relative_to(INTERNAL).as_posix()
        for path in INTERNAL.rglob("*")
        if path.is_file() and not path.is_symlink()
    ]
    size = sum((INTERNAL / name).stat().st_size for name in files) + BUNDLE.stat().st_size
    print(f"bundle: {size / 1e6:.0f} MB in {len(files) + 1} files")
    assert not [name for name in files if "/translations/" in name]
    assert not [name for name in files if "WebEngine" in name or "Qt6Qml" in name]
    assert not [name for name in files if name.startswith(("libgtk-3", "tkinter", "PyQt"))]
    # OCR runs without OpenCV (documents/ocr_pipeline.py): none of it, and of RapidOCR (which
    # imports it) only the models.
    assert not [name for name in files if "cv2" in name or "opencv" in name.lower()]
    assert not [n for n in files if n.startswith("rapidocr_onnxruntime/") and n.endswith(".py")]
    assert (INTERNAL / "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx").is_file()
    assert not [name for name in files if "libQt5" in name]
    tooling = ("pytest", "_pytest", "mypy", "ruff", "ray", "datasette", "componentize_py",
               "PyInstaller", "import_linter", "pymarkdown")  # fmt: skip
    assert not [name for name in files if name.split("/")[0] in tooling]
    for needed in (
        "resources/profiles/profiles.toml",
        "resources/style/app.qss",
        "resources/icons/rlm-desktop.svg",
        "litellm/model_prices_and_context_window_backup.json",
        "rlm_desktop/engine/sandbox/worker/__main__.py",
        "rlm_desktop/engine/sandbox/worker/launch.py",
        "rlm_desktop/engine/sandbox/kernel/confine.py",
        "PySide6/Qt/plugins/platforms/libqxcb.so",
        "PySide6/Qt/plugins/imageformats/libqsvg.so",
        "pypdfium2_raw/libpdfium.so",
        "rlm_desktop/engine/sandbox/wasm/guest.wasm",
        "wasmtime/linux-x86_64/_libwasmtime.so",
    ):
        assert needed in files, needed
