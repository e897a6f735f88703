"""Real recorded runs whose answers carry sources: the engine over the scripted server, real
workers and a real SQLite file, as the exports read them."""

from __future__ import annotations

from rlm_desktop.engine import ContextDocument
from rlm_desktop.store import Store
from tests.review.health_runs import recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

QUERY = "What did the board decide about the Heron budget?"
MINUTES = ContextDocument(
    name="minutes.txt",
    text=(
        "Board minutes, 4 March.\n"
        "The board approved the Heron budget of 2.4 million euros for the coming year.\n"
        + "".join(f"Item {i}: routine business, noted without discussion.\n" for i in range(60))
        + "The meeting closed at 17:40 after a vote on the Kestrel site.\n"
    ),
)
APPROVED = "The board approved the Heron budget of 2.4 million euros for the coming year."
MISSPELT = "The meeting closd at 17:40 after a vote on the Kestrel sight."
MADE_UP = "The board rejected the Heron budget and asked for a smaller plan next year."
READ_CHARS = 400
"""The sub-call reads the minutes' first characters."""
SOURCED = [
    repl(
        f"reading = llm_query('Find the budget decision in: ' + context[:{READ_CHARS}])\n"
        "print(reading)"
    ),
    repl(
        'FINAL("The board approved 2.4 million euros for Heron.", '
        f"sources=[{APPROVED!r}, {MISSPELT!r}, {MADE_UP!r}])"
    ),
]

CONTROL = (
    "</blockquote><script>document.title='pwned'</script>\n# Heading\n"
    "```\n[click]( javascript:alert(1)) ![x](http://attacker.example/i.png)\r# Return\n"
    "<img src=x onerror=\"document.title='img'\"> **bold** | cell |\n1. listed ~~~\n"
)
"""Markdown and HTML control text, as a document or a model could write it."""
HOSTILE = ContextDocument(
    name="# notes](javascript:alert(1)) <b>x</b>.txt",
    text="Preamble line.\n" + CONTROL + "Closing line of the notes.\n",
)
FORGED = "`` </blockquote><script>alert(2)</script>\n## Forged [x]( javascript:alert(3)) ``"
HOSTILE_RUN = [
    repl(
        "told = llm_query('Summarise: ' + context[:200])\n"
        f"FINAL('It says nothing useful.', sources=[{CONTROL.strip()!r}, {FORGED!r}])"
    ),
]


async def sourced_run(store: Store, server: ScriptedServer) -> str:
    """A run whose answer gives an exact source, a misspelt one and a made-up one, after a
    sub-call read the start of the minutes; returns its session id."""
    return await recorded(
        store,
        server,
        scripted(root=SOURCED, sub="Approved: 2.4 million euros."),
        documents=[MINUTES],
        query=QUERY,
    )


async def hostile_run(store: Store, server: ScriptedServer) -> str:
    """A run over a document (and a name) full of control text, whose answer quotes it and
    makes up a quote full of it too."""
    return await recorded(
        store,
        server,
        scripted(root=HOSTILE_RUN, sub="Nothing to report."),
        documents=[HOSTILE],
        query="What do the notes say?",
    )
