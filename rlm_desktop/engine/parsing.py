"""Reading a model reply: its code blocks, and a bare final-answer line when it has no code."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

CODE_BLOCK = re.compile(r"```(repl|python|py)[ \t]*\n(.*?)\n?```", re.DOTALL | re.IGNORECASE)
BARE_FINAL_VAR = re.compile(r"^[ \t]*FINAL_VAR\((?P<body>[^()\n]*)\)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ProseFinal:
    """A `FINAL(...)` or `FINAL_VAR(...)` written on a line of its own in a reply without code."""

    kind: str
    value: str


def extract_code_blocks(reply: str) -> list[str]:
    """The bodies of the fenced blocks tagged `repl` (or `python`), in order."""
    return [match.group(2) for match in CODE_BLOCK.finditer(reply) if match.group(2).strip()]


def prose_without_code(reply: str) -> str:
    """The reply with its code blocks removed: what the model said around its code."""
    return CODE_BLOCK.sub("", reply).strip()


def find_prose_final(reply: str) -> ProseFinal | None:
    """A final-answer line, accepted only when the reply has no code block.

    The signal must stand alone on its line(s): `FINAL(` starting a line and `)` ending the reply's
    last non-blank line, so a mention in the middle of a sentence never ends a run.
    """
    if CODE_BLOCK.search(reply) or "```" in reply:
        return None
    var_match = BARE_FINAL_VAR.search(reply)
    if var_match:
        return ProseFinal("FINAL_VAR", _literal_text(var_match.group("body")))
    stripped = reply.strip()
    start = re.search(r"^[ \t]*FINAL\(", stripped, re.MULTILINE)
    if start is None or not stripped.endswith(")"):
        return None
    body = stripped[start.end() : -1]
    return ProseFinal("FINAL", _literal_text(body))


def _literal_text(body: str) -> str:
    text = body.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else str(value)
