"""The texts an RLM call starts with: the profile's system prompt and the first user message."""

from __future__ import annotations

from typing import Any

from rlm_desktop.engine.runtime import Runtime

MAX_LISTED_DOCUMENTS = 25


def describe_context(context: Any) -> str:
    """A one-line description of `context`'s shape for the system prompt."""
    if isinstance(context, str):
        return f"a str of {len(context):,} characters"
    if isinstance(context, list):
        total = sum(len(str(c)) for c in context)
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
            lines.append(f"  [{index}] {entry.get('name')} ({size})")
        if len(meta) > MAX_LISTED_DOCUMENTS:
            lines.append(f"  ... and {len(meta) - MAX_LISTED_DOCUMENTS:,} more (see context_meta)")
    lines += ["", follow_up or FRESH_START]
    return "\n".join(lines)
