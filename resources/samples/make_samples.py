"""Write the synthetic samples used to try RLM Desktop: `python make_samples.py [OUT_DIR]`.

`server.log` covers one day (2025-03-14, UTC) of five services. Background traffic is random but
seeded, so every run writes the same bytes. Five known incidents are planted in it. `kestrel/`
holds the office files of the memos' parcel company: a workbook, a slide deck and a mail export,
each with a fact no other file has (a figure only on the workbook's second sheet, a decision only
in a slide's speaker notes, an amount only in a message's attachment). ANSWERS.md gives the
correct answers to the example questions, and the tests check those answers against the files.
The workbook needs openpyxl (the `dev` extra); the deck python-pptx, which the app reads with.
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 20250314
DAY = datetime(2025, 3, 14, tzinfo=UTC)
SERVICES = ("api-gateway", "auth", "payments", "search", "worker")
BACKGROUND_LINES = 3600
ROUTES = {
    "api-gateway": ("GET /v1/orders", "GET /v1/orders/{id}", "POST /v1/orders", "GET /v1/health"),
    "auth": ("POST /v1/login", "POST /v1/token/refresh", "POST /v1/logout"),
    "payments": ("POST /v1/payments", "GET /v1/payments/{id}", "POST /v1/refunds"),
    "search": ("GET /v1/search", "GET /v1/suggest"),
}
STATUSES = (200,) * 30 + (201, 204, 304, 400, 401, 404)

Line = tuple[datetime, str, str, str]


def _at(hms: str) -> datetime:
    hour, minute, second = (int(part) for part in hms.split(":"))
    return DAY.replace(hour=hour, minute=minute, second=second)


def _request_id(rng: random.Random) -> str:
    return f"{rng.getrandbits(32):08x}"


def background(rng: random.Random) -> list[Line]:
    """Ordinary traffic: request lines, periodic jobs and a few unrelated failures."""
    lines: list[Line] = []
    for _ in range(BACKGROUND_LINES):
        when = DAY + timedelta(milliseconds=rng.randrange(24 * 3600 * 1000))
        service = rng.choice(SERVICES)
        if service == "worker":
            job = rng.randrange(10_000, 99_999)
            if rng.random() < 0.01:
                lines.append((when, "ERROR", service,
                              f"job={job} failed: upstream timeout after 30s, will retry"))
            else:
                took = rng.randrange(1, 900)
                lines.append((when, "INFO", service, f"job={job} done in {took}ms"))
            continue
        route = rng.choice(ROUTES[service]).replace("{id}", str(rng.randrange(1000, 9999)))
        status = rng.choice(STATUSES)
        level = "WARN" if status >= 400 else "INFO"
        lines.append((when, level, service,
                      f"req={_request_id(rng)} {route} {status} {rng.randrange(3, 400)}ms"))
    return lines


def _series(start: str, end: str, every_s: tuple[int, int], rng: random.Random,
            ) -> list[datetime]:
    moments, now, stop = [], _at(start), _at(end)
    while now <= stop:
        moments.append(now + timedelta(milliseconds=rng.randrange(1000)))
        now += timedelta(seconds=rng.randrange(*every_s))
    return moments


def incidents(rng: random.Random) -> list[Line]:
    """The five planted incidents, in the order ANSWERS.md describes them."""
    lines: list[Line] = [
        (_at("02:12:40"), "INFO", "payments",
         "nightly reconciliation job started (batch=2025-03-13)"),
        (_at("02:13:05"), "WARN", "payments", "db pool usage 50/50 connections"),
    ]
    for when in _series("02:13:06", "02:41:40", (20, 40), rng):
        lines.append((when, "ERROR", "payments", f"req={_request_id(rng)} POST /v1/payments 503 "
                      "PoolTimeout: no database connection free after 5000ms (pool 50/50)"))
    lines += [
        (_at("02:41:45"), "INFO", "payments", "nightly reconciliation job finished (41,233 rows)"),
        (_at("02:41:50"), "INFO", "payments", "db pool recovered (12/50 connections in use)"),
        (_at("09:00:00"), "ERROR", "auth", "TLS handshake with idp.internal failed: certificate "
         "has expired (notAfter=2025-03-14T09:00:00Z)"),
    ]
    for when in _series("09:00:20", "09:12:10", (25, 50), rng):
        lines.append((when, "ERROR", "auth", f"req={_request_id(rng)} POST /v1/login 502 upstream "
                      "idp.internal: certificate has expired"))
    lines.append((_at("09:12:30"), "INFO", "auth",
                  "reloaded TLS certificate for idp.internal (notAfter=2026-03-14T09:00:00Z)"))
    heap = 6.1
    for when in _series("13:50:00", "14:37:00", (240, 300), rng):
        heap = round(heap + 0.15, 2)
        lines.append((when, "WARN", "search", f"worker search-3 heap at {heap}GiB of 8GiB"))
    lines += [
        (_at("14:37:22"), "ERROR", "search",
         "worker search-3 killed by the OOM killer (rss=7.9GiB, limit=8GiB)"),
        (_at("14:37:31"), "INFO", "search", "worker search-3 restarted (pid 48213)"),
        (_at("18:04:30"), "INFO", "api-gateway", "deploy v2.41.0 started (canary 100%)"),
    ]
    for when in _series("18:05:00", "18:19:00", (60, 61), rng):
        lines.append((when, "WARN", "api-gateway",
                      f"p99 latency {rng.randrange(2100, 3400)}ms over SLO 800ms"))
    lines += [
        (_at("18:19:10"), "INFO", "api-gateway", "deploy v2.41.0 rolled back to v2.40.3"),
        (_at("18:20:00"), "INFO", "api-gateway", "p99 latency 310ms, back within SLO"),
        (_at("21:47:09"), "ERROR", "payments", "req=7c1e9a4b PUT /v1/receipts/upload 507 "
         "Insufficient Storage: volume /data/receipts is full"),
    ]
    return lines


def render(lines: list[Line]) -> str:
    """The log text: one line per event, sorted by time (stable for equal times)."""
    rows = []
    for when, level, service, message in sorted(lines, key=lambda line: line[0]):
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
        rows.append(f"{stamp} {level:<5} {service:<11} {message}\n")
    return "".join(rows)


def server_log() -> str:
    """The whole sample log, identical on every run."""
    rng = random.Random(SEED)
    return render(background(rng) + incidents(rng))


FIXED_TIME = datetime(2025, 4, 3, 9, 0, tzinfo=UTC)
HUBS = (
    ("Rotterdam", 298_400, 287_150, 311_720),
    ("Utrecht", 92_300, 88_140, 84_910),
    ("Leeds", 141_600, 137_250, 146_830),
    ("Lyon", 81_540, 83_960, 86_200),
)
MONTHS = ("January", "February", "March")


def workbook(path: Path) -> None:
    """`q1-figures.xlsx`: a summary sheet, then the hubs' parcels per month (only here)."""
    import openpyxl

    book = openpyxl.Workbook()
    summary = book.active
    assert summary is not None
    summary.title = "Summary"
    summary.append(["Kestrel Q1 2025", None])
    summary.append(["Parcels shipped", 1_840_000])
    summary.append(["On-time delivery", 0.962])
    summary.append(["See the Hubs sheet for parcels per hub and month.", None])
    hubs = book.create_sheet("Hubs")
    hubs.append(["Hub", *MONTHS, "Q1 total"])
    for row, (hub, *months) in enumerate(HUBS, start=2):
        hubs.append([hub, *months, f"=SUM(B{row}:D{row})"])
    book.properties.created = book.properties.modified = FIXED_TIME.replace(tzinfo=None)
    book.save(path)


def totals_cached(path: Path) -> None:
    """Write each formula's value into the workbook as a spreadsheet program would on saving
    (openpyxl keeps formulas without values, and readers show a file's cached values)."""
    import zipfile

    sheet = "xl/worksheets/sheet2.xml"
    with zipfile.ZipFile(path) as source:
        parts = {item: source.read(item) for item in source.namelist()}
    xml = parts[sheet].decode()
    for row, (_hub, *months) in enumerate(HUBS, start=2):
        formula = f"<f>SUM(B{row}:D{row})</f>"
        xml = xml.replace(f"{formula}<v></v>", f"{formula}<v>{sum(months)}</v>")
        xml = xml.replace(f"{formula}<v />", f"{formula}<v>{sum(months)}</v>")
        if f"{formula}<v>" not in xml:
            xml = xml.replace(formula, f"{formula}<v>{sum(months)}</v>")
    parts[sheet] = xml.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(zipfile.ZipInfo(name, (2025, 4, 3, 9, 0, 0)), data, zipfile.ZIP_DEFLATED)


SLIDES = (
    ("Project Heron: steering committee, 27 March 2025", ["Kestrel Operations"], ""),
    (
        "Budget and timeline",
        ["Budget: EUR 950,000 (revised 5 March)", "Go-live: September 2025"],
        "Spend to date is EUR 212,000, on plan.",
    ),
    (
        "Pilot",
        ["Routing pilot with one city before go-live", "Options reviewed: Lyon, Ghent"],
        "Decision in the room: the pilot moves from Lyon to Ghent, starting 2 June 2025, because "
        "the Ghent depot already runs the new scanners.",
    ),
    ("Next steps", ["Monthly spend report (Tomasz Wróbel)", "Vendor contract by 30 April"], ""),
)


def deck(path: Path) -> None:
    """`heron-steering.pptx`: four slides; the pilot decision is only in slide 3's notes."""
    from pptx import Presentation

    presentation = Presentation()
    layout = presentation.slide_layouts[1]
    for title, points, notes in SLIDES:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = points[0]
        for point in points[1:]:
            body.add_paragraph().text = point
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    presentation.core_properties.created = FIXED_TIME.replace(tzinfo=None)
    presentation.core_properties.modified = FIXED_TIME.replace(tzinfo=None)
    presentation.core_properties.last_modified_by = "Kestrel"
    presentation.save(str(path))


INVOICES = (
    "invoice,supplier,amount_eur,status\n"
    "K-2025-0311,Nordlane Freight,18420.00,paid\n"
    "K-2025-0317,Brightwell Packaging,7315.50,disputed: billed twice for the March pallets\n"
    "K-2025-0322,Vantor Fuel,26980.75,paid\n"
)


def mail_export(path: Path) -> None:
    """`inbox.mbox`: three messages; the disputed invoice is only in the second's attachment."""
    import mailbox
    from email.message import EmailMessage
    from email.utils import format_datetime

    messages = (
        ("Ines Duarte <ines.duarte@kestrel.example>", "Heron spend, March",
         "Tomasz,\n\nHeron spend to date is EUR 212,000, on plan. I will send the April figure "
         "with the monthly report.\n\nInes", None),
        ("Accounts payable <ap@kestrel.example>", "March supplier invoices",
         "Hello,\n\nThe March supplier invoices are attached. One of them is disputed; see the "
         "status column.\n\nAccounts payable", ("march-invoices.csv", INVOICES)),
        ("Priya Nair <priya.nair@kestrel.example>", "Re: payments pool alert",
         "The pool alert is live: it fires when usage stays above 80% for two minutes.\n\nPriya",
         None),
    )
    box = mailbox.mbox(str(path), create=True)
    box.lock()
    try:
        for day, (sender, subject, body, attachment) in enumerate(messages, start=1):
            message = EmailMessage()
            message["From"] = sender
            message["To"] = "Tomasz Wróbel <tomasz.wrobel@kestrel.example>"
            message["Date"] = format_datetime(FIXED_TIME + timedelta(days=day))
            message["Subject"] = subject
            message["Message-ID"] = f"<kestrel-{day}@kestrel.example>"
            message.set_content(body)
            if attachment is not None:
                name, text = attachment
                message.add_attachment(text.encode(), "text", "csv", filename=name)
                message.set_boundary(f"kestrel-part-{day}")  # not random: the same bytes each run
            kept = mailbox.mboxMessage(message)
            kept.set_from("MAILER-DAEMON", (FIXED_TIME + timedelta(days=day)).timetuple())
            box.add(kept)
        box.flush()
    finally:
        box.unlock()
        box.close()


def office_files(folder: Path) -> list[Path]:
    """Write the workbook, the deck and the mail export into `folder`; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / "q1-figures.xlsx", folder / "heron-steering.pptx", folder / "inbox.mbox"]
    for old in paths:
        old.unlink(missing_ok=True)
    workbook(paths[0])
    totals_cached(paths[0])
    deck(paths[1])
    mail_export(paths[2])
    return paths


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    text = server_log()
    (out / "server.log").write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {out / 'server.log'} ({text.count(chr(10))} lines)")
    for path in office_files(out / "kestrel"):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
