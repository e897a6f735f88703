"""A real run whose texts hold words to search for behind multi-byte text, and where each is.

The engine runs it against the scripted server and the store records it, as for any user: the
question, a turn's reply, a cell's code, a long output with its word in the middle, stderr with
its word three times in three cases behind a word of 400 letters, a traceback, a sub-call's
prompt and response, the answer. Every text puts emoji (two UTF-16 units each), CJK and a
combining accent before its word; the code builds the words it prints out of halves, so that
each word is in one field only.
"""

from __future__ import annotations

from rlm_desktop.engine import ContextDocument
from tests.scripted_rlm import Responder, repl, scripted

QUESTION = "Wo 🦒 lebt 日本語 das Okapi? Sag mir, where the okapi lives."
CODE = (
    "# 🐍 日本語 caf\u0301e: the narwhal counts\n"
    "print('🦒 中文 ' + 'ä' * 3000 + ' ' + 'word ' * 4000 + 'MARMO' + 'SET in the middle'"
    " + ' tail' * 4000)\n"
    "import sys\n"
    "print('🚀 café caf\\u0301e ' + 'é' * 400 + ' le' + 'mur, Le' + 'mur and LE' + 'MUR',"
    " file=sys.stderr)\n"
    "reply = llm_query('Frage 😀 日本: is the ta' + 'pir here, the ta' + 'pir?')\n"
    "raise ValueError('ünïcödé 中文 pango' + 'lin')"
)
FIRST_TURN = repl(CODE, "Ich 😀 schaue 日本語 nach: the quetzal first.")
ANSWER = "Die Antwort 🦓 中文: the Dugong lives at sea; a dugong eats seagrass."
SECOND_TURN = repl(f"FINAL({ANSWER!r})", "Nun 😀 日本語: the axolotl is done.")
SUB_REPLY = "Ja 😀 中文, the ibex is here."
DOCUMENT = ContextDocument(name="zoo.txt", text="Animals of the zoo, one a line.\n")

WORDS = {
    # what is typed: (the field of the best hit, the text to land on)
    "okapi": ("query", "Okapi"),
    "quetzal": ("reply", "quetzal"),
    "narwhal": ("code", "narwhal"),
    "marmoset": ("stdout", "MARMOSET"),
    "lemurs": ("stderr", "lemur"),
    "pangolin": ("error", "pangolin"),
    "TAPIR": ("prompt", "tapir"),
    "ibex": ("response", "ibex"),
    "dugong": ("answer", "Dugong"),
    '"a dugong"': ("answer", "a dugong"),
    "okap*": ("query", "Okapi"),
}
"""A search -> the field of its best hit, and the text it lands on (stems, prefixes, cases and
phrases included)."""


def responder() -> Responder:
    """The scripted model of the run: two root turns, one sub-call."""
    return scripted(root=[FIRST_TURN, SECOND_TURN], sub=SUB_REPLY)
