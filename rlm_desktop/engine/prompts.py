"""The texts an RLM call starts with: the profile's system prompt and the first user message."""

from __future__ import annotations

from typing import Any

from rlm_desktop.engine.context import PART_KINDS, parts_key
from rlm_desktop.engine.kept_documents import KeptTexts
from rlm_desktop.engine.runtime import Runtime

MAX_LISTED_DOCUMENTS = 25


def describe_context(context: Any) -> str:
    """A one-line description of `context`'s shape for the system prompt."""
    if isinstance(context, str):
        return f"a str of {len(context):,} characters"
    if isinstance(context, list | KeptTexts):
        total = (  # kept texts' lengths are known: nothing is read back
            context.total_chars
            if isinstance(context, KeptTexts)
            else sum(len(str(c)) for c in context)
        )
        return f"a list of {len(context):,} str ({total:,} characters in all, in load order)"
    return f"a {type(context).__name__}"


def system_prompt(runtime: Runtime, context: Any) -> str:
    """The profile's prompt with this run's values filled in, and what a reply constraint of
    another shape asks (`constrained_replies`)."""
    config = runtime.config
    sub_model = config.effective_sub_model
    max_depth = config.budget.max_depth
    depth_note = (
        "At this depth `rlm_query` is a plain `llm_query` (no REPL below)."
        if max_depth <= 1
        else f"Recursion is allowed {max_depth} REPL levels deep; each level costs more, so "
        "prefer llm_query when a sub-problem needs no code."
    )
    filled = runtime.profile.system_prompt(
        context_shape=describe_context(context),
        sub_model=sub_model,
        sub_window=f"{runtime.llm.info(sub_model).context_window:,}",
        depth_note=depth_note,
        max_depth=max_depth,
        output_limit=f"{config.output_limit_chars:,}",
    )
    constraint = runtime.reply_constraint
    return filled + constraint.instructions if constraint is not None else filled


MAX_NAMED_PARTS = 6


def describe_parts(entry: dict[str, Any]) -> str:
    """What a `context_meta` entry says of the document's kind and parts, for its line in the
    document list: `spreadsheet, 2 sheets: Sales, Costs`, `pdf, 12 pages (3 by OCR)`."""
    words = [str(entry["type"])] if entry.get("type") not in (None, "", "text") else []
    for kind in PART_KINDS:
        parts = entry.get(parts_key(kind))
        if not isinstance(parts, list) or not parts:
            continue
        count = f"{len(parts):,} {kind if len(parts) == 1 else parts_key(kind)}"
        recognised = sum(1 for part in parts if part.get("ocr_confidence") is not None)
        if recognised:
            count += f" ({recognised:,} by OCR)"
        if kind == "sheet":
            names = [str(part.get("name")) for part in parts[:MAX_NAMED_PARTS]]
            count += ": " + ", ".join(names) + (", ..." if len(parts) > MAX_NAMED_PARTS else "")
        words.append(count)
    if entry.get("attached_to"):
        words.append(f"attached to {entry['attached_to']}")
    return ", ".join(words)


def parts_note(one_document: bool) -> str:
    """How the model addresses a document's parts through `context_meta`."""
    i, text = ("0", "context") if one_document else ("i", "context[i]")
    return (
        f"context_meta[{i}] gives the document's type and its parts (context_meta[{i}]['sheets'], "
        f"['slides'], ['pages'], ['chapters']), each {{'name', 'start', 'end'}}: "
        f"{text}[start:end] is that part."
    )


FRESH_START = "You have not looked at `context` yet. Start by examining it with code."


def first_user_message(
    prompt: str, context: Any, meta: list[dict[str, Any]], follow_up: str = ""
) -> str:
    """The question plus what the documents are, never their text; then, for a follow-up, what
    the earlier questions found and what came back (`follow_up`), else that `context` is unseen."""
    lines = [f"Question: {prompt}", "", f"`context` is {describe_context(context)}."]
    if len(meta) > 1 or (meta and meta[0].get("name") != "context"):
        lines.append("Documents:")
        for index, entry in enumerate(meta[:MAX_LISTED_DOCUMENTS]):
            tokens = entry.get("tokens")
            size = f"{entry.get('chars', 0):,} chars" + (f", ~{tokens:,} tokens" if tokens else "")
            parts = describe_parts(entry)
            lines.append(f"  [{index}] {entry.get('name')} ({parts + '; ' if parts else ''}{size})")
        if len(meta) > MAX_LISTED_DOCUMENTS:
            lines.append(f"  ... and {len(meta) - MAX_LISTED_DOCUMENTS:,} more (see context_meta)")
        if any(parts_key(kind) in entry for entry in meta for kind in PART_KINDS):
            lines.append(parts_note(isinstance(context, str)))
    lines += ["", follow_up or FRESH_START]
    return "\n".join(lines)
