"""User prices: parsed from `model = input, output` lines and applied to a real run's cost."""

from __future__ import annotations

import pytest

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.pricing import PriceBook, parse_prices
from tests.engine.scripting import QUERY, make_run, repl, run_to_end, scripted
from tests.scripted_server import ScriptedServer


def test_prices_are_read_per_million_tokens() -> None:
    text = "# mine\nopenai/a = 2, 8\n\nollama_chat/b=0,0  # local\n"
    assert parse_prices(text) == {"openai/a": (2e-6, 8e-6), "ollama_chat/b": (0.0, 0.0)}


@pytest.mark.parametrize(
    "line",
    [
        "openai/a = 2",
        "= 1, 2",
        "openai/a = x, 2",
        "openai/a = -1, 2",
        "openai/a = nan, 1",
        "openai/a = 1, inf",
    ],
)
def test_a_bad_price_line_is_refused_with_its_number(line: str) -> None:
    with pytest.raises(ConfigError, match="prices line 2 .*dollars"):
        parse_prices("openai/ok = 1, 1\n" + line)


def test_a_user_price_prices_an_unknown_model() -> None:
    book = PriceBook(parse_prices("openai/test-model = 1, 2"))
    assert book.info("openai/test-model").cost(1_000_000, 500_000) == pytest.approx(2.0)
    assert PriceBook().info("openai/test-model").priced is False


async def test_a_run_with_a_user_price_reports_its_cost(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('done')")]}))
    run = make_run(scripted_server, prices=parse_prices("openai/test-model = 1000, 2000"))
    result, _ = await run_to_end(run)
    assert result.status == "completed"
    assert not result.unpriced
    expected = result.input_tokens * 1e-3 + result.output_tokens * 2e-3
    assert result.cost_usd == pytest.approx(expected)
