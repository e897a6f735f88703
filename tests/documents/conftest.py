"""A folder with one small file of every supported format, and the text each must load to."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.documents.mail_makers import make_eml, write_eml
from tests.documents.makers import make_docx, make_pdf, make_xlsx
from tests.documents.office_makers import SlideSpec, make_epub, make_odt, make_pptx, make_rtf

HTML_PAGE = """<!DOCTYPE html>
<html><head><title>Quarterly  update</title>
<style>body { color: red; }</style>
<script>var secret = "do not show";</script></head>
<body><nav>Home</nav>
<h1>Revenue &amp; costs</h1>
<p>Revenue grew
   by <b>12%</b> in Q3.</p>
<table><tr><th>Region</th><th>Sales</th></tr><tr><td>North</td><td>40</td></tr></table>
<pre>  indented
    code</pre>
<noscript>enable scripts</noscript>
</body></html>
"""

# file name -> (type, expected text)
EXPECTED: dict[str, tuple[str, str]] = {
    "notes.txt": ("text", "Plain notes.\nSecond line.\n"),
    "app.log": ("text", "2025-03-14 INFO started\n2025-03-14 ERROR failed\n"),
    "README.md": ("markdown", "# Title\n\nSome *markdown* text.\n"),
    "guide.rst": ("rst", "Guide\n=====\n\nA reStructuredText page.\n"),
    "report.pdf": ("pdf", "Annual report 2024\nRevenue rose (strongly).\fPage two: outlook."),
    "memo.docx": (
        "docx",
        "# Staffing memo\nWe hire two analysts.\nBudget is fixed.\n"
        "- a bulleted point\nRole\tCount\nAnalyst\t2",
    ),
    "figures.xlsx": ("spreadsheet", "## Sheet: Sales (A1:B2)\nregion\tamount\nNorth\t40"),
    "deck.pptx": (
        "slides",
        "## Slide 1: Plan\nHire two analysts.\nNotes: Budget is fixed.\n\n"
        "## Slide 2: Risks\nRisk\tOwner\nDelay\tAna",
    ),
    "policy.odt": (
        "odt",
        "# Travel policy\nBook trains over flights.\n- economy only\nTrip\tCap\nParis\t400",
    ),
    "handbook.epub": ("epub", "Welcome\n\nRead this first.\n\nLeave\n\nThirty days a year."),
    "memo.rtf": ("rtf", "Old memo.\nSecond paragraph."),
    "lunch.eml": (
        "email",
        "From: Alice <alice@example.com>\nTo: Bob <bob@example.com>\n"
        "Date: Tue, 01 Apr 2025 10:00:00 +0000\nSubject: Lunch\n\nNoon at the canteen.\n",
    ),
    "page.html": (
        "html",
        "Quarterly update\n\nHome\n\nRevenue & costs\n\n"
        "Revenue grew by 12% in Q3.\n\nRegion\tSales\nNorth\t40\n\n  indented\n    code",
    ),
    "sales.csv": ("csv", 'region,amount\nNorth,40\n"South, East",12\n'),
    "sales.tsv": ("csv", "region\tamount\nNorth\t40\n"),
    "config.json": ("json", '{"name": "demo", "values": [1, 2, 3]}\n'),
    "events.jsonl": ("json", '{"id": 1}\n{"id": 2}\n'),
    "main.py": ("code", 'def main() -> None:\n    print("hi")\n'),
    "app.ts": ("code", "export const x: number = 1;\n"),
    "Makefile": ("code", "all:\n\techo ok\n"),
    "notes.unknownext": ("text", "Text with an extension nobody registered.\n"),
}


MADE_BY_A_LIBRARY = (
    ".pdf", ".docx", ".html", ".xlsx", ".pptx", ".odt", ".epub", ".rtf", ".eml",
)  # fmt: skip


def write_format_folder(folder: Path) -> Path:
    """Create one file per format under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (_, text) in EXPECTED.items():
        if name.endswith(MADE_BY_A_LIBRARY):
            continue
        data = text.encode()
        if name == "app.log":
            data = text.replace("\n", "\r\n").encode()  # Windows line ends are normalised
        (folder / name).write_bytes(data)
    (folder / "page.html").write_text(HTML_PAGE, encoding="utf-8")
    make_pdf(
        folder / "report.pdf",
        [["Annual report 2024", "Revenue rose (strongly)."], ["Page two: outlook."]],
    )
    make_docx(
        folder / "memo.docx",
        "Staffing memo",
        ["We hire two analysts.", "Budget is fixed."],
        table=[["Role", "Count"], ["Analyst", "2"]],
    )
    make_xlsx(folder / "figures.xlsx", "Sales", [["region", "amount"], ["North", 40]])
    make_pptx(
        folder / "deck.pptx",
        [
            SlideSpec("Plan", boxes=["Hire two analysts."], notes="Budget is fixed."),
            SlideSpec("Risks", table=[["Risk", "Owner"], ["Delay", "Ana"]]),
        ],
    )
    make_odt(
        folder / "policy.odt",
        "Travel policy",
        ["Book trains over flights."],
        items=["economy only"],
        table=[["Trip", "Cap"], ["Paris", "400"]],
    )
    make_epub(
        folder / "handbook.epub",
        [("Welcome", ["Read this first."]), ("Leave", ["Thirty days a year."])],
    )
    make_rtf(folder / "memo.rtf", ["Old memo.", "Second paragraph."])
    write_eml(folder / "lunch.eml", make_eml(subject="Lunch", body="Noon at the canteen."))
    return folder


@pytest.fixture
def format_folder(tmp_path: Path) -> Path:
    """A folder holding one file of each supported format (see EXPECTED)."""
    return write_format_folder(tmp_path / "formats")
