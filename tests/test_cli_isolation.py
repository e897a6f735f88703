"""The subprocess helper cuts our processes off from the developer's keys, keyring and data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_python

SCRIPT = """
import json, os
import keyring
from rlm_desktop import paths
from rlm_desktop.providers import keys

print(json.dumps({
    "home": str(paths.data_dir()),
    "keyring": type(keyring.get_keyring()).__module__,
    "stored": keys.stored_key("openai"),
    "keys": {name: keys.get_key(name) for name in ("openai", "anthropic", "acme")},
    "variables": sorted(name for name in os.environ if name.endswith("_API_KEY")),
    "given": os.environ.get("MY_SERVICE_TOKEN"),
    "xdg": [os.environ["XDG_DATA_HOME"], os.environ["XDG_CONFIG_HOME"]],
}))
"""


def test_a_child_sees_no_keys_no_keyring_and_only_the_tests_data_folder(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ACME_API_KEY"):
        monkeypatch.setenv(name, "sk-developer-own-key-1234")
    monkeypatch.setenv("XDG_DATA_HOME", "/nonexistent/developer/data")
    done = run_python("-c", SCRIPT, home=isolated_home, env={"MY_SERVICE_TOKEN": "given"})

    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["home"] == str(isolated_home)
    assert seen["keyring"] == "keyring.backends.fail"
    assert seen["stored"] is None
    assert seen["keys"] == {"openai": None, "anthropic": None, "acme": None}
    assert seen["variables"] == []
    assert seen["given"] == "given"
    assert all(Path(folder).is_relative_to(isolated_home) for folder in seen["xdg"])
