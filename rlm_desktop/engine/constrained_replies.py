"""Replies held to their shape by the server: prose, then exactly one `repl` block.

A weak coder's commonest failures are in the shape of its reply, not its code: no block at all,
a block tagged `text`, three blocks, prose that never stops. A local server can rule them out
while it decodes, so every RLM turn's reply is prose and one runnable block (a profile's
`constrained_replies`, off unless set). Each kind of server takes the shape its own way:

| server | sent | the reply |
|---|---|---|
| llama.cpp, llama-cpp-python | `grammar`: a GBNF grammar | prose, then the block |
| vLLM | `structured_outputs.regex` | prose, then the block |
| Ollama, LM Studio | `response_format`: a JSON schema (Ollama's `format`) | `{"reasoning": ..., "code": ...}`, read back as prose and a block (`JsonTurnReader`) |

Only the turns that run code are held; the turn-limit answer, sub-calls and compaction summaries
are free text. A server of another kind (or one that cannot be told) is sent nothing extra, and
the run says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlm_desktop.providers.server_facts import (
    LLAMA_CPP,
    LLAMA_CPP_PYTHON,
    LM_STUDIO,
    OLLAMA,
    VLLM,
)

FENCE_OPEN = "```repl\n"
FENCE_CLOSE = "```\n"
JSON_FIELDS = ("reasoning", "code")

PROSE_CHARACTERS = (200, 2000)
"""The least and most prose a held reply may write before its block (`prose_limit`)."""


def prose_limit(max_output_tokens: int) -> int:
    """How many characters of prose a held reply may write before its block opens: twice its
    output cap (a token is three or four characters, so about half the cap), within
    `PROSE_CHARACTERS`. Without a bound a weak model's prose runs to the cap and the turn has
    no code at all."""
    least, most = PROSE_CHARACTERS
    return min(most, max(least, 2 * max_output_tokens))


def gbnf(max_output_tokens: int) -> str:
    """Prose without three backticks in a row (at most `prose_limit` pieces of it), then, at the
    start of a line as the app reads a fence, one `repl` block whose code starts with a character
    that is not blank."""
    return rf"""root  ::= ( prose "\n" )? "```repl\n" code "\n```\n"
prose ::= piece{{0,{prose_limit(max_output_tokens)}}}
piece ::= [^`] | "`" [^`] | "``" [^`]
code  ::= [^` \t\r\n] piece*
"""


_NO_FENCE = r"(?:[^`]|`[^`]|``[^`])"


def regex(max_output_tokens: int) -> str:
    """The same language as `gbnf`, as a regular expression."""
    prose = rf"{_NO_FENCE}{{0,{prose_limit(max_output_tokens)}}}"
    return rf"(?:{prose}\n)?```repl\n[^` \t\r\n]{_NO_FENCE}*\n```\n"


def json_schema(max_output_tokens: int) -> dict[str, Any]:
    """The JSON a held reply is on a server that takes a schema: its reasoning bounded like
    `gbnf`'s prose, its code not empty."""
    reasoning = {
        "type": "string",
        "description": "what you think, briefly",
        "maxLength": prose_limit(max_output_tokens),
    }
    code = {"type": "string", "description": "the Python to run in the REPL", "minLength": 1}
    return {
        "type": "object",
        "properties": {"reasoning": reasoning, "code": code},
        "required": list(JSON_FIELDS),
        "additionalProperties": False,
    }


JSON_INSTRUCTIONS = (
    "\n\nYour replies here are JSON with two fields: `reasoning`, what you think (briefly), and"
    " `code`, the Python to run in the REPL (what a ```repl block would hold). Call FINAL(...) or"
    " FINAL_VAR(...) in `code` to answer."
)


@dataclass(frozen=True)
class ReplyConstraint:
    """How one server is asked to hold a reply to its shape."""

    name: str
    """What it is, for the user: "llama.cpp grammar", "vLLM regex", "JSON schema"."""
    fields_for: Callable[[int], dict[str, Any]] = field(repr=False)
    """What is added to the body of a request whose reply may be `max_output_tokens` long."""
    instructions: str = ""
    """Added to the system prompt, when the shape is not the prompt's own (JSON)."""
    reader: Callable[[], JsonTurnReader] | None = None
    """Makes what turns the reply's raw text into prose and a block, or None (it is already)."""


def constraint_for(software: str | None) -> ReplyConstraint | None:
    """How a server of `software` (`server_facts`' names) constrains a reply, or None when it
    is not one known to."""
    if software in (LLAMA_CPP, LLAMA_CPP_PYTHON):
        return ReplyConstraint(f"{software} grammar", lambda cap: {"grammar": gbnf(cap)})
    if software == VLLM:
        return ReplyConstraint(
            "vLLM regex", lambda cap: {"structured_outputs": {"regex": regex(cap)}}
        )
    if software in (OLLAMA, LM_STUDIO):
        return ReplyConstraint(
            f"{software} JSON schema", _json_response_format, JSON_INSTRUCTIONS, JsonTurnReader
        )
    return None


def _json_response_format(max_output_tokens: int) -> dict[str, Any]:
    schema = json_schema(max_output_tokens)
    json_format = {"name": "repl_turn", "schema": schema, "strict": True}
    return {"response_format": {"type": "json_schema", "json_schema": json_format}}


def unavailable(software: str | None) -> str:
    """Why replies go unconstrained on a server of `software`, in a sentence's end."""
    if software is None:
        return "the server did not say what it is (llama.cpp, vLLM, Ollama and LM Studio can)"
    return f"{software} offers no constraint the app knows"


class JsonTurnReader:
    """Reads a streamed `{"reasoning": "...", "code": "..."}` reply as the prose and block it
    stands for, piece by piece: `feed` returns the text the piece adds.

    The reasoning is prose, the code is a ```repl block closed when its string ends, and any
    other field is skipped, so what streams on screen reads like an unconstrained reply. A
    field's text is taken as the JSON escapes say (surrogate pairs joined, a broken one as
    U+FFFD); nothing the reply holds is evaluated. A reply that does not open with `{` (a server
    that ignored the schema) is passed on as it came.
    """

    def __init__(self) -> None:
        self._state = "start"
        self._leading: list[str] = []
        self._key: list[str] = []
        self._field: str | None = None
        self._escape = ""
        self._high_surrogate: int | None = None
        self._prose_written = False
        self._code_ends_line = True

    def feed(self, piece: str) -> str:
        """The rendered text `piece` of the raw reply adds."""
        if self._state == "as_sent":
            return piece
        out: list[str] = []
        for char in piece:
            self._step(char, out)
        return "".join(out)

    def _step(self, char: str, out: list[str]) -> None:
        state = self._state
        if state == "start":
            if char.isspace():
                self._leading.append(char)
            elif char == "{":
                self._state = "outside"
            else:
                self._state = "as_sent"
                out.extend(self._leading)
                out.append(char)
        elif state == "as_sent":
            out.append(char)
        elif state == "outside":
            if char == '"':
                self._state, self._key = "key", []
        elif state == "key":
            if char == '"':
                self._state = "colon"
            else:
                self._key.append(char)
        elif state == "colon":
            if char == '"':
                self._open_value(out)
            elif char in ",}":
                self._state = "outside"  # a value that is not a string: skipped
        elif state == "value":
            self._value_char(char, out)

    def _open_value(self, out: list[str]) -> None:
        key = "".join(self._key)
        self._state, self._field = "value", key if key in JSON_FIELDS else None
        if self._field == "code":
            out.append("\n\n" + FENCE_OPEN if self._prose_written else FENCE_OPEN)
            self._code_ends_line = True

    def _value_char(self, char: str, out: list[str]) -> None:
        if self._escape:
            self._escape += char
            if self._escape == "\\u" or (self._escape.startswith("\\u") and len(self._escape) < 6):
                return
            decoded, self._escape = self._unescaped(self._escape), ""
            self._emit(decoded, out)
        elif char == "\\":
            self._escape = "\\"
        elif char == '"':
            self._emit("", out, flush=True)
            if self._field == "code":
                out.append(FENCE_CLOSE if self._code_ends_line else "\n" + FENCE_CLOSE)
            self._state, self._field = "outside", None
        else:
            self._emit(char, out)

    def _unescaped(self, escape: str) -> str:
        if not escape.startswith("\\u"):
            return _SIMPLE_ESCAPES.get(escape[1], escape[1])
        try:
            unit = int(escape[2:], 16)
        except ValueError:
            return "\ufffd"
        if 0xD800 <= unit < 0xDC00:
            self._high_surrogate = unit
            return ""
        if 0xDC00 <= unit < 0xE000 and self._high_surrogate is not None:
            high, self._high_surrogate = self._high_surrogate, None
            return chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
        return "\ufffd" if 0xDC00 <= unit < 0xE000 else chr(unit)

    def _emit(self, text: str, out: list[str], *, flush: bool = False) -> None:
        if self._high_surrogate is not None and (text or flush):
            self._high_surrogate = None
            text = "\ufffd" + text
        if not text or self._field is None:
            return
        if self._field == "reasoning":
            self._prose_written = True
        else:
            self._code_ends_line = text.endswith("\n")
        out.append(text)


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\"}
