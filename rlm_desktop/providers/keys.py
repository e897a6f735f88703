"""API keys: kept in the operating system's keyring, never written to a file by us.

Lookup order for a provider: a key kept for this session only (in memory), then the keyring, then
the provider's environment variable. When no keyring works, `set_key` raises `KeyringUnavailable`
and the caller may keep the key for the session instead (`set_key(..., session_only=True)`); there
is no silent fallback to a plain-text file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from rlm_desktop.providers.registry import provider

SERVICE = "rlm-desktop"


class KeyringUnavailable(RuntimeError):
    """No working keyring backend: the key cannot be stored persistently."""


_session_keys: dict[str, str] = {}
_keys_read: set[str] = set()
"""Keys this process has read from the keyring, so what it logs can be scrubbed of them."""


def _keyring_backend() -> object | None:
    """The active keyring backend, or None when only the failing backend is available."""
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return None
    return backend


def keyring_available() -> bool:
    """True when keys can be stored in a real keyring."""
    try:
        return _keyring_backend() is not None
    except Exception:
        return False


def backend_description() -> str:
    """A one-line description of where keys are stored, for the settings page and the CLI."""
    try:
        backend = _keyring_backend()
    except Exception as exc:
        return f"no working keyring ({type(exc).__name__}: {exc})"
    if backend is None:
        return "no working keyring (keyring.backends.fail.Keyring)"
    cls = type(backend)
    name = getattr(backend, "name", None) or cls.__name__
    return f"{name} ({cls.__module__}.{cls.__qualname__})"


def stored_key(name: str) -> str | None:
    """The key kept for `name` in this session or in the keyring (not the environment)."""
    if name in _session_keys:
        return _session_keys[name]
    try:
        import keyring

        key = keyring.get_password(SERVICE, name) or None
    except Exception:
        return None
    if key:
        _keys_read.add(key)
    return key


def keys_in_memory() -> list[str]:
    """Every key this process holds: kept for the session or read from the keyring (what a
    crash report must be scrubbed of; the environment's are `redact.environment_secrets`)."""
    return [*_session_keys.values(), *_keys_read]


def key_source(name: str) -> str | None:
    """Where `get_key(name)` would find the key: "session", "keyring", the env var, or None."""
    if name in _session_keys:
        return "session"
    if stored_key(name):
        return "keyring"
    env_var = provider(name).env_var
    if env_var and os.environ.get(env_var):
        return env_var
    return None


def get_key(name: str) -> str | None:
    """The API key for provider `name`: session store, then keyring, then the env variable."""
    key = stored_key(name)
    if key:
        return key
    env_var = provider(name).env_var
    return (os.environ.get(env_var) or None) if env_var else None


def any_key(names: Iterable[str]) -> bool:
    """True when one of the providers `names` that needs a key has one.

    The environment and this session's keys are read first; the keyring is asked only when they
    find nothing, since a keyring service can be slow to answer (at start-up, say).
    """
    needing = [n for n in dict.fromkeys(names) if provider(n).needs_key]
    for name in needing:
        env_var = provider(name).env_var
        if name in _session_keys or (env_var and os.environ.get(env_var)):
            return True
    return any(stored_key(name) for name in needing)


def set_key(name: str, key: str, *, session_only: bool = False) -> None:
    """Keep `key` for provider `name` in the keyring (or in memory with `session_only`)."""
    key = key.strip()
    if not key:
        raise ValueError("the key is empty: paste the provider's API key")
    if session_only:
        _session_keys[name] = key
        return
    import keyring
    from keyring.errors import KeyringError

    if _keyring_backend() is None:
        raise KeyringUnavailable(
            "no working keyring: install or unlock one (GNOME Keyring or KWallet on Linux; "
            "the Keychain and Credential Manager come with macOS and Windows), "
            "or keep the key for this session only"
        )
    try:
        keyring.set_password(SERVICE, name, key)
    except KeyringError as exc:
        raise KeyringUnavailable(f"the keyring refused the key: {exc}") from exc
    _session_keys.pop(name, None)


def delete_key(name: str) -> None:
    """Forget the key for `name` in this session and in the keyring (a missing key is fine)."""
    _session_keys.pop(name, None)
    try:
        import keyring

        keyring.delete_password(SERVICE, name)
    except Exception:
        return


def clear_session_keys() -> None:
    """Forget every key kept in memory for this session."""
    _session_keys.clear()
