"""The numbers the health checks go by, in one place (docs/findings.md quotes them)."""

from __future__ import annotations

ERROR_SHARE = 0.4
"""weak_coder: at least this share of an RLM call's turns ran a cell that raised..."""
ERROR_TURNS = 2
"""...and at least this many turns did (one failing turn of two is a slip, not a pattern)."""
REPEATED_ERROR_TURNS = 2
"""weak_coder: the same error in this many consecutive turns of a call (the model did not fix it)."""
NO_CODE_TURNS = 2
"""weak_coder: this many replies of a call had no runnable code (and did not answer)."""

HUGE_ANSWER_CHARS = 20_000
"""brittle_answer: an answer submitted with FINAL_VAR longer than this is a dump, not an answer."""

HISTORY_MIN_RUNS = 10
"""cost_tail: the run is compared with the user's history once there are this many other runs..."""
HISTORY_PERCENTILE = 95.0
"""...and flagged at or above this percentile of them..."""
HISTORY_MEDIAN_FACTOR = 3.0
"""...when it also costs at least this many times their median."""
RESENT_SHARE = 0.8
"""cost_tail: this share of all input tokens was history re-sent with each turn..."""
RESENT_MIN_TOKENS = 200_000
"""...and it amounts to at least this many tokens (small runs re-send little in absolute terms)."""
RESENT_DOCUMENT_FACTOR = 3.0
"""cost_tail: the models were sent at least this many times the document text they read..."""
RESENT_DOCUMENT_MIN_CHARS = 400_000
"""...and the repeats come to at least this many characters (about 100,000 tokens)."""
FANOUT_SUB_CALLS = 64
"""cost_tail: one turn started at least this many sub-calls."""

SERIAL_MIN_CALLS = 2
"""serial_sub_calls: this many sub-calls of one cell ran one after another, independent..."""
SERIAL_MIN_SAVING_S = 1.0
"""...and running them as one batch would have saved at least this many seconds."""
DEPENDENT_MIN_CHARS = 8
"""A sub-call whose prompt quotes an earlier reply of its cell (this long at least) depends on it."""
DEPENDENT_LOOKBACK = 32
"""...among the last this many replies (a chain quotes the reply just before; a long loop would
otherwise cost a search of every prompt for every earlier reply)."""

REPEAT_MIN_CHARS = 1_000
"""weak_coder: a reply at least this long..."""
REPEAT_MAX_RATIO = 0.1
"""...that zlib packs to at most this share of its size is mostly repeats (prose packs to about
0.4, a table or code to about 0.25; the same lines over and over to a few hundredths)."""
