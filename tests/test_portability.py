"""The switch that forces the portable paths (`RLM_DESKTOP_PORTABLE`): read at each choice, so a
test, or a process the app starts, can turn it on; only an empty value or `0` leaves it off."""

from __future__ import annotations

import os

import pytest

from rlm_desktop import portability


@pytest.mark.parametrize(
    ("value", "forced"), [(None, False), ("", False), ("0", False), ("1", True), ("yes", True)]
)
def test_the_switch_forces_the_portable_path_where_the_posix_one_exists(
    monkeypatch: pytest.MonkeyPatch, value: str | None, forced: bool
) -> None:
    if value is None:
        monkeypatch.delenv(portability.PORTABLE_ENV, raising=False)
    else:
        monkeypatch.setenv(portability.PORTABLE_ENV, value)

    assert portability.forced() is forced
    assert portability.has(os, "getpid") is not forced  # a facility every system has
    assert portability.has(os, "no_such_call") is False  # and one none has
