"""A real session carrying the nastiest text we know in every field a session can hold, for the
export tests: lone surrogates, NUL and every C0 and C1 control, line and paragraph separators,
bidi overrides, noncharacters, a byte order mark, zero-width characters, emoji and other astral
characters, markup that closes a script, a CDATA section or a comment, and a file name's
undecodable byte as Python keeps it (surrogateescape).

The run is real (the engine over the scripted server, real workers, a real SQLite file), and
its text goes everywhere a run can put it: the question, a document's name, the model's reply
and code, what a cell printed on stdout and stderr, its error, a sub-call's prompt, reply and
error, the answer and its sources. What no run can put there is then written into the database
as a colleague's shared `sessions.db` could hold it: the session's error, its profile, a setting
and the api base, and a call's model.

Each field's text is tagged (`ANSWER⟦...⟧`), so a test can find it in an export.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from rlm_desktop.engine import ContextDocument
from rlm_desktop.store import Store
from tests.review.health_runs import recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

SURROGATES = "\udfff\udc00\ud800|\udbff|\udce9"
"""Lone low and high surrogates (never a high one before a low one: JSON would join the two into
one character), and `\\udce9`, the byte 0xE9 of a file name that is not UTF-8."""
FIRM = SURROGATES + "".join(
    [
        *(chr(code) for code in range(0x20) if chr(code) not in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"),
        *(chr(code) for code in range(0x7F, 0xA0) if code != 0x85),
        "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        "\ufdd0\ufdef\ufffe\uffff\U0001fffe\U0010ffff",
    ]
)
"""Characters every export must mark: lone surrogates, the controls that are not whitespace,
bidi controls and noncharacters."""
SPACING = "\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029"
"""Controls Python takes for whitespace or line ends (`str.split`, `str.splitlines`): marked too."""
CORE = FIRM + SPACING
KEPT = "\ufeff\u200b\u200c\u200d\u2060🐟👩\u200d👩\u200d👧𝔘"
"""Text that is text: a byte order mark and zero-width characters (which join emoji and some
scripts' letters), emoji and other astral characters. Exports keep them as they are."""
MARKUP = "</script><script>alert(1)</script>]]>--><!--<![CDATA[x</textarea></title>"


def nasty(tag: str, surrogates: bool = True) -> str:
    """The hostile text of one field, tagged; without lone surrogates where only a text that UTF-8
    can carry gets through (a reply from the provider, a column of the database)."""
    core = CORE if surrogates else CORE.removeprefix(SURROGATES)
    return f"{tag}⟦{core}⟧{KEPT}{MARKUP}\t\n\r\n{tag} end"


def marked(text: str) -> str:
    """How the exports mark each character of `text` but printable ASCII: its code point as an
    escape (`\\x00`, `\\u202e`, `\\U0010ffff`)."""
    return "".join(c if c.isascii() and c.isprintable() else _mark(ord(c)) for c in text)


def _mark(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


DOCUMENT = ContextDocument(name=nasty("DOCNAME") + ".txt", text="Tank A: 7 fish. " + nasty("DOC"))
CELL = f"""import sys
N, K, M = {CORE!r}, {KEPT!r}, {MARKUP + chr(9) + chr(10) + chr(13) + chr(10)!r}
def nasty(tag):
    return tag + "⟦" + N + "⟧" + K + M + tag + " end"
print(nasty("STDOUT"))
print(nasty("STDERR"), file=sys.stderr)
reading = llm_query(nasty("PROMPT"))
try:
    llm_query("please fail")
except Exception as error:
    print("the sub-call failed:", type(error).__name__)
raise ValueError(nasty("ERROR"))"""
TURNS = [
    repl(f"# CODE⟦{CORE.removeprefix(SURROGATES)}⟧\nprint(1)", prose=nasty("REPLY", False)),
    repl(CELL),
    repl('FINAL(nasty("ANSWER"), sources=[nasty("SOURCE")])'),
]
"""The root's turns: code with every hostile character raw (NUL makes it a syntax error), a cell
that prints, calls sub-calls and raises, and the answer with its source."""


def _sub_reply(prompt: str) -> str | Reply:
    if prompt.startswith("please fail"):
        return Reply(status=400, content=nasty("CALLERR"))
    return nasty("SUBREPLY", surrogates=False)


async def hostile_session(store: Store, server: ScriptedServer) -> str:
    """Record the hostile run in `store` (see the module); returns its session id."""
    return await recorded(
        store,
        server,
        scripted(root=TURNS, sub=_sub_reply),
        documents=[DOCUMENT],
        query=nasty("QUESTION"),
    )


def share(database: Path, session_id: str) -> None:
    """What no run writes, written into `database` as a shared copy of it could hold it."""
    with sqlite3.connect(database) as db:
        (settings,) = db.execute(
            "SELECT settings FROM sessions WHERE id = ?", [session_id]
        ).fetchone()
        shared: dict[str, Any] = json.loads(settings)
        shared["budget"][nasty("SETTINGKEY")] = nasty("SETTING")
        shared["api_base"] = "http://127.0.0.1:99999999/" + nasty("APIBASE")
        db.execute(
            "UPDATE sessions SET settings = ?, error = ?, profile = ? WHERE id = ?",
            [json.dumps(shared), nasty("SESSIONERR", False), nasty("PROFILE", False), session_id],
        )
        db.execute(
            "UPDATE calls SET model = ? WHERE session_id = ? AND kind = 'llm'",
            [f"openai/{nasty('MODEL', False)}", session_id],
        )
