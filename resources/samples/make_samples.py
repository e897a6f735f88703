"""Write the synthetic server log used to try RLM Desktop: `python make_samples.py [OUT_DIR]`.

The log covers one day (2025-03-14, UTC) of five services. Background traffic is random but seeded,
so every run writes the same bytes. Five known incidents are planted in it; ANSWERS.md gives the
correct answers to the example questions, and the tests check those answers against the log.
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


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    text = server_log()
    (out / "server.log").write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {out / 'server.log'} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
