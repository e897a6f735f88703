"""The one formatter: costs read the same in the window, the CLI and the exports."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlm_desktop import formatting as fmt


@pytest.mark.parametrize(
    ("usd", "unpriced", "long", "text"),
    [
        (0.0, False, False, "$0"),
        (0.0042, False, False, "$0.0042"),
        (0.25, False, False, "$0.250"),
        (1234.5, False, False, "$1,234.50"),
        (None, False, False, "unpriced"),
        (0.0, True, False, "unpriced"),
        (0.25, True, False, "$0.250+"),
        (0.25, True, True, "$0.250 plus unpriced calls"),
    ],
)
def test_cost(usd: float | None, unpriced: bool, long: bool, text: str) -> None:
    assert fmt.cost(usd, unpriced, long=long) == text


def test_durations_tokens_and_text() -> None:
    assert [fmt.seconds(s) for s in (0.25, 12.34, 75, 3725)] == [
        "0.25 s",
        "12.3 s",
        "1:15",
        "1:02:05",
    ]
    assert [fmt.tokens(n) for n in (None, 1234, 1_234_567)] == ["", "1,234", "1.23M"]
    assert fmt.one_line("  a\n b  ", 10) == "a b"
    assert fmt.one_line("x" * 20, 10) == "x" * 9 + "…"
    assert fmt.plural(1, "turn") == "1 turn"
    assert fmt.plural(1204, "sub-call") == "1,204 sub-calls"
    assert fmt.when(None, missing="—") == "—"
    assert fmt.status_text("budget_exceeded") == "over budget"


@pytest.mark.parametrize(
    ("status", "tone"),
    [
        ("running", "running"),
        ("ok", "ok"),
        ("completed", "ok"),
        ("cancelled", "stopped"),
        ("interrupted", "stopped"),
        ("budget_exceeded", "limit"),
        ("max_turns", "limit"),
        ("timeout", "limit"),
        ("error", "error"),
        ("something new", "error"),
    ],
)
def test_status_tone(status: str, tone: str) -> None:
    assert fmt.status_tone(status) == tone


def test_plural_with_its_own_plural_form() -> None:
    assert fmt.plural(1, "match", "matches") == "1 match"
    assert fmt.plural(3, "match", "matches") == "3 matches"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("report 2024 – café.pdf", "report 2024 – café.pdf"),
        ("evil\n\x1b[31mred.txt", "evil\\n\\x1b[31mred.txt"),
        ("tab\there\r\x7f\x9b", "tab\\there\\r\\x7f\\x9b"),
        ("caf\udce9.txt", "caf\\xe9.txt"),
        ("lone\ud800", "lone\\ud800"),
        ("invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
        ("line\u2028break", "line\\u2028break"),
        ("C:\\Users\\ann\\notes.txt", "C:\\Users\\ann\\notes.txt"),
    ],
)
def test_terminal_safe_names_print_as_one_inert_line(name: str, shown: str) -> None:
    assert fmt.terminal_safe(name) == shown
    assert fmt.terminal_safe(Path(name)) == shown
    shown.encode("utf-8")  # printable whatever the name held


def test_a_session_id_is_shortened_to_its_random_part() -> None:
    assert fmt.short_session_id("20261201-040112-295610") == "295610"
    assert fmt.short_session_id("zoo-older") == "oo-older"  # not the app's shape: its tail
    assert fmt.short_session_id("a-custom-session-id") == "ssion-id"


def test_terminal_text_keeps_lines_tabs_and_text_and_escapes_the_rest() -> None:
    ordinary = "Totals:\n\tNorth: 12\n  Sud: café, 東京, ✓ 🎉, 👩‍💻 (Zoë’s)\n\nC:\\temp\\n"
    assert fmt.terminal_text(ordinary) == ordinary
    assert fmt.terminal_text("windows\r\nlines\r\n") == "windows\nlines\n"
    assert fmt.terminal_text(None) == ""
    hostile = "a\x1b]0;title\x07b\x1b[2Jc\rd\u202ee\x9bf\x7fg\x85h\u2028i\x0bj\udcff\x00"
    shown = "a\\x1b]0;title\\x07b\\x1b[2Jc\\rd\\u202ee\\x9bf\\x7fg\\x85h\\u2028i\\x0bj\\xff\\x00"
    assert fmt.terminal_text(hostile) == shown
    assert fmt.terminal_text(shown) == shown  # escaping twice changes nothing
    assert fmt.terminal_text("one\ntwo\x1b") == "one\ntwo\\x1b"


@pytest.mark.parametrize(
    "value",
    [
        {"answer": "a\x1b]52;c;eA==\x07\r\n\u202e\x9b\x7f\x85\u2028\u2066x\u2069", "n": [1, None]},
        {"lone": "\udcff\ud800", "text": "café 東京 🎉 👩‍💻", "tab": "\t", "quote": '"\\'},
    ],
)
def test_terminal_json_is_the_same_json_with_nothing_a_terminal_acts_on(value: object) -> None:
    import json

    shown = fmt.terminal_json(value)
    assert json.loads(shown) == value
    assert fmt.terminal_safe(shown) == shown  # one line, no control or bidi character raw
    assert "東京" in shown or "東京" not in json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("openai//tmp/x/gemma-3-270m-q4_k_m.gguf", "gemma-3-270m-q4_k_m"),
        ("/models/Llama-3.1-8B-Instruct/", "Llama-3.1-8B-Instruct"),
        ("openai/~/models/phi-3.Q4_0.gguf", "phi-3.Q4_0"),
        ("openai/C:\\models\\mistral.gguf", "mistral"),
        ("openai/models/qwen.safetensors", "qwen"),
        ("openai/gpt-5-mini", "openai/gpt-5-mini"),
        ("openai/meta-llama/Llama-3.1-8B", "openai/meta-llama/Llama-3.1-8B"),
        ("ollama_chat/qwen2.5:7b", "ollama_chat/qwen2.5:7b"),
        ("openai//", "openai//"),
    ],
)
def test_a_model_named_by_its_path_reads_as_its_file_name(model: str, shown: str) -> None:
    assert fmt.model_name(model) == shown
    assert fmt.model_and_id(model) == (model if shown == model else f"{shown} ({model})")


@pytest.mark.parametrize(
    ("level", "shown"),
    [
        ("wasm+wasmtime51.0.0", "WebAssembly sandbox (wasm+wasmtime51.0.0)"),
        ("landlock+netns+pidns", "kernel sandbox (landlock+netns+pidns)"),
        ("sandbox-exec", "kernel sandbox (sandbox-exec)"),
        ("process-only", "no sandbox, a process of its own (process-only)"),
        ("", ""),
    ],
)
def test_a_sandbox_level_reads_as_the_sandbox_it_names(level: str, shown: str) -> None:
    assert fmt.sandbox_name(level) == shown
    headed = shown.replace("WebAssembly sandbox", "WebAssembly").replace("kernel sandbox", "kernel")
    assert fmt.sandbox_name(level, noun=False) == headed.replace("no sandbox,", "none,")
