"""brittle_answer, rule `unsupported_quote`: a source or quoted passage of the answer that is not
in the documents (`review.health.sources` looked for it word for word, normalised and approximately)."""

from __future__ import annotations

from collections.abc import Sequence

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.finding import Finding
from rlm_desktop.review.health.sources import CheckedSource
from rlm_desktop.review.health.view import RunView

SHOWN_QUOTES = 3
QUOTE_SHOWN_CHARS = 80
ADVICE = (
    "Look each of these passages up in the documents before using the answer, and treat the "
    "claims they support as unchecked; a model that often cites passages it cannot show is "
    "one to compare against others with an evaluation."
)


def unsupported_quote_findings(view: RunView, sources: Sequence[CheckedSource]) -> list[Finding]:
    """One warning naming the sources and quotes of the answer that are not in the documents."""
    missing = [source for source in sources if not source.found]
    root = view.root()
    if not missing or root is None:
        return []
    shown = "; ".join(
        f"[{source.number}] “{fmt.one_line(source.quote, QUOTE_SHOWN_CHARS)}”"
        for source in missing[:SHOWN_QUOTES]
    )
    more = f" and {len(missing) - SHOWN_QUOTES:,} more" if len(missing) > SHOWN_QUOTES else ""
    answering = view.answering_turn(root)
    return [
        Finding(
            kind="brittle_answer",
            rule="unsupported_quote",
            severity="warning",
            message=(
                f"{len(missing)} of {fmt.plural(len(sources), 'source')} of the answer "
                f"{'is' if len(missing) == 1 else 'are'} not in the documents: {shown}{more}. "
                "The model may have made them up."
            ),
            advice=ADVICE,
            calls=(root["id"],),
            turns=((root["id"], answering),) if answering is not None else (),
            figures={
                "not_found": len(missing),
                "sources": len(sources),
                "numbers": [source.number for source in missing],
            },
        )
    ]
