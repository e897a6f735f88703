"""The macOS Seatbelt profile: the same policy as the Linux sandbox, and no path can widen it.

sandbox-exec does not exist here, so these read the profile as SBPL: a small reader turns it into
nested lists of symbols and strings, and the tests check which operations each rule allows.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlm_desktop.engine.sandbox.kernel import seatbelt
from rlm_desktop.engine.sandbox.level import sandbox_spec

Form = list["Form | str"]
_TOKEN = re.compile(r'\s*(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|([^\s()"]+))', re.S)


def read_sbpl(text: str) -> list[Form]:
    """The profile's top-level forms; strings come back unescaped and prefixed with `"`."""
    stack: list[Form] = [[]]
    position = 0
    while text[position:].strip():
        match = _TOKEN.match(text, position)
        assert match, f"unreadable SBPL at {text[position:position + 40]!r}"
        position = match.end()
        opening, closing, string, symbol = match.groups()
        if opening:
            stack.append([])
        elif closing:
            done = stack.pop()
            stack[-1].append(done)
        elif string is not None:
            stack[-1].append('"' + re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m[1], m[1]), string))
        else:
            stack[-1].append(symbol)
    assert len(stack) == 1, "unbalanced parentheses"
    return [form for form in stack[0] if isinstance(form, list)]


def allowed(forms: list[Form], operation: str) -> list[tuple[str, str]]:
    """(filter kind, path) pairs of every `(allow <operation> ...)` rule."""
    pairs: list[tuple[str, str]] = []
    for form in forms:
        if form[:1] == ["allow"] and operation in form:
            pairs += [
                (str(f[0]), str(f[1])[1:])
                for f in form
                if isinstance(f, list) and len(f) == 2 and isinstance(f[1], str)
            ]
    return pairs


def operations(forms: list[Form], verb: str) -> set[str]:
    return {str(x) for form in forms if form[:1] == [verb] for x in form[1:] if isinstance(x, str)}


def profile_for(tmp_path: Path, allow_read: list[str]) -> list[Form]:
    spec = sandbox_spec(tmp_path / "scratch", allow_read)
    return read_sbpl(seatbelt.seatbelt_profile(spec))


def test_the_profile_denies_by_default_and_allows_no_network(tmp_path: Path) -> None:
    forms = profile_for(tmp_path, [])
    assert forms[0] == ["version", "1"]
    assert ["deny", "default"] in forms
    assert not {op for op in operations(forms, "allow") if op.startswith("network")}
    assert "network*" in operations(forms, "deny")


def test_model_code_writes_only_its_scratch_folder_and_dev_null(tmp_path: Path) -> None:
    forms = profile_for(tmp_path, [str(tmp_path / "data")])
    scratch = str((tmp_path / "scratch").resolve())
    assert sorted(allowed(forms, "file-write*")) == [("literal", "/dev/null"), ("subpath", scratch)]


def test_it_reads_python_the_system_and_the_opened_folder_but_not_home(tmp_path: Path) -> None:
    data = tmp_path / "data"
    forms = profile_for(tmp_path, [str(data)])
    readable = {path for _, path in allowed(forms, "file-read*")}
    spec = sandbox_spec(tmp_path / "scratch", [str(data)])
    assert set(spec["read"]) <= readable
    assert str(data.resolve()) in readable
    assert "/System" in readable
    home = str(Path.home())
    assert not any(home == path or path in (home + "/", "/") for path in readable)
    assert all(not home.startswith(path + "/") or path in spec["read"] for path in readable)


def test_a_path_crafted_to_break_out_stays_one_string(tmp_path: Path) -> None:
    hostile = str(tmp_path / 'x") (allow network*) (allow file-write* (subpath "/') + "\nend"
    forms = profile_for(tmp_path, [hostile])
    assert not {op for op in operations(forms, "allow") if op.startswith("network")}
    assert ("subpath", str(Path(hostile).resolve())) in allowed(forms, "file-read*")
    assert len(allowed(forms, "file-write*")) == 2


def test_the_launcher_command_is_wrapped_only_on_macos(tmp_path: Path) -> None:
    spec = sandbox_spec(tmp_path / "scratch", [])
    command = seatbelt.seatbelt_command(["python3", "worker.py"], spec)
    assert command[:2] == [seatbelt.SANDBOX_EXEC, "-p"]
    assert command[3:] == ["python3", "worker.py"]
    assert read_sbpl(command[2])
    assert not seatbelt.applies("linux")
    assert not seatbelt.applies("win32")
