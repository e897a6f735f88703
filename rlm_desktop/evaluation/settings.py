"""A setting under evaluation: root model, sub-model, mode, depth, profile and sandbox, written
as `NAME:key=value,key=value` (the name is optional; one is made from the values)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, get_args

from rlm_desktop.engine.config import (
    DEFAULT_MODEL,
    SANDBOX_CHOICES,
    ConfigError,
    Mode,
    SandboxChoice,
)

KEYS = {
    "model": "model",
    "sub_model": "sub_model",
    "sub-model": "sub_model",
    "mode": "mode",
    "depth": "depth",
    "max_depth": "depth",
    "profile": "profile",
    "auto_max_tokens": "auto_max_tokens",
    "max_turns": "max_turns",
    "sandbox": "sandbox",
}
FORMAT = (
    "NAME:model=M,sub_model=M,mode=rlm|direct|auto,depth=N,profile=P,max_turns=N,"
    "sandbox=auto|kernel|wasm"
)


@dataclass(frozen=True)
class Setting:
    """One way of running the engine that the evaluation measures."""

    name: str
    model: str = DEFAULT_MODEL
    sub_model: str | None = None
    mode: Mode = "rlm"
    depth: int = 2
    profile: str | None = None
    auto_max_tokens: int | None = None
    """`auto` mode's direct-call threshold (RunConfig.auto_direct_max_tokens); None: the default."""
    max_turns: int | None = None
    sandbox: SandboxChoice = "auto"
    """Where model code runs (RunConfig.sandbox)."""

    def model_choices(self) -> dict[str, Any]:
        """The `RunChoices` this setting makes as they are: its models, mode, profile and
        sandbox."""
        chosen = ("model", "sub_model", "mode", "profile", "sandbox")
        return {choice: getattr(self, choice) for choice in chosen}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record, read back by `from_json`."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Setting:
        """The setting `to_json` recorded."""
        return cls(**data)


def parse_setting(text: str) -> Setting:
    """A setting from `NAME:key=value,...` or `key=value,...`; `ConfigError` says what is wrong."""
    name, colon, body = text.partition(":")
    if not colon or "=" in name:
        name, body = "", text
    values: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, equals, value = (s.strip() for s in part.partition("="))
        field = KEYS.get(key)
        if not equals or field is None or not value:
            raise ConfigError(f"{text!r}: {part!r} is not understood; write {FORMAT}", "setting")
        values[field] = value
    if values.get("mode", "rlm") not in get_args(Mode):
        raise ConfigError(f"{text!r}: mode must be rlm, direct or auto", "setting")
    if values.get("sandbox", "auto") not in SANDBOX_CHOICES:
        raise ConfigError(f"{text!r}: sandbox must be auto, kernel or wasm", "setting")
    for field in ("depth", "auto_max_tokens", "max_turns"):
        if field in values:
            try:
                values[field] = int(values[field])
            except ValueError:
                raise ConfigError(f"{text!r}: {field} must be a whole number", "setting") from None
            if values[field] < 1:
                raise ConfigError(f"{text!r}: {field} must be at least 1", "setting")
    setting = Setting(name=name.strip() or "?", **values)
    return setting if name.strip() else _named(setting)


def _named(setting: Setting) -> Setting:
    parts = [setting.model.rsplit("/", 1)[-1], setting.mode]
    if setting.mode != "direct":
        parts.append(f"d{setting.depth}")
    if setting.sub_model:
        parts.append(f"sub={setting.sub_model.rsplit('/', 1)[-1]}")
    if setting.profile:
        parts.append(setting.profile)
    if setting.sandbox != "auto":
        parts.append(setting.sandbox)
    return Setting(**{**setting.to_json(), "name": "/".join(parts)})


def unique_names(settings: list[Setting]) -> None:
    """Raise `ConfigError` when two settings share a name (their results would mix)."""
    names = [s.name for s in settings]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(
                f"{name!r} is given twice: name each setting (NAME:key=value,...)", "setting"
            )
