"""Gold answers worked out again from the generated documents alone, the slow obvious way."""

from __future__ import annotations

import ast
import itertools
import re
from collections import Counter

from rlm_desktop.evaluation.lines import TEMPLATES

LINE = re.compile(r"^Date: (\w{3} \d{2}, \d{4}) \|\| User: (\d+) \|\| Instance: (.+)$")


def _pattern(template: str) -> re.Pattern[str]:
    text = re.escape(template)
    for slot, matcher in (("ABBR", "[A-Z]+"), ("noun2", r"\w+"), ("noun", r"\w+"), ("adj", r"\w+")):
        text = text.replace(re.escape("{" + slot + "}"), matcher)
    return re.compile(f"^{text}$")


PATTERNS = [(label, _pattern(t)) for label, templates in TEMPLATES.items() for t in templates]


def label_of(instance: str) -> str:
    """The one label whose templates produce `instance`."""
    labels = {label for label, pattern in PATTERNS if pattern.match(instance)}
    assert len(labels) == 1, (instance, labels)
    return labels.pop()


def read_lines(text: str) -> list[tuple[int, str]]:
    """(user, label) of every line of an OOLONG-style document."""
    rows = []
    for line in text.splitlines():
        match = LINE.match(line)
        assert match, line
        rows.append((int(match.group(2)), label_of(match.group(3))))
    return rows


def aggregate_answer(text: str, question: str) -> str:
    """The answer to an aggregate question, counted line by line."""
    rows = read_lines(text)
    counts = Counter(label for _user, label in rows)
    if match := re.search(r"from User (\d+) should be classified as label '([^']+)'", question):
        user, label = int(match.group(1)), match.group(2)
        return str(sum(1 for u, lab in rows if u == user and lab == label))
    if match := re.search(
        r"How many data points should be classified as label '([^']+)'", question
    ):
        return str(counts[match.group(1)])
    if match := re.search(r"Is label '([^']+)' more common.* as label '([^']+)'\?", question):
        a, b = counts[match.group(1)], counts[match.group(2)]
        return "more common than" if a > b else "less common than" if a < b else "same frequency as"
    assert "most common" in question
    (top, n), (_second, m) = counts.most_common(2)
    assert n > m
    return top


def pairs_answer(text: str, question: str) -> set[tuple[int, int]]:
    """The pairs an OOLONG-Pairs question asks for, checking every pair of users."""
    rows = read_lines(text)
    users = sorted({u for u, _label in rows})

    def n(user: int, label: str) -> int:
        return sum(1 for u, lab in rows if u == user and lab == label)

    if match := re.search(
        r"more instances with label '([^']+)' than with label '([^']+)'", question
    ):
        a, b = match.groups()
        ok = [u for u in users if n(u, a) > n(u, b)]
    else:
        match = re.search(r"at least one instance with label '([^']+)'", question)
        assert match
        ok = [u for u in users if n(u, match.group(1)) >= 1]
    return {(a, b) for a, b in itertools.combinations(users, 2) if a in ok and b in ok}


def call_graph(
    documents: tuple[tuple[str, str], ...],
) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Each function's direct callees, and the file that defines each function."""
    calls: dict[str, set[str]] = {}
    home: dict[str, str] = {}
    for name, text in documents:
        for node in ast.parse(text).body:
            assert isinstance(node, ast.FunctionDef)
            assert node.name not in home, f"{node.name} defined twice"
            home[node.name] = name
            calls[node.name] = {
                c.func.id
                for c in ast.walk(node)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id != "abs"
            }
    return calls, home


def reaches(calls: dict[str, set[str]], start: str, target: str) -> bool:
    """Whether `start` eventually calls `target`."""
    seen, todo = set(), [start]
    while todo:
        for callee in calls[todo.pop()]:
            if callee == target:
                return True
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return False


def code_answer(documents: tuple[tuple[str, str], ...], question: str) -> str:
    """The answer to a code question, from the parsed modules."""
    calls, home = call_graph(documents)
    target = re.search(r"`(\w+)`", question.replace("`handle_`", ""))
    assert target
    if "defined" in question:
        return home[target.group(1)]
    callers = [f for f in calls if f.startswith("handle_") and reaches(calls, f, target.group(1))]
    assert len(callers) == 1, callers
    return callers[0]
