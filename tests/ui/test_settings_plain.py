"""settings.ini holds plain values only (#24): a value Qt would decode as a type of its own (a
pickled Python object above all) is ignored with one warning and never decoded, the window opens
with that setting's default and every other setting, and what the app writes reads back plain.

The planted values are the ones Qt itself writes: PySide stores a Python object QSettings cannot
keep natively as `@Variant(...)` around a pickle, here the pickle of a call that creates a marker
file when it is loaded. They are forged in a file of their own (QSettings keeps the objects it
wrote in memory, per file) and copied into the data folder's settings.ini.
"""

from __future__ import annotations

import logging
import os
import random
import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray, QSettings
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.config import DEFAULT_MODE, DEFAULT_MODEL
from rlm_desktop.paths import data_dir
from rlm_desktop.settings_ini import Plain, parse, render
from rlm_desktop.ui.shared.preferences import Preferences, RunDefaults
from rlm_desktop.ui.window.main_window import MainWindow


class RunsWhenLoaded:
    """Pickles as the call `os.mkdir(marker)`: loading the pickle creates the marker folder."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.marker),))


def forged(tmp_path: Path, payload: object) -> str:
    """The text QSettings writes in an INI file for `payload`, as an attacker would plant it."""
    path = tmp_path / "forge.ini"
    forge = QSettings(str(path), QSettings.Format.IniFormat)
    forge.setValue("forged", payload)
    forge.sync()
    line = next(x for x in path.read_text("latin-1").splitlines() if x.startswith("forged="))
    return line.removeprefix("forged=")


def pickled(tmp_path: Path) -> tuple[str, Path]:
    """A genuine `@Variant(PySide::PyObjectWrapper ...)` value, and the marker its pickle makes."""
    marker = tmp_path / "the-pickle-ran"
    value = forged(tmp_path, RunsWhenLoaded(marker))
    assert value.startswith("@Variant(")
    assert "PySide::PyObjectWrapper" in value
    return value, marker


def plant(text: str) -> Path:
    """Write `text` as the data folder's settings.ini."""
    path = data_dir() / "settings.ini"
    path.write_bytes(text.encode())
    return path


def open_window(qtbot: QtBot) -> MainWindow:
    """The real main window, as the app starts it (its own Preferences)."""
    win = MainWindow(warm_up=False)
    qtbot.addWidget(win)
    win.show()
    return win


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings logged so far."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_pickled_object_in_the_settings_is_never_loaded(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: object,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    value, marker = pickled(tmp_path)
    settings = plant(
        f"[run]\nmodel={value}\nsub_model=openai/sub-model\nmax_depth=3\n\n"
        "[window]\nwrap_code=true\n"
    )
    with caplog.at_level(logging.WARNING):
        prefs = Preferences()
        assert prefs.theme == "system"
        assert prefs.run_defaults().model == DEFAULT_MODEL
        win = open_window(qtbot)
    assert not marker.exists()
    assert win.isVisible()
    controls = win.workspace.controls
    assert controls.model.currentText() == DEFAULT_MODEL
    assert controls.sub_model.currentText() == "openai/sub-model"
    assert controls.max_depth.value() == 3
    assert win.workspace.console.wrap.isChecked()
    [warning] = warnings(caplog)
    assert "run/model" in warning
    assert str(settings) in warning
    win.shutdown()


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda v: v[: len(v) // 2] + ")", id="pickle-cut-short"),
        pytest.param(lambda v: "@Variant(", id="bare-variant"),
        pytest.param(lambda v: v[:30], id="no-closing-parenthesis"),
    ],
)
def test_a_truncated_variant_leaves_the_window_opening(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: object,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    cut: object,
) -> None:
    value, marker = pickled(tmp_path)
    truncated = cut(value)  # type: ignore[operator]
    plant(f"[run]\nmode={truncated}\nsub_model=openai/sub-model\n")
    with caplog.at_level(logging.WARNING):
        win = open_window(qtbot)
    assert win.isVisible()
    assert not marker.exists()
    controls = win.workspace.controls
    assert controls.mode.currentData() == DEFAULT_MODE
    assert controls.sub_model.currentText() == "openai/sub-model"
    [warning] = warnings(caplog)
    assert "run/mode" in warning
    win.shutdown()


def test_a_list_with_a_variant_element_is_ignored(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: object,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    value, marker = pickled(tmp_path)
    plant(f"[run]\nsub_model=openai/sub-model, {value}\nmax_turns=7\n\n[custom]\nnames=a, b, @@c\n")
    with caplog.at_level(logging.WARNING):
        win = open_window(qtbot)
    assert not marker.exists()
    assert win.workspace.controls.sub_model.currentText() == ""
    assert win.workspace.controls.max_turns.value() == 7
    assert Preferences().get("custom/names") == ["a", "b", "@c"]
    [warning] = warnings(caplog)
    assert "run/sub_model" in warning
    assert "custom/names" not in warning
    win.shutdown()


def test_the_other_settings_keep_their_values(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: object,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    value, marker = pickled(tmp_path)
    settings = plant(
        "[General]\ntop=kept\n\n"
        f"[run]\nmodel={value}\n"
        'sub_model="openai/sub, with a comma"\nmax_cost_usd=0.25\nmax_depth=4\n'
        "mode=@Rect(1 2 3 4)\n"
        'prices="openai/x = 1.5, 2\\nlocal/y = 0, 0"\n\n'
        '[sandbox]\nallow_read="[\\"/data/a\\", \\"/data/b\\"]"\nrequire_isolation=true\n\n'
        "[window]\ngeometry=@ByteArray(\\x1\\xd9\\xd0\\xcb\\0\\x3)\nbudget_open=true\n"
        "stamp=@DateTime(\\0\\0\\0\\x10\\0)\n\n"
        "[appearance]\ncode_font=@@Mono\nui_font_size=13\n\n"
        "[traces]\notlp_endpoint=http://127.0.0.1:4318\n"
    )
    with caplog.at_level(logging.WARNING):
        win = open_window(qtbot)
        prefs = Preferences()
        defaults = prefs.run_defaults()
    assert not marker.exists()
    assert defaults.model == DEFAULT_MODEL
    assert defaults.mode == DEFAULT_MODE
    assert defaults.sub_model == "openai/sub, with a comma"
    assert defaults.max_cost_usd == 0.25
    assert defaults.max_depth == 4
    assert prefs.prices_text() == "openai/x = 1.5, 2\nlocal/y = 0, 0"
    assert prefs.allowed_folders() == ["/data/a", "/data/b"]
    assert prefs.require_isolation
    assert prefs.window_state("geometry") == QByteArray(b"\x01\xd9\xd0\xcb\x00\x03")
    assert prefs.get_bool("window/budget_open")
    assert prefs.get_str("appearance/code_font") == "@Mono"
    assert prefs.get_int("appearance/ui_font_size") == 13
    assert prefs.otlp_endpoint == "http://127.0.0.1:4318"
    assert prefs.get("top") == "kept"
    [warning] = warnings(caplog)
    for key in ("run/model", "run/mode", "window/stamp"):
        assert key in warning
    assert str(settings) in warning

    win.shutdown()
    prefs.set_otlp_endpoint("http://127.0.0.1:4319")  # the next write leaves the refused ones out
    text = settings.read_text()
    assert "@Variant(" not in text
    assert "@Rect(" not in text
    assert "@DateTime(" not in text
    copy = tmp_path / "copy.ini"
    shutil.copy(settings, copy)
    qt = QSettings(str(copy), QSettings.Format.IniFormat)
    assert qt.value("top") == "kept"
    assert qt.value("run/sub_model") == "openai/sub, with a comma"
    assert qt.value("run/prices") == "openai/x = 1.5, 2\nlocal/y = 0, 0"
    assert qt.value("window/geometry") == QByteArray(b"\x01\xd9\xd0\xcb\x00\x03")
    assert qt.value("appearance/code_font") == "@Mono"
    assert qt.value("traces/otlp_endpoint") == "http://127.0.0.1:4319"
    assert not qt.contains("run/model")


def test_everything_the_app_writes_reads_back_as_plain_values(
    qtbot: QtBot, qloop: object, memory_keyring: object, tmp_path: Path
) -> None:
    win = open_window(qtbot)
    prefs = win.prefs
    saved = RunDefaults(
        model="anthropic/claude-haiku-4-5",
        sub_model="openai/gpt-5-nano",
        endpoint="ollama",
        mode="rlm",
        max_depth=3,
        profile="mine",
        max_cost_usd=2.5,
        max_tokens=123_456,
        max_sub_calls=77,
        max_turns=9,
        timeout_s=600,
    )
    assert saved.changed_since(RunDefaults()) == [f for f in vars(saved)]
    prefs.set_run_defaults(saved)
    prefs.set_prices_text("openai/x = 1.5, 2\nlocal/y = 0, 0")
    prefs.set_allowed_folders([str(tmp_path), "/data/with, a comma"])
    prefs.set_require_isolation(True)
    prefs.set_otlp_endpoint("http://127.0.0.1:4318")
    prefs.set_base_url("local", "http://127.0.0.1:9/v1")
    prefs.set_extra_providers(["mistral", "groq"])
    prefs.set("providers/key_saved", True)
    prefs.set("appearance/theme", "dark")
    prefs.set("appearance/ui_font", "@Sans; Bold")
    prefs.set("appearance/ui_font_size", 11)
    win.close()  # saves the layout: geometry, splitters, tree columns, budget row, wrapping

    for value in (("a", "b"), {"a": 1}, RunsWhenLoaded(tmp_path / "never"), 1j):
        with pytest.raises(TypeError):
            prefs.set("run/model", value)  # type: ignore[arg-type]
    text = (data_dir() / "settings.ini").read_text()
    assert set(re.findall(r'=\s*"?(@[A-Za-z]*)\(', text)) == {"@ByteArray"}
    copy = tmp_path / "copy.ini"
    shutil.copy(data_dir() / "settings.ini", copy)
    qt = QSettings(str(copy), QSettings.Format.IniFormat)
    states = {k for k in qt.allKeys() if isinstance(qt.value(k), QByteArray)}
    assert {"window/geometry", "window/treeHeader"} <= states
    assert all(k.startswith("window/") for k in states)
    for key in set(qt.allKeys()) - states:
        assert isinstance(qt.value(key), str), key
    assert qt.value("run/max_cost_usd") == "2.5"
    assert qt.value("sandbox/require_isolation") == "true"

    again = Preferences()
    assert again.run_defaults() == saved
    assert again.prices_text() == "openai/x = 1.5, 2\nlocal/y = 0, 0"
    assert again.allowed_folders() == [str(tmp_path), "/data/with, a comma"]
    assert again.require_isolation
    assert again.otlp_endpoint == "http://127.0.0.1:4318"
    assert again.base_url("local") == "http://127.0.0.1:9/v1"
    assert again.extra_providers() == ["mistral", "groq"]
    assert again.get_bool("providers/key_saved")
    assert again.theme == "dark"
    assert again.get_str("appearance/ui_font") == "@Sans; Bold"
    assert again.get_int("appearance/ui_font_size") == 11
    assert again.window_state("geometry") is not None


def tricky_values(count: int) -> dict[str, Plain]:
    """Values of every plain kind, text made of what INI escaping is about (seeded)."""
    pieces = [*' \t\n\r\\",;=@#[]%/aZ09xé中\0\x01\x1f\x7f', "\U0001f600", "@@", "@Variant("]
    rnd = random.Random(24)

    def text() -> str:
        return "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10)))

    values: dict[str, Plain] = {}
    for i in range(count):
        key = rnd.choice(["s/", "", "a b/", "x/y/", "é/"]) + rnd.choice(["k", "k z", "k%", "ké"])
        kind = i % 5
        values[f"{key}{i}"] = (
            text()
            if kind < 2
            else bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 8)))
            if kind == 2
            else [text() for _ in range(rnd.choice([2, 3]))]
            if kind == 3
            else rnd.choice([True, False, 7, -3, 0.25, 1e20])
        )
    return values


def as_read(value: Plain) -> Plain:
    """`value` as an INI file gives it back: numbers and booleans as Qt writes them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return {7: "7", -3: "-3", 0.25: "0.25", 1e20: "1e+20"}[value]
    return value


def test_qt_and_the_app_read_each_others_files(tmp_path: Path) -> None:
    values = tricky_values(300)
    expected = {key: as_read(value) for key, value in values.items()}
    by_qt = QSettings(str(tmp_path / "by-qt.ini"), QSettings.Format.IniFormat)
    for key, value in values.items():
        by_qt.setValue(key, QByteArray(value) if isinstance(value, bytes) else value)
    by_qt.sync()
    ours = parse((tmp_path / "by-qt.ini").read_bytes())
    assert ours.refused == ()
    assert ours.values == expected

    (tmp_path / "by-us.ini").write_bytes(render(values))
    qt = QSettings(str(tmp_path / "by-us.ini"), QSettings.Format.IniFormat)
    assert sorted(qt.allKeys()) == sorted(values)
    for key, value in expected.items():
        read = qt.value(key)
        assert (read.data() if isinstance(read, QByteArray) else read) == value, key
