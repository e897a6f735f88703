"""brittle_answer: an answer that is not one — the turn-cap fallback, a prose FINAL line, code,
a variable's name, a placeholder, nothing, or a FINAL_VAR dump."""

from __future__ import annotations

import ast
import re

from rlm_desktop.review.health import thresholds as limits
from rlm_desktop.review.health.finding import Finding, Severity
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.detail import Row

PLACEHOLDERS = {
    "answer", "final answer", "your answer", "your final answer", "the answer", "todo", "tbd",
    "n/a", "na", "none", "null", "placeholder", "insert answer here", "xxx", "...", "…", "?",
}  # fmt: skip
RESULT_NAMES = {"result", "results", "final_answer", "output", "response", "ans", "res"}
_BRACKETED = re.compile(r"^[<\[{]\s*[\w\s-]*(answer|result|value|here)[\w\s-]*[>\]}]$", re.I)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OBJECT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")
_STATEMENTS = (
    ast.Assign, ast.AugAssign, ast.FunctionDef, ast.For, ast.While, ast.Import, ast.ImportFrom,
    ast.Lambda, ast.ListComp,
)  # fmt: skip
_CODE_FUNCTIONS = {
    "print", "len", "str", "int", "float", "list", "dict", "set", "sorted", "sum", "range",
    "FINAL", "FINAL_VAR", "SHOW_VARS", "llm_query", "rlm_query", "llm_query_batched",
    "rlm_query_batched",
}  # fmt: skip

ADVICE = {
    "partial_answer": "Raise --max-turns, or ask a narrower question; check the answer against "
    "the documents before using it.",
    "prose_final": "Prefer profiles that make the model call FINAL(...) inside a ```repl block; "
    "check that the answer is not a plan or a guess.",
    "empty": "Re-run with more turns or a stronger root model; an empty answer is no answer.",
    "placeholder": "The model submitted a template, not an answer: re-run with a stronger root "
    "model or the profile meant for it.",
    "variable_name": "The model named a variable instead of submitting it: it should call "
    "FINAL_VAR(name) in code, which the profile's prompt explains.",
    "code": "The model submitted code instead of running it: re-run with a stronger coding model.",
    "huge_value": "FINAL_VAR submitted a whole variable: ask for a short answer or build the "
    "answer text in code before submitting it.",
    "non_text_value": "FINAL_VAR submitted a list, dict or object, not text: the answer is its "
    "printed form; ask the model to format the answer as text.",
}


def brittle_answer_findings(view: RunView) -> list[Finding]:
    """What is wrong with the run's answer, if anything (the root call's answer)."""
    root = view.root()
    if root is None or not _answered(root, view):
        return []
    findings = []
    source = root["answer_source"]
    answer = root["answer"] if root["answer"] is not None else (view.session["answer"] or "")
    turns = view.turns_of(root["id"])
    if source == "partial":
        findings.append(
            _finding(
                "partial_answer",
                "warning",
                f"The answer came from the 'answer now' request made after all {len(turns)} "
                "turns were used, not from the model's own FINAL.",
                root,
                None,
                {"turns": len(turns)},
            )
        )
    answering = view.answering_turn(root)
    if answering is not None and not turns[-1]["code_blocks"]:
        findings.append(
            _finding(
                "prose_final",
                "info",
                f"The answer was a {source}(...) line written in prose, not run as code.",
                root,
                answering,
                {"source": source},
            )
        )
    problem = answer_problem(answer, source, view.code_of(root["id"]))
    if problem is not None:
        rule, what = problem
        findings.append(
            _finding(
                rule, "warning", f"The answer {what}.", root, answering, {"chars": len(answer)}
            )
        )
    return findings


def answer_problem(answer: str, source: str | None, code: str) -> tuple[str, str] | None:
    """`(rule, what the answer is)` when `answer` is not a real answer; `code` is what the call ran."""
    text = answer.strip()
    if not text:
        return "empty", "is empty"
    if text.lower().strip(" .:!") in PLACEHOLDERS or _BRACKETED.match(text):
        return "placeholder", f"is a placeholder ({text[:40]!r})"
    if _IDENTIFIER.match(text) and (text in RESULT_NAMES or _assigned(text, code)):
        return "variable_name", f"is the name of a variable ({text!r}), not its value"
    if source == "FINAL_VAR" and len(text) > limits.HUGE_ANSWER_CHARS:
        return "huge_value", f"is a whole variable of {len(text):,} characters"
    if source == "FINAL_VAR" and _not_text(text):
        return "non_text_value", f"is the printed form of a {_type_name(text)}, not text"
    if "```" in text or _looks_like_code(text):
        return "code", "looks like code, not a result"
    return None


def _answered(root: Row, view: RunView) -> bool:
    return root["answer_source"] is not None or view.session["status"] in ("completed",)


def _assigned(name: str, code: str) -> bool:
    escaped = re.escape(name)
    return bool(
        re.search(
            rf"^\s*{escaped}\s*(\+|-)?=(?!=)|\bfor\s+{escaped}\b|\bdef\s+{escaped}\b", code, re.M
        )
    )


def _looks_like_code(text: str) -> bool:
    if len(text) > limits.HUGE_ANSWER_CHARS:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(_is_code(node) for node in ast.walk(tree))


def _is_code(node: ast.AST) -> bool:
    """Statements, method calls, calls of the REPL's or Python's functions, and subscripts of
    names are code; `Apple (AAPL)` (a call of an unknown name) is not."""
    if isinstance(node, _STATEMENTS):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) or (
            isinstance(func, ast.Name) and func.id in _CODE_FUNCTIONS
        )
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError, TypeError):
        return None


def _not_text(text: str) -> bool:
    return bool(_OBJECT_REPR.match(text)) or isinstance(_literal(text), list | dict | tuple | set)


def _type_name(text: str) -> str:
    value = _literal(text)
    return type(value).__name__ if value is not None else "Python object"


def _finding(
    rule: str,
    severity: Severity,
    message: str,
    root: Row,
    turn: int | None,
    figures: dict[str, object],
) -> Finding:
    return Finding(
        kind="brittle_answer",
        rule=rule,
        severity=severity,
        message=message,
        advice=ADVICE[rule],
        calls=(root["id"],),
        turns=((root["id"], turn),) if turn is not None else (),
        figures=figures,
    )
