"""How money, tokens, times, ids, model names, statuses and file names read, in the window, the CLI and the exports alike,
and how text from outside (models, providers, documents) prints inert on a terminal.

Plain functions, no Qt: every place that shows a cost asks `cost`, so "unpriced" means the same
thing everywhere.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import PurePath, PureWindowsPath

UNPRICED = "unpriced"
"""A cost that is unknown because no call of it had a price."""

_STATUS_TEXT = {
    "running": "running",
    "ok": "ok",
    "error": "error",
    "cancelled": "cancelled",
    "budget_exceeded": "over budget",
    "max_turns": "turn limit",
    "timeout": "timed out",
    "completed": "completed",
    "interrupted": "interrupted",
    "not_run": "not run yet",
}


_TONES = {
    "running": "running",
    "ok": "ok",
    "completed": "ok",
    "cancelled": "stopped",
    "interrupted": "stopped",
    "budget_exceeded": "limit",
    "max_turns": "limit",
    "timeout": "limit",
    "not_run": "stopped",
    "skipped": "limit",
}


def status_tone(status: str) -> str:
    """How a call's or a run's status reads at a glance: "running", "ok", "stopped" (by the user
    or cut off), "limit" (a budget, the turn cap or the time limit) or "error" (anything else)."""
    return _TONES.get(status, "error")


THIS_MACHINE = "this machine"


def placement(executor: str, node: str, attempts: int = 1) -> str:
    """Where a trial or a batch's question ran, as the window says it: `this machine`, the
    cluster node's label (`ray vm (node 3fa2c1d0)`), or `no node` for one sent to a cluster
    that never reached one; `· retried` after it when its first node died and it ran again."""
    where = THIS_MACHINE if executor == "local" else node or "no node"
    return f"{where} · retried" if attempts > 1 else where


def short_id(call_id: str) -> str:
    """The last eight characters of an id: enough to tell calls apart on screen."""
    return call_id[-8:]


def short_session_id(session_id: str) -> str:
    """A session id shown beside its date and time: the random part of the app's
    `YYYYMMDD-HHMMSS-abcdef` ids (`abcdef`), the last eight characters of any other."""
    if re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6,}", session_id):
        return session_id.rsplit("-", 1)[1]
    return short_id(session_id)


_MODEL_FILE_SUFFIX = re.compile(r"\.(gguf|ggml|bin|safetensors|pth?|onnx|llamafile)$", re.I)
_PATH_START = re.compile(r"^(/|~|\.{1,2}[/\\]|[A-Za-z]:[/\\])")


_WINDOWS_PATH = re.compile(r"[A-Za-z]:[\\/]|\\\\")
"""How a path written on Windows begins: a drive letter and a separator, or `\\server`."""


def file_name(path: str) -> str:
    """The last part of `path`, written on whichever system: `C:\\Users\\ana\\report.pdf` and
    `/home/ana/report.pdf` are both `report.pdf` here, whatever this system's separator (a path
    kept in a shared database or an evaluation may come from another). A path with no last part
    is itself."""
    parsed = PureWindowsPath(path) if _WINDOWS_PATH.match(path) else PurePath(path)
    return parsed.name or path


def model_name(model: str) -> str:
    """How a model reads on screen: as it is sent, except an id that names a file or folder on
    the server (a local server lists its model by path), which reads as that file's name without
    its extension: `openai//tmp/x/gemma-3-270m-q4_k_m.gguf` -> `gemma-3-270m-q4_k_m`."""
    _prefix, slash, rest = model.partition("/")
    served = rest if slash and not _PATH_START.match(model) else model
    if not (_PATH_START.match(served) or "\\" in served or _MODEL_FILE_SUFFIX.search(served)):
        return model
    parts = [part for part in re.split(r"[/\\]", served) if part.strip()]
    short = _MODEL_FILE_SUFFIX.sub("", parts[-1]) if parts else ""
    return short or model


def model_and_id(model: str) -> str:
    """A model's short name with the id it stands for, where the two differ: for the places that
    show a call's details (`gemma-3-270m-q4_k_m (openai//tmp/x/gemma-3-270m-q4_k_m.gguf)`)."""
    short = model_name(model)
    return model if short == model else f"{short} ({model})"


def status_text(status: str) -> str:
    """A status as a person would say it."""
    return _STATUS_TEXT.get(status, status.replace("_", " "))


def sandbox_name(level: str, *, noun: bool = True) -> str:
    """The sandbox a run's model code ran under, named for a person, its level kept:
    "WebAssembly sandbox (wasm+wasmtime51.0.0)", "kernel sandbox (landlock+netns+pidns)"; ""
    for no level (`level.shown_level` drops the one of a run that ran no code). Without `noun`
    for a place headed "Sandbox" already: "WebAssembly (wasm+wasmtime51.0.0)"."""
    if not level:
        return ""
    if level in ("process-only", "none"):
        return f"{'no sandbox' if noun else 'none'}, a process of its own ({level})"
    kind = "WebAssembly" if level.startswith("wasm") else "kernel"
    return f"{kind}{' sandbox' if noun else ''} ({level})"


def ending_title(status: str, *, answered: bool, refused_calls: int = 0) -> str:
    """How a run or a call ended, as the title over what it left, in the status words used
    everywhere else: "Answer" (with the calls a budget refused on the way, if any), or
    "No answer (turn limit)" and the like (what is left, a draft or last words, is labelled as
    not an answer beneath it). The answer card, the console and the command line all say it so."""
    if not answered:
        return f"No answer ({status_text(status)})"
    if not refused_calls:
        return "Answer"
    noun = "call" if refused_calls == 1 else "calls"
    cap = "time limit" if status == "timeout" else "budget"
    return f"Answer (the {cap} refused {refused_calls:,} {noun})"


def tokens(n: int | None) -> str:
    """1234 -> "1,234"; 1_234_567 -> "1.23M"."""
    if n is None:
        return ""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.2f}M"
    return f"{n:,}"


def dollars(usd: float) -> str:
    """Dollars with enough digits to tell small calls apart."""
    if usd == 0:
        return "$0"
    if usd < 0.01:
        return f"${usd:.4f}"
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.3f}"


def cost(usd: float | None, unpriced: bool = False, *, long: bool = False) -> str:
    """What a run or call cost.

    `unpriced` says some of its calls went to models without a price: with nothing priced the cost
    is "unpriced"; otherwise the known part is shown with a "+" (or, `long`, "plus unpriced calls").
    """
    if usd is None or (unpriced and not usd):
        return UNPRICED
    if not unpriced:
        return dollars(usd)
    return f"{dollars(usd)} plus unpriced calls" if long else f"{dollars(usd)}+"


def seconds(s: float | None) -> str:
    """0.25 -> "0.25 s"; 75 -> "1:15"."""
    if s is None:
        return ""
    if s < 10:
        return f"{s:.2f} s"
    if s < 60:
        return f"{s:.1f} s"
    minutes, rest = divmod(int(s), 60)
    if minutes < 60:
        return f"{minutes}:{rest:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{rest:02d}"


def when(
    ts: float | None, *, with_seconds: bool = False, with_zone: bool = False, missing: str = ""
) -> str:
    """A timestamp as local date and time (`missing` when there is none); `with_zone` adds the
    offset from UTC (`2026-11-30 16:08:24 +01:00`), for text read elsewhere."""
    if not ts:
        return missing
    moment = datetime.fromtimestamp(ts).astimezone()
    shown = moment.strftime("%Y-%m-%d %H:%M" + (":%S" if with_seconds else ""))
    offset = moment.strftime("%z")
    return f"{shown} {offset[:3]}:{offset[3:5]}" if with_zone else shown


def plural(count: int, noun: str, many: str = "") -> str:
    """`1 turn`, `2 turns`, `1,204 sub-calls`; `many` is the plural where "s" will not do."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {many or noun + 's'}"


def one_line(text: str | None, limit: int = 120) -> str:
    """Collapse whitespace and cut at `limit` characters with an ellipsis."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


EXCERPT_CHARS = 600
"""How much of a run's last words is shown when it ended without an answer."""
_NOT_AN_ANSWER = {
    "draft": 'The model\'s draft (answer["content"]), not a final answer',
    "last_reply": "The model's last words, not an answer",
}


def not_an_answer(kind: str, text: str, limit: int = EXCERPT_CHARS) -> str:
    """What a run that ended without an answer left, labelled as what it is and cut to `limit`
    characters (with how much was left out); empty when it left nothing."""
    if kind not in _NOT_AN_ANSWER or not text.strip():
        return ""
    kept = text.strip()
    if len(kept) > limit:
        kept = f"{kept[:limit].rstrip()}… ({len(text) - limit:,} more characters)"
    return f"{_NOT_AN_ANSWER[kind]}:\n{kept}"


_UNSAFE_PAST_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_ON_A_TERMINAL = re.compile(f"[\x00-\x1f{_UNSAFE_PAST_C0}]")
_UNSAFE_IN_A_FILE = re.compile(
    f"[\x00-\x08\x0b\x0c\x0e-\x1f{_UNSAFE_PAST_C0}\ufdd0-\ufdef\ufffe\uffff]"  # not \t \n \r
)
_PAST_THE_BMP = re.compile("[\U00010000-\U0010ffff]")  # a class of 16 ranges is 20 times slower
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte the file system's encoding could not decode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(name: str | os.PathLike[str]) -> str:
    """A file name (or path), or any text shown as one line (a provider's error, a model's name,
    a finding's message), that prints as one inert line on a terminal.

    Newlines, tabs and other control characters (ANSI escape sequences start with one), the
    invisible marks that reorder text (bidi controls) and undecodable bytes (kept by Python as
    lone surrogates, which would also fail to print) are shown as Python-style escapes:
    `evil\\n\\x1b[31m.txt`, `caf\\xe9.txt`. Everything else, accents and backslashes included,
    is left as it is.
    """
    return _UNSAFE_ON_A_TERMINAL.sub(_escape, os.fspath(name))


_LINE_BREAK = re.compile(r"\r?\n")


def _escape_in_text(match: re.Match[str]) -> str:
    return "\t" if match.group() == "\t" else _escape(match)


def terminal_text(text: str | None) -> str:
    """Text of many lines from outside (an answer, a question, a document's or a provider's
    words) that prints inert on a terminal, readable as it was written.

    Its line breaks stay real line breaks (`\\r\\n` prints as one) and its tabs stay tabs (a tab
    only moves the cursor forward over blank cells: it can neither erase nor hide text); every
    other character `terminal_safe` escapes is escaped the same way, a CR not followed by a line
    break among them, so nothing in it can move the cursor back, set the window's title, write
    the clipboard, clear the screen or reorder what follows.
    """
    lines = _LINE_BREAK.split(text or "")
    return "\n".join(_UNSAFE_ON_A_TERMINAL.sub(_escape_in_text, line) for line in lines)


def file_text(text: str) -> str:
    """Text from outside as a file made for other programs holds it (an export): every character
    `terminal_safe` escapes is escaped the same way but line breaks and tabs, which every reader
    of a file takes as what they are (a carriage return, too, ends a line in HTML and Markdown),
    and so are noncharacters (`\\ufffe`, `\\U0010ffff`: parse errors in HTML). Lone surrogates,
    which no UTF-8 file can hold, are escaped as a terminal shows them; a caller that spells them
    otherwise does so first."""
    return _PAST_THE_BMP.sub(_escape_noncharacter, _UNSAFE_IN_A_FILE.sub(_escape, text))


def _escape_noncharacter(match: re.Match[str]) -> str:
    return _escape(match) if ord(match.group()) & 0xFFFE == 0xFFFE else match.group()


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_json(value: object) -> str:
    """`value` as one line of JSON that prints inert on a terminal and parses back to `value`.

    `json.dumps(..., ensure_ascii=False)` escapes C0 controls but leaves DEL, C1 controls (`\\x9b`
    starts an escape sequence on many terminals), bidi controls, line separators and lone
    surrogates raw; those are written as JSON's own `\\uXXXX` escapes (they can only occur inside
    strings), and all other text, accents, CJK and emoji included, stays as it is.
    """
    return _UNSAFE_ON_A_TERMINAL.sub(_json_escape, json.dumps(value, ensure_ascii=False))
