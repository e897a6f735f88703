"""`BudgetLedger`: reserve the worst case, settle to the actual usage, release on failure."""

from __future__ import annotations

import time

import pytest

from rlm_desktop.engine.config import Budget
from rlm_desktop.engine.ledger import BudgetExceededError, BudgetLedger, LedgerTotals
from rlm_desktop.engine.pricing import ModelInfo

PRICED = ModelInfo("priced", 1e-6, 2e-6, 128_000, 8_192)
UNPRICED = ModelInfo("unpriced", None, None, 128_000, 8_192)


def test_reserve_holds_tokens_and_priced_worst_case() -> None:
    ledger = BudgetLedger(Budget())
    first = ledger.reserve(PRICED, 1_000, 500)
    second = ledger.reserve(PRICED, 200, 100)
    assert (first.tokens, second.tokens) == (1_500, 300)
    assert first.cost_usd == pytest.approx(1_000 * 1e-6 + 500 * 2e-6)
    assert ledger.reserved_tokens == 1_800
    assert ledger.reserved_cost_usd == pytest.approx(first.cost_usd + second.cost_usd)
    totals = ledger.totals()
    assert (totals.in_flight, totals.input_tokens, totals.output_tokens) == (2, 0, 0)
    assert totals.cost_usd == pytest.approx(ledger.reserved_cost_usd)


def test_settle_replaces_the_reservation_with_actual_usage() -> None:
    ledger = BudgetLedger(Budget())
    reservation = ledger.reserve(PRICED, 1_000, 500)
    ledger.settle(reservation, 900, 120, PRICED.cost(900, 120))
    assert ledger.reserved_tokens == 0
    assert ledger.reserved_cost_usd == 0
    assert (ledger.input_tokens, ledger.output_tokens) == (900, 120)
    assert ledger.spent_cost_usd == pytest.approx(900 * 1e-6 + 120 * 2e-6)
    assert ledger.totals() == LedgerTotals(ledger.spent_cost_usd, 900, 120, 0, 0, 0)


def test_release_gives_the_reservation_back_once() -> None:
    changes: list[LedgerTotals] = []
    ledger = BudgetLedger(Budget(), changes.append)
    reservation = ledger.reserve(PRICED, 1_000, 500)
    ledger.release(reservation)
    ledger.release(reservation)
    assert (ledger.reserved_tokens, ledger.input_tokens, ledger.spent_cost_usd) == (0, 0, 0.0)
    assert [c.in_flight for c in changes] == [1, 0]


def test_token_cap_admits_an_exact_fit_and_refuses_one_token_more() -> None:
    ledger = BudgetLedger(Budget(max_tokens=1_000))
    ledger.reserve(PRICED, 300, 300)
    ledger.reserve(PRICED, 200, 200)
    with pytest.raises(BudgetExceededError) as refused:
        ledger.reserve(PRICED, 1, 0)
    assert refused.value.limit == "max_tokens"
    assert "cap 1,000" in refused.value.detail
    assert ledger.reserved_tokens == 1_000


def test_settling_below_the_reservation_makes_room_again() -> None:
    ledger = BudgetLedger(Budget(max_tokens=1_000))
    big = ledger.reserve(PRICED, 100, 800)
    with pytest.raises(BudgetExceededError):
        ledger.reserve(PRICED, 100, 200)
    ledger.settle(big, 100, 50, None)
    ledger.reserve(PRICED, 100, 200)
    assert ledger.input_tokens + ledger.output_tokens + ledger.reserved_tokens == 450


def test_cost_cap_counts_spent_plus_reserved() -> None:
    ledger = BudgetLedger(Budget(max_cost_usd=0.01))
    spent = ledger.reserve(PRICED, 1_000, 1_000)  # $0.003 worst case
    ledger.settle(spent, 1_000, 1_000, PRICED.cost(1_000, 1_000))
    ledger.reserve(PRICED, 1_000, 2_000)  # $0.005 held: $0.008 in all
    with pytest.raises(BudgetExceededError) as refused:
        ledger.reserve(PRICED, 1_000, 1_000)  # $0.003 more would make $0.011
    assert refused.value.limit == "max_cost_usd"
    assert ledger.totals().cost_usd == pytest.approx(0.008)


def test_unpriced_calls_are_counted_without_a_dollar_cap() -> None:
    ledger = BudgetLedger(Budget(max_tokens=1_000_000))
    reservation = ledger.reserve(UNPRICED, 10_000, 10_000)
    assert reservation.cost_usd == 0.0
    ledger.settle(reservation, 10_000, 5_000, UNPRICED.cost(10_000, 5_000))
    assert (ledger.unpriced_calls, ledger.spent_cost_usd) == (1, 0.0)
    assert ledger.output_tokens == 5_000


def test_a_dollar_cap_refuses_a_model_without_a_price() -> None:
    ledger = BudgetLedger(Budget(max_cost_usd=100.0))
    with pytest.raises(BudgetExceededError) as refused:
        ledger.reserve(UNPRICED, 10, 10)
    assert refused.value.limit == "max_cost_usd"
    assert "unpriced has no price" in refused.value.detail
    assert "prices" in refused.value.detail
    assert (ledger.refused_calls, ledger.reserved_tokens) == (1, 0)


def test_reported_usage_above_the_estimate_makes_later_calls_hold_more() -> None:
    ledger = BudgetLedger(Budget())
    probe = ledger.reserve(PRICED, 1_000, 500)
    assert (probe.input_tokens, probe.output_tokens) == (1_000, 500)
    ledger.settle(probe, 3_000, 400, PRICED.cost(3_000, 400))
    later = ledger.reserve(PRICED, 2_000, 500)
    assert (later.input_tokens, later.output_tokens) == (6_000, 500)
    assert later.cost_usd == pytest.approx(PRICED.cost(6_000, 500))


def test_usage_below_the_estimate_never_lowers_the_hold_under_the_estimate() -> None:
    ledger = BudgetLedger(Budget())
    ledger.settle(ledger.reserve(PRICED, 1_000, 500), 200, 10, PRICED.cost(200, 10))
    assert ledger.reserve(PRICED, 1_000, 500).tokens == 1_500


def test_calls_reserved_after_a_reply_with_counts_above_the_estimate_hold_more() -> None:
    """Calls in flight keep their hold (they never settle above it: reply_acceptance); the ones
    reserved after the reply hold the ratio it showed."""
    ledger = BudgetLedger(Budget(max_tokens=19_999))
    first = ledger.reserve(PRICED, 1_000, 1_000)
    ledger.reserve(PRICED, 1_000, 1_000)
    ledger.settle(first, 4_000, 1_000, PRICED.cost(4_000, 1_000))
    assert ledger.reserved_tokens == 2_000
    assert ledger.reserve(PRICED, 1_000, 1_000).tokens == 4_000 + 1_000
    assert ledger.reserve(PRICED, 1_000, 1_000).tokens == 5_000
    with pytest.raises(BudgetExceededError) as refused:
        ledger.reserve(PRICED, 1_000, 1_000)  # 5,000 spent + 12,000 held + 5,000 more
    assert refused.value.limit == "max_tokens"


def test_a_cancelled_call_is_charged_what_it_held() -> None:
    ledger = BudgetLedger(Budget())
    reservation = ledger.reserve(PRICED, 1_000, 500)
    ledger.charge(reservation)
    ledger.charge(reservation)
    assert (ledger.input_tokens, ledger.output_tokens, ledger.reserved_tokens) == (1_000, 500, 0)
    assert ledger.spent_cost_usd == pytest.approx(PRICED.cost(1_000, 500))


def test_refusals_are_counted_by_cap() -> None:
    ledger = BudgetLedger(Budget(max_sub_calls=1, max_tokens=100))
    ledger.claim_sub_call()
    for _ in range(2):
        with pytest.raises(BudgetExceededError):
            ledger.claim_sub_call()
    with pytest.raises(BudgetExceededError):
        ledger.reserve(PRICED, 100, 100)
    assert ledger.refusals == {"max_sub_calls": 2, "max_tokens": 1}
    assert ledger.refused_calls == 3


def test_many_reservations_never_pass_the_cap() -> None:
    ledger = BudgetLedger(Budget(max_tokens=100_000, max_cost_usd=0.5))
    granted = 0
    for _ in range(500):
        try:
            ledger.reserve(PRICED, 700, 4_096)
        except BudgetExceededError:
            continue
        granted += 1
    assert granted == 100_000 // 4_796
    assert ledger.reserved_tokens <= 100_000
    assert ledger.reserved_cost_usd <= 0.5


@pytest.mark.parametrize(("cap", "allowed"), [(None, 25), (3, 3), (0, 0)])
def test_sub_call_cap(cap: int | None, allowed: int) -> None:
    ledger = BudgetLedger(Budget(max_sub_calls=cap))
    refusals = []
    for _ in range(25):
        try:
            ledger.claim_sub_call()
        except BudgetExceededError as error:
            refusals.append(error.limit)
    assert ledger.sub_calls == allowed
    assert refusals == ["max_sub_calls"] * (25 - allowed)


def test_wall_clock_budget_refuses_new_calls_once_spent() -> None:
    ledger = BudgetLedger(Budget(timeout_s=0.05))
    ledger.reserve(PRICED, 10, 10)
    time.sleep(0.08)
    with pytest.raises(BudgetExceededError) as refused:
        ledger.reserve(PRICED, 10, 10)
    assert refused.value.limit == "timeout_s"
