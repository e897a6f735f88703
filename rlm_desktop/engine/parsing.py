"""Reading a model reply: its code blocks, and a bare final-answer line when it has no code."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

CODE_BLOCK = re.compile(
    r"^[ \t]*```(repl|python|py)[ \t]*\n(.*?)```[ \t]*$",
    re.DOTALL | re.IGNORECASE | re.MULTILINE,
)
_UNCLOSED_BLOCK = re.compile(
    r"^[ \t]*```(?:repl|python|py)[ \t]*(?:\n.*)?\Z", re.DOTALL | re.IGNORECASE | re.MULTILINE
)
BARE_FINAL_VAR = re.compile(r"^[ \t]*FINAL_VAR\((?P<body>[^\n]*)\)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ProseFinal:
    """A `FINAL(...)` or `FINAL_VAR(...)` written on a line of its own in a reply without code."""

    kind: str
    value: str
    sources: str | None = None
    """The code of its `sources=` argument, when it has one (the REPL runs the signal then)."""


def extract_code_blocks(reply: str) -> list[str]:
    """The bodies of the fenced blocks tagged `repl` (or `python`), in order."""
    blocks = (match.group(2).rstrip("\n") for match in CODE_BLOCK.finditer(reply))
    return [block for block in blocks if block.strip()]


OPENING_FENCE = re.compile(r"^[ \t]*```(?:repl|python|py)[ \t]*\n", re.IGNORECASE | re.MULTILINE)
"""The line that opens a code block the REPL runs (what `CODE_BLOCK` starts with)."""
_CLOSING_FENCE = re.compile(r"```[ \t]*$", re.MULTILINE)


def code_being_written(reply: str, index: int | None = None) -> str:
    """The body so far of a reply's code block `index` (0-based; None: its latest), closed or
    still open ("" when the reply has no such block)."""
    bodies: list[str] = []
    start = 0
    while (opening := OPENING_FENCE.search(reply, start)) is not None and index != len(bodies) - 1:
        closing = _CLOSING_FENCE.search(reply, opening.end())
        bodies.append(reply[opening.end() : closing.start() if closing else None].rstrip("\n"))
        if closing is None:
            break
        start = closing.end()
    if index is None:
        return bodies[-1] if bodies else ""
    return bodies[index] if index < len(bodies) else ""


def prose_without_code(reply: str) -> str:
    """What the model said around its code: the reply without the blocks the REPL runs.

    A block left open (a reply cut at the output limit) goes too, to the end; fences with other
    tags stay, since nothing else shows them. Blank lines left behind are folded to one.
    """
    prose = _UNCLOSED_BLOCK.sub("", CODE_BLOCK.sub("", reply))
    return re.sub(r"\n{3,}", "\n\n", prose).strip()


def find_prose_final(reply: str) -> ProseFinal | None:
    """A final-answer line, accepted only when the reply has no code block.

    The signal must stand alone: `FINAL(` starting a line and its matching `)` ending the reply, so
    a mention in a sentence, or a FINAL line followed by more prose, never ends a run.
    """
    if CODE_BLOCK.search(reply) or "```" in reply:
        return None
    var_match = BARE_FINAL_VAR.search(reply)
    if var_match and _balanced(var_match.group("body")):
        return _signal("FINAL_VAR", var_match.group("body"))
    start = re.search(r"^[ \t]*FINAL\(", reply, re.MULTILINE)
    if start is None:
        return None
    rest = reply[start.end() :].rstrip()
    if not rest.endswith(")") or not _balanced(rest[:-1]):
        return None
    return _signal("FINAL", rest[:-1])


def _signal(kind: str, body: str) -> ProseFinal:
    """The signal with its argument: as Python (`FINAL("x", sources=[...])`) when it reads so
    with a `sources=` argument, else as the literal or the plain text it is."""
    with_sources = _with_sources(body)
    if with_sources is not None:
        return ProseFinal(kind, *with_sources)
    return ProseFinal(kind, _literal_text(body))


def _with_sources(body: str) -> tuple[str, str] | None:
    code = f"_({body.strip()})"
    try:
        call = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(call, ast.Call) or len(call.args) != 1 or len(call.keywords) != 1:
        return None
    sources = call.keywords[0]
    if sources.arg != "sources":
        return None
    value = call.args[0]
    if isinstance(value, ast.Name):
        text = value.id
    else:
        try:
            literal = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        text = literal if isinstance(literal, str) else str(literal)
    return text, str(ast.get_source_segment(code, sources.value))


def _balanced(body: str) -> bool:
    depth = 0
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _literal_text(body: str) -> str:
    text = body.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else str(value)
