"""Questions about a generated multi-file Python code base: which entry point eventually calls
a function, and where a function is defined. Exact match.

The gold spans are the definitions the answer rests on: the asked function's, or every
function of the call path from the handler up to (not including) the target, each of which
calls the next."""

from __future__ import annotations

import random

from rlm_desktop.evaluation.tasks import GoldSpan, Task, count, fill, joined_spans, rng_for, task_id
from rlm_desktop.evaluation.words import ADJECTIVES, NOUNS, VERBS

HANDLERS = 4
TOKENS_PER_MODULE = 800
CALLS_QUESTION = (
    "Exactly one of the functions whose names start with `handle_` eventually calls `{target}` "
    "(directly or through other functions). Which one? Answer with the function name only."
)
WHERE_QUESTION = "In which file is the function `{target}` defined? Answer with the file path only."


class _Names:
    """Unique function names drawn from the word banks."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._taken: set[str] = set()

    def new(self, prefix: str = "") -> str:
        rng = self._rng
        while True:
            name = f"{prefix}{rng.choice(VERBS)}_{rng.choice(ADJECTIVES)}_{rng.choice(NOUNS)}"
            if name not in self._taken:
                self._taken.add(name)
                return name


def function(name: str, callee: str | None, rng: random.Random) -> str:
    """The source of one small function that calls `callee` (or nothing)."""
    step = rng.choice(("value + 1", "value * 2", "value - 3", "abs(value)", "value // 2"))
    tail = f"return {callee}(result)" if callee else "return result"
    return (
        f"def {name}(value):\n"
        f'    """{name.split("_")[0].capitalize()} the {name.rsplit("_", 1)[-1]}."""\n'
        f"    result = {step}\n"
        f"    {tail}\n"
    )


def code_task(length: int, seed: int, index: int = 0) -> Task:
    """A code base of about `length` tokens in several modules, and one question about it."""
    rng = rng_for("code", seed, length, index)
    names = _Names(rng)
    chains = [
        [names.new("handle_"), *(names.new() for _ in range(rng.randint(2, 4)))]
        for _ in range(HANDLERS)
    ]
    placed: list[tuple[str, str]] = []  # (name, source)
    for chain in chains:
        for caller, callee in zip(chain, [*chain[1:], None], strict=True):
            placed.append((caller, function(caller, callee, rng)))
    fillers: list[str] = []

    def filler() -> str:
        name = names.new()
        callee = rng.choice(fillers) if fillers and rng.random() < 0.6 else None
        fillers.append(name)
        return function(name, callee, rng)

    sources = [(name, text) for name, text in placed]
    chain_tokens = sum(count(text) for _name, text in sources)
    sources += list(zip(fillers, fill(max(0, length - chain_tokens), filler), strict=True))
    modules = max(3, length // TOKENS_PER_MODULE)
    files: list[list[tuple[str, str]]] = [[] for _ in range(modules)]
    home: dict[str, int] = {}
    for name, text in sources:
        where = rng.randrange(modules)
        files[where].insert(rng.randint(0, len(files[where])), (name, text))
        home[name] = where
    documents = tuple(
        (module_path(i), "\n\n".join(text for _name, text in functions))
        for i, functions in enumerate(files)
    )
    definitions = _definitions(files)
    chain = rng.choice(chains)
    if rng.random() < 0.5:
        question, answer, kind = CALLS_QUESTION.format(target=chain[-1]), chain[0], "calls"
        evidence = chain[:-1]
    else:
        target = rng.choice(chain[1:])
        question, answer, kind = (
            WHERE_QUESTION.format(target=target),
            module_path(home[target]),
            "where",
        )
        evidence = [target]
    return Task(
        id=task_id("code", seed, length, index),
        kind="code",
        documents=documents,
        question=question,
        answer=answer,
        scoring="exact",
        length=length,
        details={"question_kind": kind, "modules": modules},
        gold_spans=tuple(definitions[name] for name in evidence),
    )


def _definitions(files: list[list[tuple[str, str]]]) -> dict[str, GoldSpan]:
    """Where each function's definition is (without its trailing newline), by name."""
    found: dict[str, GoldSpan] = {}
    for index, functions in enumerate(files):
        spans = joined_spans([text for _name, text in functions], "\n\n")
        for (name, text), (start, _end) in zip(functions, spans, strict=True):
            found[name] = GoldSpan(index, start, start + len(text.rstrip()))
    return found


def module_path(index: int) -> str:
    """The path of the code base's module `index`."""
    return f"app/module_{index:02d}.py"
