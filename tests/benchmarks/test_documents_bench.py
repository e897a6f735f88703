"""Loader benchmarks: a 200 MB folder of text and code, one 200 MB log, 500-page PDFs, and memory.

Each load runs in a fresh subprocess so that peak RSS growth belongs to the load alone (for PDFs
that excludes the worker process that shares long documents). The inputs are generated into a
temporary folder (just written, so the page cache is warm: these figures are for parsing,
decoding and counting, not for the disk). Three 500-page PDFs, each loaded 3 times (min, median and
max reported): one `Tj` string per line; kerned TJ arrays (words placed by offsets, kerned inside),
which pypdf extracted several times slower; and two typeset columns (ligatures, hyphenation). The
kerned one once more through the pypdf fallback, and the bounded reader's start on its own.
Run with `make bench`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.report import record_figure
from tests.cli import ROOT, run_python
from tests.documents.makers import make_pdf
from tests.documents.pdf_typeset import make_typeset_pdf, typeset_pages
from tests.qt_free import _BLOCKER

pytestmark = pytest.mark.bench

MB = 1_000_000
FOLDER_BYTES = 200 * MB
FILE_BYTES = 500_000
PDF_PAGES = 500
REPEATS = 3
READER_STARTS = 5
MODEL = "openai/gpt-5-mini"
ROWS: list[tuple[str, ...]] = []

MEASURE = textwrap.dedent("""
    import json, resource, sys, threading, time
    from pathlib import Path
    import psutil
    from rlm_desktop.documents import LoadOptions, count_tokens, load_paths

    started = time.perf_counter()
    count_tokens("warm up the tokenizer", sys.argv[2])
    setup_s = time.perf_counter() - started
    process = psutil.Process()
    baseline = process.memory_info().rss
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    sampled = [baseline]
    done = threading.Event()

    def sample():
        while not done.wait(0.002):
            sampled.append(process.memory_info().rss)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    started = time.perf_counter()
    result = load_paths([Path(sys.argv[1])], LoadOptions(model=sys.argv[2]))
    seconds = time.perf_counter() - started
    done.set()
    watcher.join()
    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    peak = max(max(sampled), peak_after if peak_after > peak_before else 0)
    print(json.dumps({
        "seconds": seconds, "setup_s": setup_s, "files": len(result.documents),
        "skipped": len(result.skipped), "errors": [str(e) for e in result.errors],
        "bytes": result.totals.bytes, "chars": result.totals.chars,
        "text_bytes": sum(len(d.text.encode()) for d in result.documents),
        "tokens": result.totals.tokens, "estimated": result.totals.estimated,
        "pages": sum(d.pages or 0 for d in result.documents),
        "notes": [note for d in result.documents for note in d.notes],
        "rss_growth": peak - baseline,
    }))
""")


def _measure(
    path: Path, home: Path, env: dict[str, str] | None = None, script: str = MEASURE
) -> dict[str, Any]:
    """The figures `script` prints for loading `path` in a fresh process (`MEASURE`'s)."""
    done = run_python("-c", script, str(path), MODEL, home=home, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    assert figures["errors"] == []
    return figures


def _seconds(figures: dict[str, Any]) -> float:
    return float(figures["seconds"])


def _spread(runs: list[dict[str, Any]]) -> str:
    """min/median/max load time of `runs` (sorted by it)."""
    low, middle, high = (_seconds(runs[i]) for i in (0, len(runs) // 2, -1))
    return f"min/median/max of {len(runs)}: {low:.2f}/{middle:.2f}/{high:.2f} s"


def _record(name: str, figures: dict[str, Any], spread: str = "") -> None:
    seconds, size = figures["seconds"], figures["bytes"]
    text, growth = figures["text_bytes"], figures["rss_growth"]
    approx = "~" if figures["estimated"] else ""
    record_figure(
        "documents",
        name,
        f"{seconds:.2f} s",
        (f"{spread}; " if spread else "")
        + f"{size / MB / seconds:.1f} MB/s, {approx}{figures['tokens']:,} tokens, "
        f"peak RSS +{growth / MB:.0f} MB ({growth / text:.2f}x text)",
    )
    ROWS.append(
        (
            name,
            f"{figures['files']}",
            f"{size / MB:.1f}",
            f"{seconds:.2f}",
            f"{size / MB / seconds:.1f}",
            f"{text / MB:.1f}",
            f"{approx}{figures['tokens']:,}",
            f"{growth / MB:.0f}",
            f"{growth / text:.2f}x",
            f"{figures['setup_s']:.2f}",
        )
    )


def _corpus(rng: random.Random) -> str:
    """About 4 MB of varied log, prose, code and CSV lines to cut files from."""
    words = [
        "analyst",
        "report",
        "incident",
        "server",
        "memory",
        "budget",
        "quarterly",
        "revenue",
        "latency",
        "error",
        "customer",
        "request",
        "database",
        "warehouse",
        "shipment",
        "invoice",
        "contract",
        "policy",
        "review",
        "timeout",
        "retry",
        "cluster",
        "deploy",
        "version",
        "region",
        "north",
        "south",
        "export",
        "import",
    ]
    lines: list[str] = []
    for i in range(60_000):
        kind = i % 4
        if kind == 0:
            lines.append(
                f"2025-03-14T{i % 24:02d}:{i % 60:02d}:{i * 7 % 60:02d}Z INFO svc-{i % 9} "
                f"req={rng.getrandbits(32):08x} GET /v1/{rng.choice(words)} 200 "
                f"{rng.randrange(900)}ms"
            )
        elif kind == 1:
            lines.append(" ".join(rng.choice(words) for _ in range(rng.randrange(6, 18))) + ".")
        elif kind == 2:
            lines.append(
                f"    def {rng.choice(words)}_{i}(self, value: int) -> int:  "
                f"return value * {rng.randrange(100)}"
            )
        else:
            lines.append(f"{i},{rng.choice(words)},{rng.randrange(10**6)},{rng.random():.4f}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    rng = random.Random(7)
    corpus = _corpus(rng)
    root = tmp_path_factory.mktemp("bench") / "corpus"
    suffixes = (".log", ".txt", ".md", ".py", ".js", ".json", ".csv", ".go")
    written, index = 0, 0
    while written < FOLDER_BYTES:
        folder = root / f"part{index // 25:02d}" / f"sub{index % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        start = rng.randrange(len(corpus) - FILE_BYTES)
        body = f"# file {index}\n" + corpus[start : start + FILE_BYTES]
        (folder / f"file{index:04d}{suffixes[index % len(suffixes)]}").write_text(body)
        written += len(body)
        index += 1
    (root / ".gitignore").write_text("*.tmp\n")
    (root / "scratch.tmp").write_text("ignored\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1;\n")
    yield root
    shutil.rmtree(root.parent, ignore_errors=True)


def test_200_mb_folder_of_text_and_code(big_folder: Path, isolated_home: Path) -> None:
    figures = _measure(big_folder, isolated_home)
    _record("200 MB folder (text, code)", figures)
    files = list(big_folder.glob("part*/sub*/file*"))
    assert figures["files"] == len(files)
    assert figures["bytes"] == sum(path.stat().st_size for path in files) >= FOLDER_BYTES
    assert figures["chars"] == figures["bytes"]  # ASCII, read as it was written
    assert figures["skipped"] == 3  # .gitignore, scratch.tmp, node_modules


def test_one_200_mb_log_file(tmp_path: Path, isolated_home: Path) -> None:
    corpus = _corpus(random.Random(5))
    path = tmp_path / "huge.log"
    with path.open("w", encoding="utf-8", newline="\r\n") as handle:  # Windows line ends
        written = 0
        while written < FOLDER_BYTES:
            written += handle.write(corpus)
    size = path.stat().st_size
    figures = _measure(path, isolated_home)
    path.unlink()
    _record("one 200 MB log (CRLF)", figures)
    assert (figures["files"], figures["bytes"]) == (1, size)
    assert figures["chars"] == written  # every CRLF read back as one "\n"


PDF_STYLES = {
    "lines": "one Tj per line",
    "kerned": "kerned TJ arrays",
    "typeset": "typeset, two columns",
}


def _pdf(folder: Path, style: str) -> Path:
    """A 500-page PDF: generated (a `Tj` per line, or kerned TJ arrays) or typeset in two
    columns (TJ arrays without spaces, ligatures, hyphenation; see tests/documents/pdf_typeset)."""
    path = folder / f"annual-report-{style}.pdf"
    if style == "typeset":
        return make_typeset_pdf(path, typeset_pages(PDF_PAGES))
    rng = random.Random(11)
    words = [
        "the",
        "of",
        "and",
        "revenue",
        "margin",
        "forecast",
        "region",
        "supplier",
        "contract",
        "audit",
        "risk",
    ]
    pages = [
        [f"{p + 1}.{n + 1} " + " ".join(rng.choice(words) for _ in range(14)) for n in range(50)]
        for p in range(PDF_PAGES)
    ]
    return make_pdf(path, pages, kerned=style == "kerned")


@pytest.mark.parametrize("style", sorted(PDF_STYLES))
def test_500_page_pdf(tmp_path: Path, isolated_home: Path, style: str) -> None:
    """End to end, bounded reader included, each load in a fresh process: min/median/max of 3."""
    pdf = _pdf(tmp_path, style)
    runs = sorted((_measure(pdf, isolated_home) for _ in range(REPEATS)), key=_seconds)
    name = f"{PDF_PAGES}-page PDF ({PDF_STYLES[style]})"
    _record(name, runs[len(runs) // 2], _spread(runs))
    assert {run["pages"] for run in runs} == {PDF_PAGES}
    assert all(run["notes"] == [] for run in runs)  # read by PDFium: no fallback, nothing missed


def test_500_page_pdf_through_the_pypdf_fallback(tmp_path: Path, isolated_home: Path) -> None:
    """The kerned PDF with pypdfium2 unimportable (in the reader too): what the fallback costs."""
    site = tmp_path / "site"
    site.mkdir()
    blocker = _BLOCKER.format(blocked=["pypdfium2", "pypdfium2_raw"])
    (site / "sitecustomize.py").write_text(blocker, encoding="utf-8")
    pdf = _pdf(tmp_path, "kerned")
    env = {"PYTHONPATH": os.pathsep.join((str(site), str(ROOT)))}
    figures = _measure(pdf, isolated_home, env)
    _record(f"{PDF_PAGES}-page PDF (kerned, pypdf fallback)", figures, "1 run")
    assert figures["pages"] == PDF_PAGES
    assert [note.split(":")[0] for note in figures["notes"]] == ["read with pypdf"]


READER_START = textwrap.dedent("""
    import json, resource, sys, time
    from rlm_desktop.documents.reader import BoundedReader

    def children_cpu():
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    if __name__ == "__main__":
        walls, cpus = [], []
        for _ in range(int(sys.argv[1])):
            reader, before = BoundedReader(1 << 31), children_cpu()
            started = time.perf_counter()
            reader.read("text", b"x", 60)
            walls.append(time.perf_counter() - started)
            reader.close()
            cpus.append(children_cpu() - before)
        print(json.dumps({"walls": walls, "cpus": cpus}))
""")


def test_reader_process_start(tmp_path: Path, isolated_home: Path) -> None:
    """What the bounded reader costs before it reads anything: a fresh interpreter ("spawn"),
    multiprocessing's resource tracker and our imports, up to its answer to a one-byte file."""
    script = tmp_path / "reader_start.py"  # a file: a spawned child imports the main module
    script.write_text(READER_START, encoding="utf-8")
    done = run_python(str(script), str(READER_STARTS), home=isolated_home, timeout=300)
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    walls, cpus = sorted(measured["walls"]), sorted(measured["cpus"])
    middle = len(walls) // 2
    record_figure(
        "documents",
        "reader process start",
        f"{walls[middle]:.2f} s",
        f"min/median/max of {len(walls)}: {walls[0]:.2f}/{walls[middle]:.2f}/{walls[-1]:.2f} s "
        f"wall, {cpus[middle]:.2f} s CPU in child processes (median)",
    )
    assert len(walls) == READER_STARTS


@pytest.fixture(scope="module", autouse=True)
def table() -> Iterator[None]:
    """Print every scenario's figures once the module's benchmarks have run."""
    yield
    head = (
        "scenario",
        "docs",
        "in MB",
        "load s",
        "MB/s",
        "text MB",
        "tokens",
        "RSS+ MB",
        "RSS/text",
        "setup s",
    )
    rows = [head, *ROWS]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    print()
    for row in rows:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
