"""Where a root reply's code is complete: the rule that cuts its stream (a profile's `code_stop`).

- `after-code` (the default): every closed ```repl block of a reply runs, in order, as the
  reference implementation does. The stream is cut after the last closed block once what
  follows it is no further code: an imagined output (a line starting `Output:`, `Result:`,
  `Out[` or `>>>`; a fence that opens no code block, such as ```output or a bare ```; a sentence
  claiming a result, such as "The output is"), or more than `PROSE_BOUND` characters of prose
  with no new block opening. A block that submits the answer (a `FINAL(`, `FINAL_VAR(` or
  `answer["ready"] = True` line at its top level) is the reply's last: the run ends after it.
- `first-block`: cut once the first block has closed: one block per turn, for small models whose
  replies ramble on into imagined outputs and new blocks built on them.
- `whole-reply`: never cut for code (the reply is read to its end or its cap).

A cut keeps the reply up to the end of its last closed block's fence line: what came after it
was never run, so it is not kept either. Each line is read once as it completes, so a reply of
any length, in pieces of any size, is scanned about once.
"""

from __future__ import annotations

import re

from rlm_desktop.engine.parsing import OPENING_FENCE

AFTER_CODE = "after-code"
FIRST_BLOCK = "first-block"
WHOLE_REPLY = "whole-reply"
CODE_STOPS = (AFTER_CODE, FIRST_BLOCK, WHOLE_REPLY)
"""The choices of a profile's `code_stop`, the default first."""

PROSE_BOUND = 600
"""Characters of prose after a closed block, with no new block opening, past which the reply is
complete. Strong coders join two blocks with a sentence or two ("Now count them per year:",
under 300 characters); a paragraph past that talks about output the model has not seen yet, and
every character of it is a token paid for and waited on (600 characters, some 150 tokens, are
seconds on a local model and far less than the history an extra turn re-sends)."""

_ANY_FENCE = re.compile(r"[ \t]*```")
_IMAGINED_OUTPUT = re.compile(
    r"[ \t]*(?:[*_#]+[ \t]*)?(?:(?:outputs?|results?|stdout)\b[*_ \t]*(?:\([^)\n]*\))?[*_ \t]*:"
    r"|out[ \t]*\[\d*\]|>>>)",
    re.IGNORECASE,
)
_SUBMITS = re.compile(r"FINAL(?:_VAR)?\(|answer\[[\"']ready[\"']\][ \t]*=[ \t]*True\b")
_CLAIMED_RESULT = re.compile(
    r"\b(?:the (?:output|result) (?:is|was|will be|should be|would be)"
    r"|(?:this|that|which|it) (?:will |should |would )?(?:prints?|outputs?)\b)",
    re.IGNORECASE,
)


class CodeStop:
    """The stream stop (`reply_stream.StreamStop`) of the `after-code` and `first-block` rules."""

    def __init__(self, rule: str = AFTER_CODE) -> None:
        if rule not in (AFTER_CODE, FIRST_BLOCK):
            raise ValueError(f"code_stop must be {AFTER_CODE!r} or {FIRST_BLOCK!r}, not {rule!r}")
        self._first_only = rule == FIRST_BLOCK
        self._line = 0
        """Where the first line not yet read starts."""
        self._seen = 0
        """How much of the reply has been searched for a line's end."""
        self._inside = False
        self._submits = False
        """The open block has a top-level line that submits the answer."""
        self._closed: int | None = None
        """The end of the last closed block's fence line (before its newline)."""
        self._prose_from = 0
        """Where the prose after the last closed block starts."""

    def end(self, text: str) -> int | None:
        """The index after which `text` (the reply so far) is complete, or None to read on."""
        while (newline := text.find("\n", self._seen)) >= 0:
            line_start, self._line = self._line, newline + 1
            self._seen = self._line
            cut = self._read_line(text, line_start, newline)
            if cut is not None:
                return cut
        self._seen = len(text)
        if self._closed is None or self._inside:
            return None
        prose = len(text) - self._prose_from
        head = text[self._line : self._line + 8].lstrip(" \t")
        if "```".startswith(head) or head.startswith("```"):
            prose = self._line - self._prose_from  # a line that may yet open a block
        return self._closed if prose > PROSE_BOUND else None

    def _read_line(self, text: str, start: int, newline: int) -> int | None:
        """Read the complete line `text[start:newline]`; the cut it calls for, if any."""
        if self._inside:
            if text[start:newline].rstrip(" \t").endswith("```"):
                self._inside, self._closed, self._prose_from = False, newline, newline + 1
                return newline if self._first_only or self._submits else None
            self._submits = self._submits or _SUBMITS.match(text, start, newline) is not None
            return None
        if OPENING_FENCE.match(text, start, newline + 1):
            self._inside = True
            return None
        if self._closed is None:
            return None
        if (
            _ANY_FENCE.match(text, start, newline)
            or _IMAGINED_OUTPUT.match(text, start, newline)
            or _CLAIMED_RESULT.search(text, start, newline)
            or newline - self._prose_from > PROSE_BOUND
        ):
            return self._closed
        return None
