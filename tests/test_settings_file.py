"""The settings file without Qt: INI text read as Qt reads it, plain values only (a value Qt would
decode as a type of its own is refused, never decoded), written so that Qt reads it back the same,
and the file read and written safely. The checks against Qt itself are in
tests/ui/test_settings_plain.py."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from rlm_desktop.settings_file import MAX_BYTES, SettingsFile
from rlm_desktop.settings_ini import Plain, Value, parse, render
from tests.qt_free import run_without_qt


def value_of(raw: str) -> Value | None:
    """What the line `k=<raw>` in [s] reads as."""
    parsed = parse(f"[s]\nk={raw}\n".encode())
    assert parsed.refused == ()
    return parsed.values.get("s/k")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain text", "plain text"),
        ("  spaced  ", "spaced"),
        ('" kept "', " kept "),
        ('a, b , "c,d"', ["a", "b", "c,d"]),
        ("@@at", "@at"),
        ("a, @@b", ["a", "@b"]),
        ("@ByteArray(\\0\\xff\\x1)", b"\x00\xff\x01"),
        ("@String(x)", "x"),
        ("line\\nbreak\\x41\\101\\t", "line\nbreakAA\t"),
        ("value ; a comment", "value"),
        ('"a;b=c"', "a;b=c"),
        ("\\xd83d\\xde00 \u00e9", "\U0001f600 \u00e9"),
        ("@Invalid()", None),
        ("", ""),
    ],
)
def test_plain_values_read_as_qt_reads_them(raw: str, expected: Value | None) -> None:
    assert value_of(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18PySide::PyObjectWrapper\\0\\0\\0\\0\\x1\\x80)",
        "@Variant(",
        "@Variant()",
        "@DateTime(\\0\\0\\0\\x10)",
        "@Rect(1 2 3 4)",
        "@Size(1 2)",
        "@Point(1 2)",
        "@",
        "@anything",
        "@ByteArray(not closed",
        '"@Variant(x)"',
        "\\x40Variant(x)",
        "\\100Variant(x)",
        "a, @Variant(x)",
        "a, @ByteArray(b)",
        "a, @Invalid()",
    ],
)
def test_other_types_are_refused_not_decoded(raw: str) -> None:
    parsed = parse(f"[s]\nk={raw}\nother=kept\n".encode())
    assert parsed.refused == ("s/k",)
    assert parsed.values == {"s/other": "kept"}


def test_sections_and_keys_read_as_qt_writes_them() -> None:
    text = (
        "\ufeff[General]\ntop=1\n\n[%General]\nx=2\n\n[a%20b]\nc%20d=3\nsub\\key=4\n"
        "; a comment\n[s]\nk=@Variant(x)\nk=plain again\nj=first\nj=@Rect(1 2 3 4)\n"
    )
    parsed = parse(text.encode())
    assert parsed.values == {
        "top": "1",
        "General/x": "2",
        "a b/c d": "3",
        "a b/sub/key": "4",
        "s/k": "plain again",
    }
    assert parsed.refused == ("s/j",)


@pytest.mark.parametrize(
    "value",
    [
        "",
        " leading and trailing ",
        "@looks like a type(",
        "@Variant(x)",
        'quotes " and \\ backslashes',
        "commas, semicolons; equals=",
        "tabs\tnew\nlines\r\0nul 1",
        "\x01\x1f\x7f controls and \u00e9\u4e2d\U0001f600",
        b'\x00\x01\x7f\x80\xff;,="\\ ()',
        b"",
        ["a", "b, c", "@d", " e "],
        ["", ""],
    ],
)
def test_what_is_written_reads_back_the_same(value: Plain) -> None:
    parsed = parse(render({"s/key": value, "top": "x", "a b/c/d": 1}))
    assert parsed.values == {"s/key": value, "top": "x", "a b/c/d": "1"}


def test_numbers_and_booleans_are_written_as_text() -> None:
    values: dict[str, Plain] = {"b": True, "f": False, "i": -7, "x": 2.5, "y": 3.0}
    assert render(values).decode() == "[General]\nb=true\nf=false\ni=-7\nx=2.5\ny=3\n"
    assert render({"empty": []}).decode() == "[General]\nempty=@Invalid()\n"


@pytest.mark.parametrize("value", [("a", "b"), {"a": 1}, object(), [1, 2], ["a", None], 1j])
def test_other_types_are_not_written(value: object) -> None:
    with pytest.raises(TypeError):
        render({"s/k": value})  # type: ignore[dict-item]


def test_settings_file_reads_changes_and_writes_atomically(tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    settings = SettingsFile.at(path)
    assert SettingsFile.at(str(path)) is settings
    assert settings.get("run/model") is None
    settings.update({"run/model": "m", "run/max_depth": 3, "window/geometry": b"\x01\x02"})
    assert settings.get("run/max_depth") == "3"
    assert settings.get("window/geometry") == b"\x01\x02"
    first = path.stat().st_ino
    settings.update({"run/model": None})
    assert settings.get("run/model") is None
    assert path.stat().st_ino != first
    assert [p.name for p in tmp_path.iterdir()] == ["settings.ini"]
    path.write_text("[run]\nmodel=changed outside\n")
    assert settings.get("run/model") == "changed outside"
    assert settings.get("run/max_depth") is None


def test_a_link_in_place_of_the_file_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("[s]\nk=v\n")
    path = tmp_path / "settings.ini"
    path.symlink_to(target)
    settings = SettingsFile.at(path)
    assert settings.get("s/k") == "v"
    settings.update({"s/k": "new"})
    assert not path.is_symlink()
    assert target.read_text() == "[s]\nk=v\n"
    assert parse(path.read_bytes()).values == {"s/k": "new"}


def test_refused_values_are_reported_once_for_each_state_of_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.ini"
    path.write_text("[run]\nmodel=@Variant(x)\nmode=@Rect(1 2 3 4)\nsub_model=kept\n")
    settings = SettingsFile.at(path)
    with caplog.at_level(logging.WARNING):
        assert settings.get("run/model") is None
        assert settings.get("run/sub_model") == "kept"
        assert SettingsFile.at(path).get("run/mode") is None
    [warning] = [r.getMessage() for r in caplog.records]
    assert "run/model, run/mode" in warning
    assert str(path) in warning
    settings.update({"run/max_turns": 5})
    assert "@" not in path.read_text()
    assert parse(path.read_bytes()).values == {"run/sub_model": "kept", "run/max_turns": "5"}
    assert len(caplog.records) == 1


def test_a_fifo_or_a_huge_file_is_ignored_without_blocking(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fifo = tmp_path / "fifo.ini"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.ini"
    huge.write_bytes(b"[s]\nk=v\n" + b";" * MAX_BYTES)
    with caplog.at_level(logging.WARNING):
        assert SettingsFile.at(fifo).get("s/k") is None
        assert SettingsFile.at(huge).get("s/k") is None
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert "not a regular file" in messages[0]
    assert "larger than" in messages[1]
    SettingsFile.at(fifo).update({"s/k": "v"})
    assert parse(fifo.read_bytes()).values == {"s/k": "v"}


def test_a_failed_write_is_logged_and_the_value_holds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("")
    settings = SettingsFile.at(tmp_path / "a-file" / "settings.ini")
    with caplog.at_level(logging.WARNING):
        settings.update({"s/k": "v"})
    assert settings.get("s/k") == "v"
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("cannot save the settings to ")


def test_settings_modules_import_without_qt(isolated_home: Path) -> None:
    done = run_without_qt(
        """
        import sys
        import rlm_desktop.settings_file
        import rlm_desktop.settings_ini
        assert not [m for m in sys.modules if m.split(".")[0] in {"PySide6", "shiboken6"}]
        """,
        home=isolated_home,
    )
    assert done.returncode == 0, done.stderr
