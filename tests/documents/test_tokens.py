"""Token counts: exact with the model's own bundled encoding, estimates flagged, no download."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rlm_desktop.documents import LoadOptions, count_tokens, load_paths
from rlm_desktop.documents.token_counts import TokenTally, tokenizer_for
from tests.cli import run_python
from tests.qt_free import run_without

# Tokenisations that differ between OpenAI's two current encodings.
SAMPLE = "Die Größe der Übersetzung ist schön; 12345678 tokens? ünïcödé 🙂 " * 20


def test_openai_models_are_counted_exactly_with_their_own_encoding() -> None:
    new, new_estimated = count_tokens(SAMPLE, "openai/gpt-5-mini")
    old, old_estimated = count_tokens(SAMPLE, "gpt-4")
    assert not new_estimated
    assert not old_estimated
    assert new != old  # o200k_base and cl100k_base really were used, not one count for both
    assert tokenizer_for("openai/gpt-5-mini")[0].name == "o200k_base"  # type: ignore[union-attr]
    assert tokenizer_for("azure/gpt-4")[0].name == "cl100k_base"  # type: ignore[union-attr]


def test_known_short_counts() -> None:
    assert count_tokens("hello world", "openai/gpt-4o") == (2, False)
    assert count_tokens("", "openai/gpt-4o") == (0, False)


def test_models_without_a_bundled_tokenizer_are_estimates() -> None:
    count, estimated = count_tokens("hello world, how are you?", "anthropic/claude-sonnet-4-5")
    assert estimated
    assert count == count_tokens("hello world, how are you?", "gpt-4")[0]


def test_huge_text_is_sampled_and_close_to_exact() -> None:
    lines = [
        f"{i:06d} INFO service-{i % 7} handled request in {i % 97} ms path=/v1/items/{i}"
        for i in range(40_000)
    ]
    text = "\n".join(lines)
    assert len(text) > 1_000_000
    estimate, estimated = count_tokens(text, "openai/gpt-5-mini")
    exact, _ = TokenTally("openai/gpt-5-mini", len(text)).count(text, "text")
    assert estimated
    assert abs(estimate - exact) / exact < 0.05


def test_load_flags_estimates_once_the_exact_budget_is_spent(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"part{i}.txt").write_text(
            f"chapter {i}: " + "words and more words " * 2000, encoding="utf-8"
        )
    exact = load_paths([tmp_path], LoadOptions(exact_token_chars=10**9))
    budgeted = load_paths([tmp_path], LoadOptions(exact_token_chars=100_000))
    assert not exact.totals.estimated
    assert budgeted.totals.estimated
    assert [d.tokens_estimated for d in budgeted.documents][:2] == [False, False]
    assert budgeted.documents[-1].tokens_estimated
    assert abs(budgeted.totals.tokens - exact.totals.tokens) / exact.totals.tokens < 0.05
    assert budgeted.summary().endswith(f"~{budgeted.totals.tokens:,} tokens")


def test_counting_needs_no_network_and_no_litellm_import(isolated_home: Path) -> None:
    script = textwrap.dedent("""
        import socket, sys
        def refuse(*args, **kwargs):
            raise OSError("network is off in this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from rlm_desktop.documents import count_tokens
        assert count_tokens("hello world", "openai/gpt-5-mini") == (2, False)
        assert "litellm" not in sys.modules
        print("ok")
    """)
    done = run_python("-c", script, home=isolated_home, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_without_litellm_installed_counts_fall_back_to_a_flagged_estimate(
    isolated_home: Path,
) -> None:
    script = """
        from rlm_desktop.documents import count_tokens
        print(count_tokens("x" * 10, "openai/gpt-5-mini"))
    """
    done = run_without(script, ["litellm"], home=isolated_home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(3, True)"
